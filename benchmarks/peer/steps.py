#!/usr/bin/env python3
"""CPU of `paretosched simulate --json` on the versus.py window for several exported copies, interleaved.

    git archive bc4cbf9 | tar -x -C /tmp/a && git archive HEAD | tar -x -C /tmp/b
    python benchmarks/peer/steps.py /tmp/a /tmp/b --repeat 5     # run it from a folder without a paretosched package
    python benchmarks/peer/steps.py /tmp/a /tmp/b --cachegrind    # instructions instead (valgrind; slow)

Each copy runs as its own process (PYTHONPATH=copy, `python -m paretosched.cli`), one after the
other, repeat after repeat, so load drift hits every copy alike; prints each copy's best CPU
seconds (user + system) and its ratio to the first copy. Same window as versus.py (Lublin-style,
10,000 jobs on homogeneous-256, EASY unless --backfilling none).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backfill_cost import lublin_swf  # noqa: E402  (benchmarks/backfill_cost.py)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("copies", nargs="+", help="folders holding an exported paretosched (git archive)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--backfilling", default="easy", choices=["easy", "none"])
    ap.add_argument("--n-jobs", type=int, default=10_000)
    ap.add_argument("--procs", type=int, default=256)
    ap.add_argument("--cachegrind", action="store_true", help="count instructions (valgrind) instead of CPU time")
    args = ap.parse_args()
    if Path("paretosched").is_dir():
        sys.exit("run it from a folder without a paretosched package (python -m puts the current folder first)")
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "lublin.swf"
        lublin_swf(trace, args.n_jobs, args.procs, 1)
        cfg = Path(tmp) / "cfg.yaml"
        cfg.write_text(json.dumps({
            "platform": f"homogeneous-{args.procs}", "seed": 0,
            "workload": {"path": str(trace), "mode": "trace", "n_jobs": args.n_jobs},
            "model": {"interference": "none"},
            "scheduler": {"job_policy": "first", "resource_policy": "high_gflops", "backfilling": args.backfilling}}))
        cmd = [sys.executable, "-m", "paretosched.cli", "simulate", str(cfg), "--json"]
        if args.cachegrind:
            cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *cmd]
        best = [float("inf")] * len(args.copies)
        outputs: list[str] = [""] * len(args.copies)
        for _ in range(1 if args.cachegrind else args.repeat):
            for i, copy in enumerate(args.copies):
                env = dict(os.environ, PYTHONPATH=str(Path(copy).resolve()))
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if args.cachegrind:
                    v = float(re.search(r"I\s+refs:\s+([\d,]+)", done.stderr).group(1).replace(",", ""))
                else:
                    v = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                best[i] = min(best[i], v)
                outputs[i] = done.stdout
        for i, copy in enumerate(args.copies):
            same = "same metrics" if outputs[i] == outputs[0] else "METRICS DIFFER"
            v = f"{best[i] / 1e6:,.0f} M instructions" if args.cachegrind else f"{best[i]:.3f} CPU s"
            print(f"{copy}: {v}, {best[i] / best[0]:.3f} of the first ({same})", flush=True)


if __name__ == "__main__":
    main()
