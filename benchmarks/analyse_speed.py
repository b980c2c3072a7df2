"""Time `analyse` (and `write_explorer`) on a synthetic 5,000-evaluation run directory.

Usage: python benchmarks/analyse_speed.py [N_EVALUATIONS] [--browser]
Builds the run dir in a temporary folder with the tests' synthetic writer (100 generations of
50, a noisy convex front, 5 genes of every type, 3 seeds, a few failures and baselines) and
prints wall and CPU times. Target: analyse < 30 s for 5,000 evaluations. `--browser` also opens
the explorer twice in headless Chromium (selenium, the test extra) and prints the seconds until
its plot is drawn (the page's ready flag).
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


def browser_seconds(page: Path, times: int = 2) -> list[float]:
    """Seconds from opening `page` in headless Chromium until the explorer's plot is drawn."""
    import shutil

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,900",
                 f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-profile-')}"):
        opts.add_argument(flag)
    drv = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    try:
        out = []
        for _ in range(times):
            t0 = time.perf_counter()
            drv.get(page.resolve().as_uri())
            WebDriverWait(drv, 120).until(lambda d: d.execute_script(
                "const e = document.getElementById('front-plot'); return e !== null && e.dataset.ready === '1'"))
            out.append(time.perf_counter() - t0)
        return out
    finally:
        drv.quit()


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--browser"]
    n = int(args[0]) if args else 5000
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        run = build(Path(tmp), n)
        t1, c1 = time.perf_counter(), time.process_time()
        out = analyse(str(run))
        t2, c2 = time.perf_counter(), time.process_time()
        page = write_explorer(str(run))
        t3, c3 = time.perf_counter(), time.process_time()
        shared = page.parent / "plotly.min.js"  # written beside the pages since they share one copy
        js = f"; plotly.min.js beside it {shared.stat().st_size / 1e6:.1f} MB" if shared.exists() else ""
        # CPU seconds next to wall seconds: on a shared machine the wall time is mostly waiting
        print(f"evaluations: {n} (+2 baselines); build {t1 - t0:.2f} s")
        print(f"analyse: {t2 - t1:.2f} s wall, {c2 - c1:.2f} s CPU (target < 30 s); "
              f"report.html {(out / 'report.html').stat().st_size / 1e6:.1f} MB")
        print(f"write_explorer: {t3 - t2:.2f} s wall, {c3 - c2:.2f} s CPU; "
              f"explorer.html {page.stat().st_size / 1e6:.1f} MB{js}")
        if "--browser" in sys.argv:
            print("explorer drawn in headless Chromium after " +
                  ", ".join(f"{s:.1f} s" for s in browser_seconds(page)) + " (first, second opening)")


if __name__ == "__main__":
    main()
