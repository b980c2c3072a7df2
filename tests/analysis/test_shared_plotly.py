"""HTML pages share one plotly.min.js per folder (each page inlined its own 4.6 MB copy)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from plotly.offline import get_plotlyjs

from paretosched.analysis.explorer import write_explorer
from paretosched.analysis.plotlyjs import PLOTLY_FILE, write_shared
from paretosched.analysis.report import analyse
from paretosched.sim.engine.metrics import METRIC_NAMES
from tests.adv import run_cli
from tests.analysis.synth import Point, default_genome, write_run

SCRIPT_SRC = re.compile(r"<script src=\"([^\"]*)\"")


def _quickstart_size_run(tmp: Path, n: int = 345) -> Path:
    """As many evaluations as the quickstart logs, each with every twin metric (the hover lists them)."""
    rng = np.random.default_rng(0)
    pts = [Point((8.0, 8.0), kind="baseline", name="fcfs")]
    for i in range(n):
        t = float(rng.uniform(0.1, 1.0))
        extra = {m: float(rng.uniform(1.0, 1e6)) for m in METRIC_NAMES if m not in ("energy_kwh", "mean_bsld")}
        pts.append(Point((10 * t, 1 / t + float(rng.exponential(1.0))), genome=default_genome(i),
                         generation=i // 20, extra_metrics=extra))
    return write_run(tmp / "run", pts, name="qs-size")


def test_pages_in_one_folder_share_one_plotly_file(tmp_path: Path) -> None:
    run = _quickstart_size_run(tmp_path)
    out = tmp_path / "pages"
    explorer = write_explorer(str(run), out=str(out / "explorer.html"))
    report = analyse(str(run), out=str(out)) / "report.html"
    assert sorted(p.name for p in out.glob("*.js")) == [PLOTLY_FILE]
    assert (out / PLOTLY_FILE).read_text(encoding="utf-8") == get_plotlyjs()
    for page in (explorer, report):
        text = page.read_text(encoding="utf-8")
        assert SCRIPT_SRC.findall(text) == [PLOTLY_FILE]  # relative: the folder can move as a whole
        assert "plotly.js v" not in text  # no inlined copy
        assert page.stat().st_size < 1_000_000, (page.name, page.stat().st_size)


def test_simulate_and_train_pages_share_it_too(tmp_path: Path) -> None:
    config = str(Path(__file__).resolve().parents[2] / "studies" / "configs" / "fcfs-easy.yaml")
    rc, _, err = run_cli(["simulate", config, "--n-jobs", "40", "--plots", str(tmp_path)])
    assert rc == 0, err
    text = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert SCRIPT_SRC.findall(text) == [PLOTLY_FILE] and (tmp_path / PLOTLY_FILE).is_file()
    assert (tmp_path / "run.html").stat().st_size < 1_000_000


def test_a_stale_shared_file_is_replaced_and_a_current_one_kept(tmp_path: Path) -> None:
    path = tmp_path / PLOTLY_FILE
    path.write_text("/* plotly.js v0.0.1 */")
    write_shared(tmp_path)
    assert path.read_text(encoding="utf-8") == get_plotlyjs()
    inode = path.stat().st_ino
    write_shared(tmp_path)
    assert path.stat().st_ino == inode  # not rewritten
    assert [p.name for p in tmp_path.iterdir()] == [PLOTLY_FILE]  # no temporary left behind


def test_explore_standalone_is_one_file(tmp_path: Path) -> None:
    run = _quickstart_size_run(tmp_path, n=20)
    page = write_explorer(str(run), out=str(tmp_path / "alone.html"), standalone=True)
    text = page.read_text(encoding="utf-8")
    assert SCRIPT_SRC.findall(text) == [] and text.count("plotly.js v") >= 1
    assert not (tmp_path / PLOTLY_FILE).exists()


def test_the_runs_own_analysis_shares_the_run_dirs_copy(tmp_path: Path) -> None:
    # RUN/analysis/ held a second 4.8 MB plotly.min.js beside RUN/plotly.min.js
    run = _quickstart_size_run(tmp_path, n=30)
    write_explorer(str(run))
    report = analyse(str(run)) / "report.html"
    assert report.parent == run / "analysis"
    assert not (run / "analysis" / PLOTLY_FILE).exists() and (run / PLOTLY_FILE).is_file()
    assert SCRIPT_SRC.findall(report.read_text(encoding="utf-8")) == [f"../{PLOTLY_FILE}"]
