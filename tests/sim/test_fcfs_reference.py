"""FCFS on homogeneous-N without interference equals a textbook few-line reference."""

from __future__ import annotations

import heapq

from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.config import config_from_dict
from paretosched.sim.readers.workload import MIN_RUN_S
from paretosched.sim.run import simulate


def textbook_fcfs(jobs: list[dict], n: int) -> list[float]:
    """Strict FCFS: jobs start in submit order, each as soon as enough nodes are free."""
    running: list[tuple[float, int]] = []
    free, prev, starts = n, 0.0, []
    for j in jobs:
        t = max(j["submit_s"], prev)
        while running and running[0][0] <= t:
            free += heapq.heappop(running)[1]
        while free < j["cores"]:
            end, k = heapq.heappop(running)
            free += k
            t = max(t, end)
        starts.append(t)
        # a job runs at least 1 s (a run time of 0 is under a second in SWF; twin 10)
        heapq.heappush(running, (t + max(j["run_s"], MIN_RUN_S), j["cores"]))
        free -= j["cores"]
        prev = t
    return starts


def submit_times(data, most: int, span: int) -> list[int]:
    """1..`most` sorted submit times within `span` s, the first at 0 (the twin's clock starts there)."""
    k = data.draw(st.integers(1, most))
    submits = sorted(data.draw(st.lists(st.integers(0, span), min_size=k, max_size=k)))
    return [s - submits[0] for s in submits]


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 16), data=st.data())
def test_fcfs_matches_reference(n, data):
    jobs = [{"submit_s": s, "cores": data.draw(st.integers(1, n)), "run_s": data.draw(st.integers(0, 100))}
            for s in submit_times(data, 40, 200)]
    cfg = config_from_dict({"platform": f"homogeneous-{n}", "workload": {"jobs": jobs},
                            "model": {"interference": "none"},
                            "scheduler": {"job_policy": "first", "resource_policy": "high_gflops"}})
    res = simulate(cfg, record_jobs=True)
    got = [j["start_s"] for j in res.jobs]
    assert got == textbook_fcfs(jobs, n)
