"""`paretosched explore RUN`: one self-contained, offline `explorer.html` for a run.

Every successful search evaluation is a point (coloured by generation or by front cluster),
the front is highlighted, baselines are marked; hovering shows genes and metrics, clicking
shows the point's scheduler config as YAML (the same document `export` writes) with a
download button, and two selectors put any recorded metrics on the axes.

Safety: the data goes into a `<script type="application/json">` element as JSON with `<`, `>`
and `&` escaped, and the page's script only sets text with `textContent`, so names and
choice values from a study can never become markup.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

from plotly.offline import get_plotlyjs

from paretosched.analysis.drivers import cluster
from paretosched.analysis.escape import plotly_text
from paretosched.analysis.export import config_document, to_yaml
from paretosched.analysis.front import front_of, min_form, scaled
from paretosched.analysis.rundata import RunData, load_run

PLOT_ID = "front-plot"
YAML_ID = "config-yaml"


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _hover(run: RunData, row: dict[str, Any], metrics: list[str]) -> str:
    esc = html.escape  # plotly renders a few tags in hover text; entities show as plain text
    head = f"<b>{esc(row['name'])}</b> (baseline)" if row.get("kind") == "baseline" else \
        f"<b>eval {row['eval_id']}</b> (generation {row.get('generation')})"
    lines = [head]
    lines += [f"{esc(str(k))} = {esc(str(v))}" for k, v in (row.get("genome") or {}).items()]
    m = row.get("metrics") or {}
    lines += [f"{esc(k)} = {m[k]:.6g}" for k in metrics if isinstance(m.get(k), (int, float))]
    return "<br>".join(lines)


def explorer_data(run: RunData) -> dict[str, Any]:
    """Everything the page needs, as JSON-ready types."""
    front = front_of(run)
    S = scaled(min_form(front[run.objectives].to_numpy(), run.signs))
    labels = dict(zip(front["eval_id"].astype(int).tolist(), cluster(S).labels.tolist()))
    f = run.frame
    shown = f[f["status"].eq("ok") & f["kind"].isin(["search", "baseline"])]
    metrics = [m for m in run.metric_columns if shown[m].notna().any()]
    points = []
    for eid in shown["eval_id"].astype(int).tolist():
        row = run.rows[eid]
        vals = {**(row.get("metrics") or {}), **(row.get("objectives") or {})}
        points.append({
            "id": eid, "kind": row["kind"], "name": row.get("name"), "label": plotly_text(row.get("name")), "gen": int(row.get("generation", -1)),
            "front": eid in labels, "cluster": labels.get(eid),
            "m": {k: _num(vals.get(k)) for k in metrics}, "genome": row.get("genome") or {},
            "hover": _hover(run, row, metrics), "yaml": to_yaml(config_document(run, eid, "explorer")),
        })
    n_failed = int((f["status"] != "ok").sum())
    n_recheck = int((f["kind"] == "recheck").sum())
    caption = (f"{int((shown['kind'] == 'search').sum())} successful search evaluations "
               f"({len(front)} on the Pareto front), {int((shown['kind'] == 'baseline').sum())} baselines. "
               f"Not plotted: {n_failed} failed evaluation(s), {n_recheck} re-check evaluation(s) "
               "(front points re-run on fresh seeds).")
    return {"study": run.study_name, "objectives": run.objectives, "senses": run.senses, "metrics": metrics,
            "points": points, "caption": caption}


def _json_for_script(data: Any) -> str:
    # inside <script>, `</script>` or `<!--` would end or confuse the element: escape <, >, &
    text = json.dumps(data, allow_nan=False, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def write_explorer(run_dir: str, out: str | None = None) -> Path:
    """Write explorer.html (default `<run_dir>/explorer.html`); returns its path."""
    run = load_run(run_dir)
    data = explorer_data(run)
    path = Path(out) if out else run.run_dir / "explorer.html"
    if path.is_dir():
        path = path / "explorer.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    page = _PAGE.format(title=html.escape(f"paretosched explorer: {run.study_name}"), plotly=get_plotlyjs(),
                        data=_json_for_script(data), plot_id=PLOT_ID, yaml_id=YAML_ID, script=_SCRIPT)
    path.write_text(page, encoding="utf-8")
    return path


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 0; display: flex; height: 100vh; }}
#main {{ flex: 3; display: flex; flex-direction: column; padding: 8px; min-width: 0; }}
#{plot_id} {{ flex: 1; min-height: 400px; }}
#side {{ flex: 2; border-left: 1px solid #ccc; padding: 8px; overflow: auto; max-width: 40%; }}
#{yaml_id} {{ font-size: 12px; background: #f6f6f6; padding: 6px; white-space: pre; overflow: auto; }}
.controls label {{ margin-right: 1em; }}
#caption {{ color: #555; font-size: 13px; }}
</style>
<script>{plotly}</script>
</head><body>
<div id="main">
  <h2 id="title"></h2>
  <div class="controls">
    <label>x axis <select id="x-metric"></select></label>
    <label>y axis <select id="y-metric"></select></label>
    <label>colour by <select id="colour-by"><option value="generation">generation</option>
      <option value="cluster">front cluster (DBSCAN)</option></select></label>
    <label><input type="checkbox" id="x-log"> log x</label>
    <label><input type="checkbox" id="y-log"> log y</label>
  </div>
  <div id="{plot_id}"></div>
  <p id="caption"></p>
</div>
<div id="side">
  <h3 id="config-title">Click a point to see its scheduler config</h3>
  <button id="download" disabled>download YAML</button>
  <pre id="{yaml_id}"></pre>
</div>
<script type="application/json" id="explorer-data">{data}</script>
<script>{script}</script>
</body></html>
"""

_SCRIPT = r"""
"use strict";
const DATA = JSON.parse(document.getElementById("explorer-data").textContent);
const PTS = DATA.points;
const gd = document.getElementById("front-plot");
const PALETTE = ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880"];
const idx = (pred) => PTS.map((p, i) => i).filter((i) => pred(PTS[i]));
const SEARCH = idx((p) => p.kind === "search");
const BASE = idx((p) => p.kind === "baseline");
let current = null;

document.getElementById("title").textContent = "Study " + DATA.study;
document.getElementById("caption").textContent = DATA.caption;
for (const id of ["x-metric", "y-metric"]) {
  const sel = document.getElementById(id);
  for (const m of DATA.metrics) {
    const o = document.createElement("option");
    o.value = m; o.textContent = m; sel.appendChild(o);
  }
}
document.getElementById("x-metric").value = DATA.objectives[0];
document.getElementById("y-metric").value = DATA.objectives[1];

function clusterColour(c) {
  if (c === null || c === undefined) return "#d0d0d0";
  return c < 0 ? "#7f7f7f" : PALETTE[c % PALETTE.length];
}

function traces() {
  const xm = document.getElementById("x-metric").value, ym = document.getElementById("y-metric").value;
  const byCluster = document.getElementById("colour-by").value === "cluster";
  const col = (ids, m) => ids.map((i) => PTS[i].m[m]);
  const front = SEARCH.filter((i) => PTS[i].front).sort((a, b) => PTS[a].m[xm] - PTS[b].m[xm]);
  const evals = {
    type: "scatter", mode: "markers", name: "evaluations", x: col(SEARCH, xm), y: col(SEARCH, ym),
    customdata: SEARCH, text: SEARCH.map((i) => PTS[i].hover), hoverinfo: "text",
    marker: byCluster
      ? { color: SEARCH.map((i) => clusterColour(PTS[i].cluster)), size: 7, opacity: 0.8 }
      : { color: SEARCH.map((i) => PTS[i].gen), colorscale: "Viridis", showscale: true, size: 7, opacity: 0.8,
          colorbar: { title: { text: "generation" } } },
  };
  const fr = {
    type: "scatter", mode: "lines+markers", name: "Pareto front", x: col(front, xm), y: col(front, ym),
    customdata: front, text: front.map((i) => PTS[i].hover), hoverinfo: "text",
    line: { color: "crimson", width: 1.5 },
    marker: { size: 11, symbol: "circle-open", line: { width: 2 },
              color: byCluster ? front.map((i) => clusterColour(PTS[i].cluster)) : "crimson" },
  };
  const base = {
    type: "scatter", mode: "markers+text", name: "baselines", x: col(BASE, xm), y: col(BASE, ym),
    customdata: BASE, text: BASE.map((i) => PTS[i].label), textposition: "top center",
    hovertext: BASE.map((i) => PTS[i].hover), hoverinfo: "text",
    marker: { symbol: "diamond", size: 13, color: "black" },
  };
  const layout = {
    // slowdowns are heavy-tailed: a log axis keeps the front readable next to far-off points
    xaxis: { title: { text: xm }, type: document.getElementById("x-log").checked ? "log" : "linear" },
    yaxis: { title: { text: ym }, type: document.getElementById("y-log").checked ? "log" : "linear" },
    hovermode: "closest",
    margin: { t: 20 }, legend: { orientation: "h", y: -0.15 },
  };
  return [[evals, fr, base], layout];
}

function render() {
  const [data, layout] = traces();
  return Plotly.react(gd, data, layout, { responsive: true, displaylogo: false });
}

function show(i) {
  const p = PTS[i];
  current = p;
  document.getElementById("config-title").textContent =
    p.kind === "baseline" ? "Baseline " + p.name : "Evaluation " + p.id + " (generation " + p.gen + ")";
  document.getElementById("config-yaml").textContent = p.yaml;
  document.getElementById("download").disabled = false;
}

document.getElementById("download").addEventListener("click", () => {
  if (!current) return;
  const blob = new Blob([current.yaml], { type: "application/x-yaml" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = DATA.study + "_eval" + current.id + ".yaml";
  document.body.appendChild(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
});
for (const id of ["x-metric", "y-metric", "colour-by", "x-log", "y-log"]) {
  document.getElementById(id).addEventListener("change", render);
}

render().then(() => {
  gd.on("plotly_click", (ev) => { if (ev && ev.points && ev.points.length) show(ev.points[0].customdata); });
  gd.dataset.ready = "1";
});
"""
