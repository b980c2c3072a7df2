"""run.html in headless Chromium: whole, distinct queue ticks; every chart over time reaches the makespan.

Skipped only when chromium (or its driver, or selenium) is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path

from paretosched.cli import main
from tests.analysis.test_explorer_browser import browser  # noqa: F401  (the shared headless-Chromium fixture)
from tests.test_cli import CONFIG

TIME_PLOTS = ("plot-gantt", "plot-utilisation", "plot-power", "plot-pstates")


def test_run_page_queue_ticks_and_time_range(browser, tmp_path: Path, capsys) -> None:  # noqa: F811
    from selenium.webdriver.support.ui import WebDriverWait

    cfg, plots = tmp_path / "c.yaml", tmp_path / "p"
    cfg.write_text(CONFIG)
    assert main(["simulate", str(cfg), "--json", "--n-jobs", "12", "--plots", str(plots)]) == 0
    makespan_h = json.loads(capsys.readouterr().out)["makespan_s"] / 3600.0
    browser.get((plots / "run.html").as_uri())
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "return [...arguments[0]].every(id => { const e = document.getElementById(id);"
        " return e !== null && e._fullLayout !== undefined; })", list(TIME_PLOTS)))
    labels = browser.execute_script(
        "return [...document.querySelectorAll('#plot-utilisation .y2tick text')].map(t => t.textContent)")
    assert len(labels) >= 2 and all(s.isdigit() for s in labels), labels
    assert len(set(labels)) == len(labels), labels  # not 0,0,0,1,1,1
    for div in TIME_PLOTS:
        top = browser.execute_script(f"return document.getElementById('{div}')._fullLayout.xaxis.range[1]")
        assert top >= makespan_h * 0.999, (div, top, makespan_h)
