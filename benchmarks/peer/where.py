#!/usr/bin/env python3
"""Where one `simulate` of the versus.py window goes, by the twin's methods (CPU seconds).

    python benchmarks/peer/where.py                 # EASY on the Lublin-style window (as versus.py)
    python benchmarks/peer/where.py --backfilling none

Wraps a few methods with a CPU timer (process_time; the wrappers add ~5%): the enrichment, the
metrics, starting jobs (`Starting._start_now`, once per job, a pass over its parts), ending them
(`Twin._on_end`), the decisions less the starts they make, and the rest of the event loop (SimPy's
events, the arrivals). Counts the job parts too.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backfill_cost import lublin_swf  # noqa: E402  (benchmarks/backfill_cost.py)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backfilling", default="easy", choices=["easy", "none"])
    ap.add_argument("--n-jobs", type=int, default=10_000)
    ap.add_argument("--procs", type=int, default=256)
    args = ap.parse_args()

    from paretosched.config import config_from_dict
    from paretosched.sim import run
    from paretosched.sim.backfill import strategies
    from paretosched.sim.engine import starting, twin

    acc: dict[str, float] = {}

    def timed(owner: object, name: str, label: str) -> None:
        f = getattr(owner, name)

        def w(*a: object, **k: object) -> object:
            t = time.process_time()
            try:
                return f(*a, **k)
            finally:
                acc[label] = acc.get(label, 0.0) + time.process_time() - t

        setattr(owner, name, w)

    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "lublin.swf"
        lublin_swf(trace, args.n_jobs, args.procs, 1)
        cfg = config_from_dict({"platform": f"homogeneous-{args.procs}", "seed": 0,
                                "workload": {"path": str(trace), "mode": "trace", "n_jobs": args.n_jobs},
                                "model": {"interference": "none"},
                                "scheduler": {"job_policy": "first", "resource_policy": "high_gflops",
                                              "backfilling": args.backfilling}})
        prep = run.prepare(cfg)
        for owner, name, label in ((run, "build_jobs", "enrichment"), (run, "compute_metrics", "metrics"),
                                   (twin.Twin, "run", "event loop"), (starting.Starting, "_start_now", "starts"),
                                   (twin.Twin, "_on_end", "ends"), (strategies.Backfilling, "schedule", "decisions")):
            timed(owner, name, label)
        t = time.process_time()
        res = run.simulate(cfg, prepared=prep, record_jobs=False)
        total = time.process_time() - t
        parts = sum(prep.raw.req_procs[i] if prep.raw.req_procs[i] > 0 else prep.raw.alloc[i]
                    for i in range(len(prep.raw)))
    rows = {
        "simulate (whole)": total,
        "enrichment": acc["enrichment"],
        "metrics": acc["metrics"],
        "starting jobs": acc["starts"],
        "ending jobs": acc["ends"],
        "decisions, less the starts": acc["decisions"] - acc["starts"],
        "SimPy events, arrivals": acc["event loop"] - acc["decisions"] - acc["ends"],
        "rest (seeds, freeing the parts)": total - acc["enrichment"] - acc["metrics"] - acc["event loop"],
    }
    print(f"{res.metrics['n_jobs']:.0f} jobs, {parts} parts (one per processor a job uses), {res.decisions} decisions")
    for name, v in rows.items():
        print(f"{name}: {v:.3f} CPU s")


if __name__ == "__main__":
    main()
