"""The optimiser over an RL scheduler's genome: genes decode into RL config fields and run on the twin."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.search.conftest import log_json, run_quiet

JOBS = [{"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 24}, {"submit_s": 0, "cores": 1, "run_s": 5, "bw_gbs": 24},
        {"submit_s": 3, "cores": 2, "run_s": 8, "bw_gbs": 8}]

STUDY = {
    "name": "rl-genome",
    "base": {"platform": "two-socket", "workload": {"jobs": JOBS},
             "scheduler": {"kind": "rl", "agent": "reinforce", "episodes": 2, "hidden_units": 8,
                           "observation": "minimal"}},
    "search": {
        "scheduler.agent": {"type": "choice", "values": ["reinforce", "actor_critic", "tabular"]},
        "scheduler.learning_rate": {"type": "float", "low": 1e-4, "high": 1e-1, "log": True},
        "scheduler.hidden_units": {"type": "int", "low": 4, "high": 16},
        "scheduler.allow_res_high_mem_bw": {"type": "bool"},
        "scheduler.epsilon_decay": {"type": "float", "low": 0.5, "high": 0.99},
        "scheduler.freq": {"type": "float", "low": 0.5, "high": 1.0},
    },
    "objectives": ["makespan_s", "energy_kwh"],
    "seeds": 1, "seed": 3, "recheck": 0,
    "budget": {"generations": 2},
    "algorithm": {"pop_size": 6},
    "parallel": {"workers": 1},
    # a classic baseline beside an RL study gets its own scheduler section
    "baselines": {"fcfs": {"scheduler": {"kind": "classic", "job_policy": "first", "resource_policy": "high_gflops"}}},
}


def test_rl_genes_decode_and_run(tmp_path: Path) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump(STUDY, sort_keys=False))
    run_dir = run_quiet(study, tmp_path / "run")
    logged = log_json(run_dir)
    (fcfs,) = [r for r in logged if r["kind"] == "baseline"]
    assert fcfs["status"] == "ok" and fcfs["config"]["scheduler"]["kind"] == "classic"
    assert fcfs["config"]["scheduler"]["job_policy"] == "first" and "agent" not in fcfs["config"]["scheduler"]
    # the rest of the base (platform, workload) is kept
    assert fcfs["config"]["platform"] == "two-socket" and len(fcfs["config"]["workload"]["jobs"]) == 3
    assert fcfs["metrics"]["n_jobs"] == 3
    rows = [r for r in logged if r["kind"] == "search"]
    assert len(rows) >= 6 and all(r["status"] == "ok" for r in rows), [r["error"] for r in rows]
    for r in rows:
        sched = r["config"]["scheduler"]
        assert sched["kind"] == "rl"
        for path, value in r["genome"].items():
            assert sched[path.split(".", 1)[1]] == value
        assert 1e-4 <= sched["learning_rate"] <= 1e-1 and 4 <= sched["hidden_units"] <= 16
        # every job ran: 3 jobs, makespan at least the longest job at full speed
        assert r["metrics"]["n_jobs"] == 3 and r["objectives"]["makespan_s"] >= 8 * 4.2 / 4.4 - 1e-9
    # the seeded sampling explores more than one agent kind, and each decodes to a working scheduler
    assert len({r["genome"]["scheduler.agent"] for r in rows}) >= 2
