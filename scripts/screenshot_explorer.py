"""Screenshot a run's explorer with one front point clicked (for docs/README).

    python scripts/screenshot_explorer.py RUN_DIR OUT.png [--pick-eval ID] [--log-y]
    python scripts/screenshot_explorer.py RUN_DIR OUT.png --report [--height PX]   (RUN/analysis/report.html)

Needs Debian's chromium + chromium-driver and selenium (the test extra).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("out")
    ap.add_argument("--pick-eval", type=int, help="eval id to click (default: the balanced pick)")
    ap.add_argument("--log-y", action="store_true", help="tick the explorer's log y-axis box")
    ap.add_argument("--report", action="store_true", help="screenshot RUN/analysis/report.html instead")
    ap.add_argument("--height", type=int, default=800, help="window height in pixels")
    args = ap.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    from paretosched.analysis.explorer import write_explorer

    page = (Path(args.run) / "analysis" / "report.html").resolve() if args.report else \
        write_explorer(args.run, out=str(Path(tempfile.mkdtemp()) / "explorer.html"))
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", f"--window-size=1400,{args.height}"):
        opts.add_argument(flag)
    drv = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    try:
        drv.get(page.as_uri())
        if args.report:
            import time

            time.sleep(3)  # plotly draws the report's figures right after load; no ready flag there
            drv.save_screenshot(args.out)
            print(f"screenshot of the report: {args.out}")
            return
        WebDriverWait(drv, 30).until(lambda d: d.execute_script(
            "const e = document.getElementById('front-plot'); return e !== null && e.dataset.ready === '1'"))
        if args.log_y:
            drv.find_element("id", "y-log").click()
        target = args.pick_eval
        if target is None:
            from paretosched.analysis.export import export_pick

            tmp = Path(tempfile.mkdtemp()) / "b.yaml"
            export_pick(args.run, "balanced", str(tmp))
            import yaml

            target = yaml.safe_load(tmp.read_text())["provenance"]["eval_id"]
        # the page's customdata are indices into its point list (PTS), not eval ids
        found = drv.execute_script(
            "const gd = document.getElementById('front-plot'); const k = PTS.findIndex(p => p.id === arguments[0]);"
            "if (k < 0) return false;"
            "for (let c = 0; c < gd.data.length; c++) { const i = (gd.data[c].customdata || []).indexOf(k);"
            "  if (i >= 0) { gd.emit('plotly_click', {points: [{curveNumber: c, pointNumber: i, customdata: k}]});"
            "    return true; } }"
            "return false;", target)
        if not found:
            raise SystemExit(f"eval {target} is not plotted in the explorer")
        drv.save_screenshot(args.out)
        print(f"screenshot of eval {target}: {args.out}")
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
