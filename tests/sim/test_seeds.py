"""sim/seeds.py: numpy's SeedSequence and PCG64 draws in plain Python, bit for bit."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.config import config_from_dict, load_config
from paretosched.sim.engine.twin import make_rng
from paretosched.sim.readers.workload import build_jobs, raw_from_inline
from paretosched.sim.run import prepare, simulate
from paretosched.sim.seeds import Pcg64, SeedSequence, numpy_generator

ENTROPY = st.integers(0, 2**130)
KEY = st.lists(st.integers(0, 2**40), max_size=3).map(tuple)


@settings(max_examples=150, deadline=None)
@given(ENTROPY, KEY, st.integers(1, 9))
def test_seed_sequence_is_numpys(entropy, key, n):
    ours, theirs = SeedSequence(entropy, key), np.random.SeedSequence(entropy, spawn_key=key)
    assert ours.pool == [int(w) for w in theirs.pool]
    assert ours.generate_state(n) == [int(w) for w in theirs.generate_state(n)]
    assert ours.generate_state(n, "uint64") == [int(w) for w in theirs.generate_state(n, np.uint64)]
    for a, b in zip(ours.spawn(2) + ours.spawn(1), theirs.spawn(2) + theirs.spawn(1)):
        assert a.spawn_key == b.spawn_key and a.pool == [int(w) for w in b.pool]


@settings(max_examples=100, deadline=None)
@given(ENTROPY, KEY, st.integers(0, 3000), st.integers(0, 200))
def test_pcg64_draws_are_numpys(entropy, key, skip, n):
    ours = Pcg64(SeedSequence(entropy, key))
    theirs = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=key))
    assert ours.random(n) == theirs.random(n).tolist()
    ours.skip(skip)
    theirs.random(skip)
    assert ours.uniform(4.0, 24.0, n) == theirs.uniform(4.0, 24.0, n).tolist()
    assert ours.random(3) == theirs.random(3).tolist()


def test_numpy_integer_entropy_and_errors():
    assert SeedSequence(np.int64(7)).pool == SeedSequence(7).pool
    with pytest.raises(ValueError):
        SeedSequence(-1)
    with pytest.raises(TypeError):
        SeedSequence(1.5)
    assert numpy_generator(SeedSequence(3, (1,))).random(4).tolist() == Pcg64(SeedSequence(3, (1,))).random(4)
    assert make_rng(SeedSequence(5, (1,))).random() == make_rng(np.random.SeedSequence(5).spawn(2)[1]).random()


def _inline(n):
    # no bandwidth given: every job draws one; sizes vary so some are skipped too
    return [{"submit_s": 3.0 * i, "run_s": 10.0 + i, "cores": 1 + i % 5, "req_s": 20.0 + i} for i in range(n)]


def _raw(n):
    return raw_from_inline(config_from_dict({"platform": "homogeneous-16",
                                             "workload": {"jobs": _inline(n)}}).workload.jobs)


@pytest.mark.parametrize("seed", [0, 1, 2**33 + 5])
def test_trace_enrichment_same_as_numpy(seed):
    raw = _raw(40)
    ss = SeedSequence(seed).spawn(2)[0]
    ours, rep = build_jobs(raw, "trace", 2.0, Pcg64(ss), fits=lambda size, mem: size <= 4)
    theirs, rep2 = build_jobs(raw, "trace", 2.0, np.random.default_rng(ss.numpy()), fits=lambda size, mem: size <= 4)
    assert rep.as_dict() == rep2.as_dict() and rep.loaded == 32
    assert [(j.id, j.submit, j.ops, j.bw) for j in ours] == [(j.id, j.submit, j.ops, j.bw) for j in theirs]
    with pytest.raises(ValueError):
        build_jobs(raw, "hdeeprm", 2.0, Pcg64(ss))


def test_trace_simulate_does_not_import_numpy(tmp_path):
    """The point of sim/seeds.py: a `trace` run's process never loads numpy (~0.1 CPU s)."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"platform": "homogeneous-16", "workload": {"jobs": _inline(20)},
                               "scheduler": {"backfilling": "easy"}}))
    code = ("import sys; from paretosched.config import load_config; from paretosched.sim.run import simulate; "
            f"m = simulate(load_config({str(cfg)!r})).metrics; "
            "print(sorted(k for k in sys.modules if k.split('.')[0] == 'numpy'), m['makespan_s'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "[]"
    assert float(out[1]) == simulate(load_config(cfg)).metrics["makespan_s"] > 0


def test_hdeeprm_mode_still_draws_with_numpy():
    raw = _raw(30)
    cfg = config_from_dict({"platform": "homogeneous-16", "seed": 4,
                            "workload": {"jobs": _inline(30), "mode": "hdeeprm"}})
    ss = np.random.SeedSequence(4).spawn(2)[0]
    jobs, _ = build_jobs(raw, "hdeeprm", prepare(cfg).platform.ref_speed, np.random.default_rng(ss))
    res = simulate(cfg, record_jobs=True)
    assert [r["bw_gbs_per_core"] for r in res.jobs] == [j.bw for j in sorted(jobs, key=lambda j: j.seq)]
