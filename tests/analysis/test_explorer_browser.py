"""explorer.html in headless Chromium: all points and re-checks drawn, names literal, a click shows the YAML.

Skipped only when chromium (or its driver, or selenium) is not installed.
"""

from __future__ import annotations

import html
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

from paretosched.analysis.explorer import COMPRESS_ABOVE, PLOT_ID, YAML_ID, write_explorer
from tests.analysis.synth import Point, recheck_block, write_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("chromium and chromium-driver are not installed (apt-get install -y chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1400,800"):
        opts.add_argument(flag)
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()
    shutil.rmtree(profile, ignore_errors=True)


BASELINE = "fcfs <b>"


def _run(tmp: Path) -> Path:
    pts = [Point((1.0 + i, 10.0 - i), generation=i // 4) for i in range(10)]  # 10 front points
    pts += [Point((5.0 + i, 400.0), generation=2) for i in range(5)]  # dominated; slowdowns span 400x: log y
    pts += [Point((3.0, 3.0), status="failed"), Point((6.0, 6.0), kind="baseline", name=BASELINE)]
    block = recheck_block({i: (1.1 + i, 10.5 - i) for i in range(10)}, {BASELINE: (6.2, 6.3)}, dominated=[],
                          dominated_by={8: [BASELINE]})
    return write_run(tmp / "run", pts, name="browser", summary_extra={"recheck": block})


def _trace_index(drv, name: str) -> int:
    return drv.execute_script(f"return document.getElementById('{PLOT_ID}').data.findIndex(t => t.name === arguments[0])",
                              name)


def _wait_ready(drv) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    # the plot element may not exist yet when the first poll runs on a loaded machine
    WebDriverWait(drv, 30).until(lambda d: d.execute_script(
        f"const e = document.getElementById('{PLOT_ID}'); return e !== null && e.dataset.ready === '1'"))


@pytest.mark.parametrize("compress_above", [COMPRESS_ABOVE, 0], ids=["json", "gzipped"])
def test_explorer_points_and_click(browser, tmp_path: Path, compress_above: int) -> None:
    run_dir = _run(tmp_path)
    page = write_explorer(str(run_dir), compress_above=compress_above)
    gzipped = 'type="application/gzip+base64" id="explorer-data"' in page.read_text()
    assert gzipped == (compress_above == 0)
    browser.get(page.as_uri())
    _wait_ready(browser)

    # plotted points per trace, read back from the plotly graph div
    counts = browser.execute_script(
        f"const gd = document.getElementById('{PLOT_ID}');"
        "return gd.data.map(t => [t.name, t.x.length]);")
    label = html.escape(BASELINE)
    assert dict(c for c in counts if c[0] is not None) == {
        "evaluations": 15, "Pareto front (search seeds)": 10, "search → re-check": 30,
        "re-check (fresh seeds; bars: per-seed range)": 10, "re-check dominated by a baseline": 1,
        "balanced pick (eval 0)": 1, "knee pick (eval 1)": 1, f"baseline {label}": 1, f"baseline {label}, re-check": 1}
    # and plotly really drew them: one SVG point per datum in the scatter layer
    drawn = browser.execute_script(
        f"return document.querySelectorAll('#{PLOT_ID} .scatterlayer .trace:first-child .point').length")
    assert drawn == 15
    # the re-check markers: drawn next to their search values, with per-seed error bars in both directions
    k = _trace_index(browser, "re-check (fresh seeds; bars: per-seed range)")
    sel = f"#{PLOT_ID} .scatterlayer .trace:nth-child({k + 1})"
    assert browser.execute_script(f"return document.querySelectorAll('{sel} .point').length") == 10
    assert browser.execute_script(f"return document.querySelectorAll('{sel} .errorbar').length") == 10
    ys = browser.execute_script(f"return document.getElementById('{PLOT_ID}').data[{k}].y")
    assert ys == [10.5 - i for i in range(10)]
    err = browser.execute_script(f"return document.getElementById('{PLOT_ID}').data[{k}].error_y")
    # synth per-seed re-check values are mean * (1 -+ 0.1): eval 0's y = 10.5 spans 9.45-11.55
    assert (err["array"][0], err["arrayminus"][0]) == (pytest.approx(1.05), pytest.approx(1.05))
    # the flagged point is eval 8's re-check
    bad = _trace_index(browser, "re-check dominated by a baseline")
    assert browser.execute_script(f"return document.getElementById('{PLOT_ID}').data[{bad}].x") == [9.1]
    # the baseline's name is shown literally in the legend (plotly would read <b> as bold)
    legend = browser.execute_script(
        f"return Array.from(document.querySelectorAll('#{PLOT_ID} .legendtext')).map(e => e.textContent)")
    assert f"baseline {BASELINE}" in legend and f"baseline {BASELINE}, re-check" in legend
    assert browser.execute_script(f"return document.querySelectorAll('#{PLOT_ID} .legendtext [style*=bold]').length") == 0
    # axis titles with units; y in log scale because the plotted slowdowns span 400x
    layout = browser.execute_script(f"const l = document.getElementById('{PLOT_ID}').layout;"
                                    "return [l.xaxis.title.text, l.yaxis.title.text, l.xaxis.type, l.yaxis.type]")
    assert layout == ["energy (kWh)", "mean bounded slowdown (-)", "linear", "log"]

    # click the 7th evaluation (eval id 7) through plotly's own event
    browser.execute_script(
        f"const gd = document.getElementById('{PLOT_ID}');"
        "const i = gd.data[0].customdata.indexOf(7);"
        "gd.emit('plotly_click', {points: [{curveNumber: 0, pointNumber: i, customdata: gd.data[0].customdata[i]}]});")
    text = browser.execute_script(f"return document.getElementById('{YAML_ID}').textContent")
    doc = yaml.safe_load(text)
    genome = doc["provenance"]["genome"]
    assert doc["provenance"]["eval_id"] == 7
    assert doc["scheduler"]["freq"] == genome["scheduler.freq"]
    for path, value in genome.items():
        assert f"{path}: {yaml.safe_dump(value).splitlines()[0]}" in text
    # the baseline's name came through as text, not markup
    assert browser.execute_script("return document.querySelectorAll('#side b').length") == 0


def test_real_click_and_axis_switch(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import Select

    page = write_explorer(str(_run(tmp_path)))
    browser.get(page.as_uri())
    _wait_ready(browser)
    Select(browser.find_element("id", "x-metric")).select_by_value("makespan_s")
    xs = browser.execute_script(f"return document.getElementById('{PLOT_ID}').data[0].x")
    assert xs == [100.0 + i for i in range(15)]  # synth makespan_s = 100 + eval id
    title = browser.execute_script(f"return document.getElementById('{PLOT_ID}').layout.xaxis.title.text")
    assert title == "makespan (s)"
    # the log toggle switches the axis type (and back); y starts in log (400x span)
    browser.find_element("id", "y-log").click()
    assert browser.execute_script(f"return document.getElementById('{PLOT_ID}').layout.yaxis.type") == "linear"
    browser.find_element("id", "y-log").click()
    assert browser.execute_script(f"return document.getElementById('{PLOT_ID}').layout.yaxis.type") == "log"

    # a real mouse click on the baseline's diamond shows the baseline config
    k = _trace_index(browser, f"baseline {html.escape(BASELINE)}")
    point = browser.find_element("css selector", f"#{PLOT_ID} .scatterlayer .trace:nth-child({k + 1}) .point")
    ActionChains(browser).move_to_element(point).click().perform()
    header = browser.execute_script("return document.getElementById('config-title').textContent")
    assert header == "Baseline fcfs <b>"
    if os.environ.get("PARETOSCHED_SCREENSHOT"):
        Select(browser.find_element("id", "x-metric")).select_by_value("energy_kwh")
        browser.save_screenshot(os.environ["PARETOSCHED_SCREENSHOT"])


def test_report_in_the_browser_draws_rechecks_and_literal_names(browser, tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    from paretosched.analysis.report import analyse

    page = analyse(str(_run(tmp_path))) / "report.html"
    browser.get(page.as_uri())
    # the progress figure is the report's first plotly graph
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "const g = document.querySelector('.js-plotly-plot'); return g !== null && g._fullLayout !== undefined"))
    names = browser.execute_script(
        "return document.querySelector('.js-plotly-plot').data.map(t => [t.name || '', t.x.length])")
    assert ["re-check (fresh seeds; bars: per-seed range)", 10] in names
    assert ["re-check dominated by a baseline", 1] in names
    drawn = browser.execute_script(
        "return Array.from(document.querySelector('.js-plotly-plot').querySelectorAll('.legendtext'))"
        ".map(e => e.textContent)")
    assert f"baseline {BASELINE}" in drawn
    # the summary table names the baseline literally too
    cells = browser.execute_script("return Array.from(document.querySelectorAll('table.overview td'))"
                                   ".map(e => e.textContent)")
    assert BASELINE in cells


def test_hover_metrics_are_formatted_as_python_does(browser, tmp_path: Path) -> None:
    # the page writes the metric lines of each hover (they were stored per point: a third of the page)
    from paretosched.analysis.escape import plotly_text
    from paretosched.analysis.rundata import load_run

    extra = {"mean_wait_s": 1234567.891, "p95_wait_s": 0.000012345678, "utilisation": 0.4487781372068138,
             "n_boots": 0.0, "max_wait_s": -3.25e-7}
    pts = [Point((1.0 + i, 10.0 - i), extra_metrics=extra) for i in range(4)]
    run_dir = write_run(tmp_path / "run", pts, name="hover")
    page = write_explorer(str(run_dir))
    browser.get(page.as_uri())
    _wait_ready(browser)
    shown = browser.execute_script(f"const gd = document.getElementById('{PLOT_ID}');"
                                   "return gd.data[0].text[gd.data[0].customdata.indexOf(2)]")
    row = load_run(run_dir).rows[2]
    expected = [f"<b>eval 2</b> (generation {row.generation})"]
    expected += [f"{plotly_text(k)} = {plotly_text(str(v))}" for k, v in row.genome.items()]
    expected += [f"{k} = {v:.6g}" for k, v in row.metrics.items()]
    assert sorted(shown.split("<br>")) == sorted(expected)


def test_a_page_moved_without_its_plotly_file_says_so(browser, tmp_path: Path) -> None:
    page = write_explorer(str(_run(tmp_path)))
    (page.parent / "plotly.min.js").unlink()
    browser.get(page.as_uri())
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 30).until(lambda d: "plotly.min.js next to this page" in d.find_element("tag name", "body").text)
