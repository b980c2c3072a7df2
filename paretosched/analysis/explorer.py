"""`paretosched explore RUN`: an offline `explorer.html` for a run (plotly.js beside it, or inside).

Every successful search evaluation is a point (coloured by generation or by front cluster),
the front is highlighted, its re-check on fresh seeds is an open marker joined to the search
value (bars: per-seed range; a red cross when a baseline's re-check dominates it), the balanced
and knee picks are stars, each baseline is a legend entry (and its re-check); an axis whose
values span more than 30x starts in log scale, axis titles carry units; hovering shows genes and metrics, clicking
shows the point's scheduler config as YAML (the same document `export` writes) with a
download button, and two selectors put any recorded metrics on the axes.

Safety: the data goes into a `<script type="application/json">` element as JSON with `<`, `>`
and `&` escaped (a large run's as gzipped base64, which has none of them), and the page's
script only sets text with `textContent`, so names and choice values from a study can never
become markup. Plotly reads tags in trace names and texts, so those get the HTML-escaped
`label` (plotly shows entities as plain characters).
The page's template and script are in `explorer_page.py`.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import math
from pathlib import Path
from typing import Any

from paretosched.analysis.drivers import cluster
from paretosched.analysis.escape import plotly_text
from paretosched.analysis.explorer_page import PAGE, PLOT_ID, SCRIPT, YAML_ID
from paretosched.analysis.export import config_document, to_yaml
from paretosched.analysis.figures import wants_log
from paretosched.analysis.front import deployable, front_of, min_form, pick_balanced, pick_knee, scaled
from paretosched.analysis.plotlyjs import plotly_script
from paretosched.analysis.recheck import Checked, load_recheck
from paretosched.analysis.rundata import RunData, load_run
from paretosched.analysis.units import metric_title
from paretosched.errors import UserError
from paretosched.search.files import make_output_dir, write_output
from paretosched.search.runlog import Evaluation

EXPLORER_PAGE = "explorer.html"
# data longer than this (characters of JSON) is gzipped into the page: a quickstart-size run's
# stays plain JSON, readable by any browser; a large run's needs DecompressionStream (Chrome 80,
# Firefox 113, Safari 16.4)
COMPRESS_ABOVE = 2_000_000


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _hover(row: Evaluation) -> str:
    """The head and genes of a point's hover text; the page appends the metrics from its values."""
    esc = plotly_text  # plotly renders a few tags in hover text; entities show as plain text
    head = f"<b>{esc(row.name)}</b> (baseline)" if row.kind == "baseline" else \
        f"<b>eval {row.eval_id}</b> (generation {row.generation})"
    lines = [head]
    lines += [f"{esc(str(k))} = {esc(str(v))}" for k, v in row.genome.items()]
    return "<br>".join(lines)


def _checked(c: Checked | None, metrics: list[str]) -> dict[str, Any] | None:
    """A point's re-check for the page: mean, per-seed low/high per metric, dominating baselines."""
    if c is None:
        return None
    spread = {k: c.spread(k) for k in metrics}
    return {"m": {k: _num(c.value(k)) for k in metrics},
            "lo": {k: _num(v[0]) if v else None for k, v in spread.items()},
            "hi": {k: _num(v[1]) if v else None for k, v in spread.items()},
            "n": len(c.per_seed),  # per-seed values: with one the spread is undefined (no bar, "n/a")
            "dominated_by": list(c.dominated_by), "dominated_label": html.escape(", ".join(c.dominated_by))}


class _YamlBlocks:
    """Each point's config YAML as indices into one table of top-level blocks (`platform:...`,
    `workload:...`): the YAML of a document is the YAML of its top-level keys one after the other,
    and most blocks are the same for every point, so each is dumped and stored once (the page
    joins them back). At 5,000 evaluations this halves the page and the time to write it."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._index: dict[str, int] = {}  # block text -> its index
        self._by_value: dict[tuple[str, str], int] = {}  # (key, JSON of its value) -> index, to skip dumping

    def add(self, doc: dict[str, Any]) -> list[int]:
        ids = []
        for key, value in doc.items():
            probe = (key, json.dumps(value, sort_keys=False))
            k = self._by_value.get(probe)
            if k is None:
                text = to_yaml({key: value})
                k = self._index.setdefault(text, len(self.texts))
                if k == len(self.texts):
                    self.texts.append(text)
                self._by_value[probe] = k
            ids.append(k)
        return ids


def explorer_data(run: RunData) -> dict[str, Any]:
    """Everything the page needs, as JSON-ready types."""
    front = front_of(run)
    S = scaled(min_form(front[run.objectives].to_numpy(), run.signs))
    labels = dict(zip(front["eval_id"].astype(int).tolist(), cluster(S).labels.tolist()))
    rc = load_recheck(run)
    f = run.frame
    shown = f[f["status"].eq("ok") & f["kind"].isin(["search", "baseline"])]
    metrics = [m for m in run.metric_columns if shown[m].notna().any()]
    points = []
    blocks = _YamlBlocks()
    for eid in shown["eval_id"].astype(int).tolist():
        row = run.rows[eid]
        vals = {**(row.metrics or {}), **(row.objectives or {})}
        name = row.name
        checked = rc.baselines.get(str(name)) if row.kind == "baseline" else rc.front.get(eid)
        points.append({
            "id": eid, "kind": row.kind, "name": name, "gen": row.generation,
            # plotly reads tags and entities in trace names and texts: the escaped name shows literally
            "label": plotly_text(name) if name is not None else None,
            "front": eid in labels, "cluster": labels.get(eid),
            "m": {k: _num(vals.get(k)) for k in metrics},
            "rc": _checked(checked, metrics) if (eid in labels or row.kind == "baseline") else None,
            "hover": _hover(row), "y": blocks.add(config_document(run, eid, "explorer")),
            "unmet": plotly_text(run.infeasible(eid) or "") or None if row.kind == "search" else None,
        })
    everything = [p["m"] for p in points] + [p["rc"]["m"] for p in points if p["rc"]]
    try:
        ok = deployable(run, front)
        picks = [{"name": p.name, "id": p.eval_id} for p in (pick_balanced(run, ok), pick_knee(run, ok))]
    except UserError:  # no front point meets the study's constraints: nothing to pick
        picks = []
    n_failed = int((f["status"] != "ok").sum())
    n_recheck = int((f["kind"] == "recheck").sum())
    seeds = ", ".join(str(s) for s in rc.seeds)
    bars = ("bars their per-seed range" if len(rc.seeds) > 1 else
            "no bars (one seed: its per-seed range is undefined)" if rc.seeds else "no bars")
    caption = (f"{int((shown['kind'] == 'search').sum())} successful search evaluations "
               f"({len(front)} on the Pareto front), {int((shown['kind'] == 'baseline').sum())} baselines. "
               f"Open markers: re-checks on fresh seeds ({seeds or 'none'}), {bars}, a dotted "
               f"line to the search value. Not plotted: {n_failed} failed evaluation(s)"
               + (f"; {n_recheck} re-check evaluation(s) in the log." if n_recheck else "."))
    return {"study": run.study_name, "objectives": run.objectives, "senses": run.senses, "metrics": metrics,
            "metric_labels": [plotly_text(m) for m in metrics],
            "titles": {m: metric_title(m) for m in metrics},
            "log": {m: wants_log(v.get(m) for v in everything) for m in metrics},
            "picks": picks, "points": points, "blocks": blocks.texts, "caption": caption}


def _json_for_script(data: Any, compress_above: int) -> tuple[str, str]:
    """(type, text) of the page's data element: JSON, or gzipped JSON in base64 when longer
    than `compress_above` characters (a quarter of the size; docs/performance.md)."""
    text = json.dumps(data, allow_nan=False, ensure_ascii=False)
    if len(text) > compress_above:  # base64 has no <, > or &: safe inside <script> as it is
        packed = gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)
        return "application/gzip+base64", base64.b64encode(packed).decode()
    # inside <script>, `</script>` or `<!--` would end or confuse the element: escape <, >, &
    return "application/json", text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def explorer_file(out: str | Path) -> Path:
    """The page `--out` names: the file itself, or explorer.html in a folder."""
    path = Path(out)
    return path / EXPLORER_PAGE if path.is_dir() else path


def write_explorer(run_dir: str, out: str | None = None, standalone: bool = False,
                   compress_above: int = COMPRESS_ABOVE) -> Path:
    """Write explorer.html (default `<run_dir>/explorer.html`) and the plotly.min.js it shares with
    its folder, or one page with plotly.js inside (`standalone`); returns the page's path."""
    run = load_run(run_dir)
    data = explorer_data(run)
    path = explorer_file(out) if out else run.run_dir / EXPLORER_PAGE
    make_output_dir(path.parent, run.run_dir)  # in the run dir, never through a link (search/files.py)
    data_type, text = _json_for_script(data, compress_above)
    page = PAGE.format(title=html.escape(f"paretosched explorer: {run.study_name}"),
                       plotly=plotly_script(path.parent, standalone),
                       data_type=data_type, data=text, plot_id=PLOT_ID, yaml_id=YAML_ID, script=SCRIPT)
    write_output(path, page, run.run_dir)
    return path
