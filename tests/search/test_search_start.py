"""`algorithm.start_from`: generation 0 opens with the genomes of the study's base and baselines,
where the genes can hold their values; the rest of generation 0 is the random sample as before."""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import pytest

from conftest import kill_and_resume, run_quiet, write_study
from paretosched.errors import UserError
from paretosched.search.optimise import optimise
from paretosched.search.genes import BoolGene, ChoiceGene, FloatGene, IntGene
from paretosched.search.runlog import read_evaluations
from paretosched.search.space import SearchSpace
from paretosched.search.study import load_study


def test_each_gene_encodes_what_it_decodes_and_refuses_what_it_cannot_hold() -> None:
    f = FloatGene(type="float", low=0.5, high=1.0)
    assert f.decode(f.encode(0.75)) == 0.75
    assert f.encode(1.2) is None and f.encode("x") is None and f.encode(True) is None
    # a log scale gives round values back an ulp away: no float logarithm decodes to 100 exactly
    lg = FloatGene(type="float", low=0.0001, high=100000.0, log=True)
    for v in (3.0, 100.0, 3600.0, 0.001, 100000.0):
        assert math.isclose(lg.decode(lg.encode(v)), v, rel_tol=1e-14), v
    i = IntGene(type="int", low=0, high=10)
    assert i.decode(i.encode(7)) == 7 and i.encode(11) is None and i.encode(2.5) is None
    assert i.decode(i.encode(6.0)) == 6  # a float config field holds 6.0
    li = IntGene(type="int", low=1, high=1000, log=True)
    assert li.decode(li.encode(100)) == 100
    b = BoolGene(type="bool", values=["none", "easy"])
    assert b.decode(b.encode("easy")) == "easy" and b.decode(b.encode("none")) == "none"
    assert b.encode("conservative") is None
    c = ChoiceGene(type="choice", values=[None, 60, 600])
    assert c.decode(c.encode(None)) is None and c.decode(c.encode(600)) == 600 and c.encode(300) is None


def _first_genomes(run: Path, n: int) -> list[dict]:
    return [r.genome for r in read_evaluations(run) if r.kind == "search"][:n]


def test_generation_0_opens_with_the_base_and_the_baselines_that_fit(study_dir: Path) -> None:
    base = {"platform": "homogeneous-4", "workload": {"jobs": [{"run_s": 10.0}]},
            "scheduler": {"freq": 0.8, "power_off_idle_s": 1.0, "min_nodes_on": 2, "job_policy": "shortest",
                          "backfilling": "easy"}}
    baselines = {"fcfs": {"scheduler": {"job_policy": "first", "backfilling": "none"}},
                 "too_slow": {"scheduler": {"freq": 0.05}}}  # below the freq gene's range: not a genome
    kw = dict(base=base, baselines=baselines, budget={"generations": 1})
    started = run_quiet(write_study(study_dir, name="s.yaml", algorithm={"pop_size": 20, "start_from": ["base", "baselines"]},
                                    **kw), study_dir / "started")
    plain = run_quiet(write_study(study_dir, name="p.yaml", **kw), study_dir / "plain")
    first = _first_genomes(started, 20)
    assert first[0] == {"scheduler.freq": 0.8, "scheduler.power_off_idle_s": 1.0,  # exp(log(1)) == 1
                        "scheduler.min_nodes_on": 2, "scheduler.job_policy": "shortest", "scheduler.backfilling": "easy"}
    rows = [r for r in read_evaluations(started)]
    assert rows[0].kind == "baseline" and rows[0].name == "fcfs"
    assert rows[3].config == rows[0].config and all(s.cached for s in rows[3].per_seed)  # fcfs's: the baseline's simulation
    assert first[1]["scheduler.job_policy"] == "first" and first[1]["scheduler.backfilling"] == "none"
    assert first[1]["scheduler.freq"] == 0.8  # the rest of the baseline is the base's
    assert all(g["scheduler.freq"] != 0.05 for g in first)
    # the rest of generation 0 is the same random sample as without start_from
    assert first[2:] == _first_genomes(plain, 20)[2:]


def test_start_from_is_validated(study_dir: Path) -> None:
    with pytest.raises(UserError, match=r"algorithm.start_from.0"):
        load_study(write_study(study_dir, algorithm={"pop_size": 20, "start_from": ["best"]}))
    with pytest.raises(UserError, match=r"algorithm.start_from: .*once each"):
        load_study(write_study(study_dir, algorithm={"pop_size": 20, "start_from": ["base", "base"]}))


def test_configs_the_genes_cannot_make_are_left_out_and_said(study_dir: Path) -> None:
    base = {"platform": "homogeneous-4", "workload": {"jobs": [{"run_s": 10.0}]},
            "scheduler": {"freq": 0.8, "power_off_idle_s": 100.0, "min_nodes_on": 2}}
    baselines = {"slow": {"scheduler": {"freq": 0.05}}, "other_model": {"model": {"interference": "none"}}}
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run = optimise(str(write_study(study_dir, base=base, baselines=baselines, budget={"generations": 1},
                                       algorithm={"pop_size": 4, "start_from": ["base", "baselines"]})),
                       out=str(study_dir / "run"), quiet=True)
    said = err.getvalue()
    assert "baseline 'slow' left out of generation 0: scheduler.freq = 0.05 is outside the gene" in said
    assert "baseline 'other_model' left out of generation 0: it differs from the base outside the genes" in said
    assert _first_genomes(run, 1)[0]["scheduler.freq"] == 0.8


def test_a_base_outside_the_genes_gives_no_starting_genome(study_dir: Path) -> None:
    study = load_study(write_study(study_dir, base={"platform": "homogeneous-4", "workload": {"jobs": [{"run_s": 10.0}]},
                                                   "scheduler": {"power_off_idle_s": 1.0, "backfilling": "conservative"}}))
    assert SearchSpace(study).encode(study.base) == (None, "scheduler.backfilling = 'conservative' is outside the gene")


def test_a_run_started_from_the_base_killed_in_generation_0_resumes_exactly(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"platform": "homogeneous-4", "workload": {"jobs": [{"run_s": 10.0}]},
            "scheduler": {"freq": 0.8, "power_off_idle_s": 100.0, "job_policy": "shortest"}}  # genes can hold it
    kw = dict(base=base, baselines={"fcfs": {"scheduler": {"job_policy": "first"}}}, budget={"generations": 2},
              algorithm={"pop_size": 10, "start_from": ["base", "baselines"]},
              evaluator="conftest:evaluate_then_interrupt", cache=False)
    cut, _ = kill_and_resume(tmp_path, monkeypatch, 6, **kw)
    assert [r.genome["scheduler.job_policy"] for r in read_evaluations(cut) if r.kind == "search"][:2] == ["shortest", "first"]


def test_more_starting_configs_than_a_population_are_cut_and_said(study_dir: Path) -> None:
    base = {"platform": "homogeneous-4", "workload": {"jobs": [{"run_s": 10.0}]},
            "scheduler": {"freq": 0.8, "power_off_idle_s": 1.0, "min_nodes_on": 2}}
    policies = ["random", "first", "shortest", "smallest", "low_mem"]
    baselines = {p: {"scheduler": {"job_policy": p}} for p in policies}
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run = optimise(str(write_study(study_dir, base=base, baselines=baselines, budget={"generations": 1},
                                       algorithm={"pop_size": 4, "start_from": ["baselines"]})),
                       out=str(study_dir / "run"), quiet=True)
    assert "start_from: 5 configs, a population of 4: generation 0 holds the first 4, and no random genome" in err.getvalue()
    assert [g["scheduler.job_policy"] for g in _first_genomes(run, 10)] == policies[:4]
