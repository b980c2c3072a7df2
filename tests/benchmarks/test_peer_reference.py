"""benchmarks/peer/reference.py: its textbook FCFS and EASY give the twin's start times on homogeneous-N,
0 s jobs included (both run them MIN_RUN_S), while its AccaSim mimic keeps AccaSim's own 0 s rule."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.config import config_from_dict
from paretosched.sim.run import simulate
from paretosched.sim.readers.workload import MIN_RUN_S

PEER = Path(__file__).resolve().parents[2] / "benchmarks" / "peer"
sys.path.insert(0, str(PEER))
import reference  # noqa: E402

sys.path.remove(str(PEER))


def twin_waits(jobs: list[tuple[int, int, int, int, int]], n: int, backfilling: str) -> dict[int, float]:
    """{job id: wait} of the twin on homogeneous-n for reference-style job tuples (submit, id, run, procs, req)."""
    inline = [{"id": jid, "submit_s": s, "cores": p, "run_s": run, "req_s": req} for s, jid, run, p, req in jobs]
    cfg = config_from_dict({"platform": f"homogeneous-{n}", "workload": {"jobs": inline},
                            "model": {"interference": "none"},
                            "scheduler": {"job_policy": "first", "resource_policy": "high_gflops",
                                          "backfilling": backfilling}})
    res = simulate(cfg, record_jobs=True)
    return {int(r["job_id"]): r["start_s"] - r["submit_s"] for r in res.jobs}


def test_the_floor_is_the_twins() -> None:
    assert reference.MIN_RUN_S == MIN_RUN_S


def test_a_zero_second_job_holds_its_node_one_second_in_the_textbook_not_in_the_mimic() -> None:
    # one node: a 0 s job at t=0, then a job submitted at t=0 (file order after it)
    jobs = [(0, 1, 0, 1, 5), (0, 2, 3, 1, 5)]
    assert reference.textbook(jobs, 1, easy=False)[2] == (0, 1, 4)   # starts when the 0 s job's 1 s ends
    assert reference.textbook(jobs, 1, easy=True)[1] == (0, 0, 1)
    # AccaSim frees a 0 s job's node at the next event; with none left its clock steps 1 s (quirks c, d)
    assert reference.accasim_fcfs(jobs, 1)[1] == (0, 0, 0)
    assert twin_waits(jobs, 1, "none") == {1: 0.0, 2: 1.0}


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), data=st.data())
def test_textbook_equals_the_twin_with_zero_second_jobs(n: int, data) -> None:
    k = data.draw(st.integers(1, 25))
    submits = sorted(data.draw(st.lists(st.integers(0, 60), min_size=k, max_size=k)))
    jobs = []
    for i, s in enumerate(submits, start=1):
        run = data.draw(st.sampled_from([0, 0, 1, 2, 5, 10, 30]))
        # requests at or above the run: the twin's EASY estimates from the request, as the textbook
        req = run + data.draw(st.integers(0, 20)) if run else data.draw(st.integers(1, 20))
        jobs.append((s - submits[0], i, run, data.draw(st.integers(1, n)), req))
    for easy, backfilling in ((False, "none"), (True, "easy")):
        ref = reference.textbook(jobs, n, easy)
        assert twin_waits(jobs, n, backfilling) == {jid: float(st_ - s) for jid, (s, st_, _) in ref.items()}
