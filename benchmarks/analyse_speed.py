"""Time `analyse` (and `write_explorer`) on a synthetic 5,000-evaluation run directory.

Usage: python benchmarks/analyse_speed.py [N_EVALUATIONS]
Builds the run dir in a temporary folder with the tests' synthetic writer (100 generations of
50, a noisy convex front, 5 genes of every type, 3 seeds, a few failures and baselines) and
prints wall times. Target: analyse < 30 s for 5,000 evaluations.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paretosched.analysis.explorer import write_explorer  # noqa: E402
from paretosched.analysis.report import analyse  # noqa: E402
from tests.analysis.synth import Point, default_genome, write_run  # noqa: E402


def build(d: Path, n: int) -> Path:
    rng = np.random.default_rng(0)
    pts = [Point((8.0, 8.0), kind="baseline", name="fcfs"), Point((6.0, 9.0), kind="baseline", name="sjf")]
    for i in range(n):
        gen = i // 50
        g = default_genome(i)
        g["scheduler.freq"] = float(rng.uniform(0.5, 1.0))
        # points approach the front 1/x as generations pass
        t = rng.uniform(0.1, 1.0)
        lift = rng.exponential(2.0 / (1 + gen / 10))
        pts.append(Point((10 * t + lift, 1 / t + lift + g["scheduler.freq"]), genome=g, generation=gen,
                         status="failed" if i % 97 == 0 else "ok"))
    return write_run(d / "run", pts, population=list(range(len(pts) - 50, len(pts))), name="bench")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        run = build(Path(tmp), n)
        t1 = time.perf_counter()
        out = analyse(str(run))
        t2 = time.perf_counter()
        page = write_explorer(str(run))
        t3 = time.perf_counter()
        print(f"evaluations: {n} (+2 baselines); build {t1 - t0:.2f} s")
        print(f"analyse: {t2 - t1:.2f} s (target < 30 s); report.html {(out / 'report.html').stat().st_size / 1e6:.1f} MB")
        print(f"write_explorer: {t3 - t2:.2f} s; explorer.html {page.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
