"""(found by review) A job given cores on a node that is already BOOTING (its boot begun by an earlier job,
with or without a ResumeRate deferral) is timed by its own event at `now + (ready_at - now)`, which can
round one ulp before the node's boot-complete event (`ready_at` summed when the boot began). The job
then begins on a booting node, and `_booted` overwrites its processor's busy power with idle power: the
energy of the whole run is wrong by (busy - idle) W x the job's run time. The same class as the
deferred-start case fixed in 4ae2211, on the path it left (`elif booting:` in Starting.start)."""
from __future__ import annotations

import pytest

from tests.slurm.test_slurm_kind import _j, _platform, _run

A = 34.90107079822981          # job 2: powers up the node (boot 300 s), up at A + 300
C_ROUNDS = 61.87814067158561   # job 3 joins the booting node: C + ((A + 300) - C) < A + 300
C_EXACT = 61.878140671585      # the same but no rounding


def _one_node_two_procs(boot_s: float) -> dict:
    plat = _platform(1, boot_s=boot_s)
    plat["node_types"]["slow"]["processors"]["s"] = 2  # two single-core processors
    return plat


def _case(c: float, rate: int):
    jobs = [_j(1, 0, 1, 1), _j(2, A, 1, 500), _j(3, c, 1, 50)]
    return _run(_one_node_two_procs(300), jobs, suspend_time_s=5, resume_rate=rate, resume_timeout_s=400,
                suspend_timeout_s=0, scheduler_type="builtin")


@pytest.mark.parametrize("rate", [0, 1])
def test_a_job_joining_a_booting_node_does_not_begin_before_the_node_is_up(rate):
    assert C_ROUNDS + ((A + 300.0) - C_ROUNDS) < A + 300.0  # the rounding this case is about
    got, _, twin = _case(C_ROUNDS, rate)
    assert got[3].start >= twin.nodes[0].ready_at


@pytest.mark.parametrize("rate", [0, 1])
def test_the_energy_does_not_depend_on_a_rounding_of_the_joiners_begin(rate):
    _, _, t_round = _case(C_ROUNDS, rate)
    _, _, t_exact = _case(C_EXACT, rate)
    # the same schedule up to an ulp; before the fix 112,655 J vs 117,405 J (50 s x 95 W lost)
    assert t_round.energy == pytest.approx(t_exact.energy, abs=1e-6)


def test_the_classic_kind_too():
    # not slurm-specific: the shared twin (`power_off_idle_s`); 112,655 J vs 117,405 J before the fix
    from paretosched.config import config_from_dict
    from paretosched.sim.run import simulate
    out = []
    for c in (C_ROUNDS, C_EXACT):
        jobs = [_j(1, 0, 1, 1), _j(2, A, 1, 500), _j(3, c, 1, 50)]
        cfg = config_from_dict({"platform": _one_node_two_procs(300), "workload": {"jobs": jobs},
                                "scheduler": {"job_policy": "first", "resource_policy": "high_gflops",
                                              "backfilling": "easy", "power_off_idle_s": 5}})
        out.append(simulate(cfg).metrics["energy_j"])
    assert out[0] == pytest.approx(out[1], abs=1e-6)
