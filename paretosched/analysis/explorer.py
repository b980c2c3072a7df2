"""`paretosched explore RUN`: one self-contained, offline `explorer.html` for a run.

Every successful search evaluation is a point (coloured by generation or by front cluster),
the front is highlighted, its re-check on fresh seeds is an open marker joined to the search
value (bars: per-seed range; a red cross when a baseline's re-check dominates it), the balanced
and knee picks are stars, each baseline is a legend entry (and its re-check); an axis whose
values span more than 30x starts in log scale, axis titles carry units; hovering shows genes and metrics, clicking
shows the point's scheduler config as YAML (the same document `export` writes) with a
download button, and two selectors put any recorded metrics on the axes.

Safety: the data goes into a `<script type="application/json">` element as JSON with `<`, `>`
and `&` escaped, and the page's script only sets text with `textContent`, so names and
choice values from a study can never become markup. Plotly reads tags in trace names and
texts, so those get the HTML-escaped `label` (plotly shows entities as plain characters).
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
from paretosched.analysis.figures import wants_log
from paretosched.analysis.front import front_of, min_form, pick_balanced, pick_knee, scaled
from paretosched.analysis.recheck import Checked, load_recheck
from paretosched.analysis.rundata import RunData, load_run
from paretosched.analysis.units import metric_title
from paretosched.search.runlog import Evaluation

PLOT_ID = "front-plot"
YAML_ID = "config-yaml"


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _hover(run: RunData, row: Evaluation, metrics: list[str]) -> str:
    esc = plotly_text  # plotly renders a few tags in hover text; entities show as plain text
    head = f"<b>{esc(row.name)}</b> (baseline)" if row.kind == "baseline" else \
        f"<b>eval {row.eval_id}</b> (generation {row.generation})"
    lines = [head]
    lines += [f"{esc(str(k))} = {esc(str(v))}" for k, v in row.genome.items()]
    m = row.metrics or {}
    lines += [f"{esc(k)} = {m[k]:.6g}" for k in metrics if isinstance(m.get(k), (int, float))]
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
            "m": {k: _num(vals.get(k)) for k in metrics}, "genome": row.genome,
            "rc": _checked(checked, metrics) if (eid in labels or row.kind == "baseline") else None,
            "hover": _hover(run, row, metrics), "yaml": to_yaml(config_document(run, eid, "explorer")),
        })
    everything = [p["m"] for p in points] + [p["rc"]["m"] for p in points if p["rc"]]
    picks = [{"name": p.name, "id": p.eval_id} for p in (pick_balanced(run, front), pick_knee(run, front))]
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
            "titles": {m: metric_title(m) for m in metrics},
            "log": {m: wants_log(v.get(m) for v in everything) for m in metrics},
            "picks": picks, "points": points, "caption": caption}


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
.controls label {{ margin-right: 1em; white-space: nowrap; }}
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
  <p id="config-recheck"></p>
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
// a log axis by default where the plotted values span more than 30x (heavy-tailed slowdowns)
const logDefault = (axis) => {
  document.getElementById(axis + "-log").checked = DATA.log[document.getElementById(axis + "-metric").value];
};
logDefault("x"); logDefault("y");
document.getElementById("x-metric").addEventListener("change", () => logDefault("x"));
document.getElementById("y-metric").addEventListener("change", () => logDefault("y"));

function clusterColour(c) {
  if (c === null || c === undefined) return "#d0d0d0";
  return c < 0 ? "#7f7f7f" : PALETTE[c % PALETTE.length];
}

const SYMBOLS = ["diamond", "square", "triangle-up", "cross", "triangle-down", "pentagon", "hexagram", "star-square"];
const PICK_STYLE = { balanced: ["star", "#f2b701", 18], knee: ["star-triangle-up", "#7b2cbf", 14] };
const byId = new Map(PTS.map((p, i) => [p.id, i]));

// segments a -> b as one line trace (null separates them)
function links(ids, xm, ym) {
  const x = [], y = [];
  for (const i of ids) {
    x.push(PTS[i].m[xm], PTS[i].rc.m[xm], null);
    y.push(PTS[i].m[ym], PTS[i].rc.m[ym], null);
  }
  return [x, y];
}

// per-seed range of the re-check as asymmetric error bars; NaN draws no bar (0 would draw one
// of zero, which reads as "no noise" where one seed leaves the spread undefined)
function bars(ids, m, colour) {
  const d = (i, k) => (PTS[i].rc[k][m] === null || PTS[i].rc.m[m] === null) ? NaN
    : Math.abs(PTS[i].rc[k][m] - PTS[i].rc.m[m]);
  return { type: "data", symmetric: false, array: ids.map((i) => d(i, "hi")), arrayminus: ids.map((i) => d(i, "lo")),
           color: colour, thickness: 1, width: 3 };
}

// log axes labelled 1, 2, 5 per decade in full (plotly's own labels every digit, or "2", "5" for 20, 50)
function logTicks(values) {
  const v = values.filter((x) => x !== null && x > 0);
  if (!v.length) return {};
  const lo = Math.min(...v), hi = Math.max(...v), ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const d of [1, 2, 5]) ticks.push(d * Math.pow(10, e));
  }
  return { tickvals: ticks, ticktext: ticks.map((t) => String(Number(t.toPrecision(1)))) };
}

function traces() {
  const xm = document.getElementById("x-metric").value, ym = document.getElementById("y-metric").value;
  const byCluster = document.getElementById("colour-by").value === "cluster";
  const col = (ids, m) => ids.map((i) => PTS[i].m[m]);
  const front = SEARCH.filter((i) => PTS[i].front).sort((a, b) => PTS[a].m[xm] - PTS[b].m[xm]);
  const has = (i) => PTS[i].rc && PTS[i].rc.m[xm] !== null && PTS[i].rc.m[ym] !== null;
  const evals = {
    type: "scatter", mode: "markers", name: "evaluations", x: col(SEARCH, xm), y: col(SEARCH, ym),
    customdata: SEARCH, text: SEARCH.map((i) => PTS[i].hover), hoverinfo: "text",
    marker: byCluster
      ? { color: SEARCH.map((i) => clusterColour(PTS[i].cluster)), size: 7, opacity: 0.8 }
      : { color: SEARCH.map((i) => PTS[i].gen), colorscale: "Viridis", showscale: true, size: 7, opacity: 0.8,
          colorbar: { title: { text: "generation" }, len: 0.6 } },
  };
  const fr = {
    type: "scatter", mode: "lines+markers", name: "Pareto front (search seeds)", x: col(front, xm), y: col(front, ym),
    customdata: front, text: front.map((i) => PTS[i].hover), hoverinfo: "text",
    line: { color: "crimson", width: 1.5 },
    marker: { size: 10, symbol: "circle", line: { width: 1, color: "crimson" },
              color: byCluster ? front.map((i) => clusterColour(PTS[i].cluster)) : "crimson" },
  };
  const out = [evals, fr];
  const checked = front.filter(has);
  if (checked.length) {
    const [lx, ly] = links(checked, xm, ym);
    out.push({ type: "scatter", mode: "lines", name: "search → re-check", x: lx, y: ly, hoverinfo: "skip",
               line: { color: "#ff7f0e", width: 1, dash: "dot" } });
    out.push({ type: "scatter", mode: "markers", name: "re-check (fresh seeds; bars: per-seed range)",
               x: checked.map((i) => PTS[i].rc.m[xm]), y: checked.map((i) => PTS[i].rc.m[ym]), customdata: checked,
               text: checked.map((i) => "re-check of eval " + PTS[i].id), hoverinfo: "text+x+y",
               error_x: bars(checked, xm, "#ff7f0e"), error_y: bars(checked, ym, "#ff7f0e"),
               marker: { symbol: "circle-open", size: 10, color: "#ff7f0e", line: { width: 2 } } });
    const bad = checked.filter((i) => PTS[i].rc.dominated_by.length);
    if (bad.length) {
      out.push({ type: "scatter", mode: "markers", name: "re-check dominated by a baseline",
                 x: bad.map((i) => PTS[i].rc.m[xm]), y: bad.map((i) => PTS[i].rc.m[ym]), customdata: bad,
                 text: bad.map((i) => "eval " + PTS[i].id + ": re-check dominated by " + PTS[i].rc.dominated_label),
                 hoverinfo: "text", marker: { symbol: "x-thin-open", size: 18, color: "red", line: { width: 3 } } });
    }
  }
  // one marker per picked point: the balanced and knee picks often coincide
  const picked = new Map();
  for (const p of DATA.picks) picked.set(p.id, [...(picked.get(p.id) || []), p.name]);
  for (const [id, names] of picked) {
    const i = byId.get(id), [symbol, colour, size] = PICK_STYLE[names[0]];
    out.push({ type: "scatter", mode: "markers", name: names.join(" and ") + " pick (eval " + id + ")",
               x: [PTS[i].m[xm]], y: [PTS[i].m[ym]], customdata: [i], text: [PTS[i].hover], hoverinfo: "text",
               marker: { symbol: symbol, size: size, color: colour, line: { width: 1, color: "black" } } });
  }
  BASE.forEach((i, k) => {
    const symbol = SYMBOLS[k % SYMBOLS.length], group = "baseline" + k;
    out.push({ type: "scatter", mode: "markers", name: "baseline " + PTS[i].label, legendgroup: group,
               x: [PTS[i].m[xm]], y: [PTS[i].m[ym]], customdata: [i], text: [PTS[i].hover], hoverinfo: "text",
               marker: { symbol: symbol, size: 13, color: "black" } });
    if (has(i)) {
      const [lx, ly] = links([i], xm, ym);
      out.push({ type: "scatter", mode: "lines", x: lx, y: ly, legendgroup: group, showlegend: false,
                 hoverinfo: "skip", line: { color: "black", width: 1, dash: "dot" } });
      out.push({ type: "scatter", mode: "markers", name: "baseline " + PTS[i].label + ", re-check", legendgroup: group,
                 x: [PTS[i].rc.m[xm]], y: [PTS[i].rc.m[ym]], customdata: [i], hoverinfo: "text+x+y",
                 text: ["re-check of baseline " + PTS[i].label], error_x: bars([i], xm, "black"),
                 error_y: bars([i], ym, "black"),
                 marker: { symbol: symbol + "-open", size: 13, color: "black", line: { width: 2 } } });
    }
  });
  const axis = (m, box) => document.getElementById(box).checked
    ? { title: { text: DATA.titles[m] }, type: "log", ...logTicks(PTS.map((p) => p.m[m])) }
    : { title: { text: DATA.titles[m] }, type: "linear" };
  const layout = {
    xaxis: axis(xm, "x-log"),
    yaxis: axis(ym, "y-log"),
    hovermode: "closest",
    // legend below the plot: baseline names never overlap points or each other
    margin: { t: 20 }, legend: { orientation: "h", y: -0.18, yanchor: "top" },
  };
  return [out, layout];
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
  const rc = p.rc ? "re-check on fresh seeds: " + DATA.objectives.map((o) => o + " = " +
    (p.rc.m[o] === null ? "-" : p.rc.m[o].toPrecision(4))).join(", ") +
    (p.rc.n < 2 ? " (one seed: per-seed range n/a)" : "") : "";
  const dom = p.rc && p.rc.dominated_by.length ? "; dominated by the re-check of " + p.rc.dominated_by.join(", ") : "";
  document.getElementById("config-recheck").textContent = rc + dom;
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
