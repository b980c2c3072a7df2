"""A job started in one pass per part (`starting._start_now`) is started exactly as by `start` then
`_begin`: the same schedule, the same energy, to the last bit."""

from __future__ import annotations

import pytest

from paretosched.config import config_from_dict
from paretosched.sim.engine import starting
from paretosched.sim.run import simulate


@pytest.mark.parametrize("progress", ["lockstep", "independent"])
@pytest.mark.parametrize("interference,policies", [("thesis", ("shortest", "high_mem_bw")),
                                                   ("proportional", ("first", "high_gflops")),
                                                   ("none", ("smallest", "random"))])
def test_one_pass_start_is_the_two_pass_start(progress, interference, policies, monkeypatch):
    jp, rp = policies
    cfg = config_from_dict({"platform": "gaia-mini", "seed": 5,
                            "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": 400},
                            "model": {"interference": interference, "progress": progress},
                            "scheduler": {"job_policy": jp, "resource_policy": rp, "backfilling": "easy"}})
    one = simulate(cfg, record_jobs=True)
    monkeypatch.setattr(starting, "ONE_PASS", False)
    two = simulate(cfg, record_jobs=True)
    assert one.jobs == two.jobs  # start, end, cores and energy of every job
    assert one.metrics["energy_j"].hex() == two.metrics["energy_j"].hex()
    assert one.energy_unattributed_j.hex() == two.energy_unattributed_j.hex()
    assert one.metrics == two.metrics
