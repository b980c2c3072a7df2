"""The explorer's page: its HTML template (`PAGE`, filled by `explorer.write_explorer`) and its script.

The script reads the data element (`explorer.explorer_data`, JSON), draws the points with
plotly, writes the hovers' metric lines, and shows a clicked point's config YAML (joined from the
data's shared blocks) with a download button. It sets text only through `textContent`, so no
study string becomes markup.
"""

from __future__ import annotations

PLOT_ID = "front-plot"
YAML_ID = "config-yaml"

PAGE = """<!DOCTYPE html>
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
{plotly}
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
<script type="{data_type}" id="explorer-data">{data}</script>
<script>{script}</script>
</body></html>
"""

SCRIPT = r"""
"use strict";
// a large run's data is gzipped and base64-encoded (`explorer.COMPRESS_ABOVE`): the browser
// inflates it with its own DecompressionStream
async function readData() {
  const el = document.getElementById("explorer-data");
  if (el.type === "application/json") return JSON.parse(el.textContent);
  const bytes = Uint8Array.from(atob(el.textContent), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

readData().then((DATA) => {
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

  // Python's format(v, ".6g"): the metric lines of the hover are written here, not stored per point
  function g6(v) {
    if (v === 0) return "0";
    const e = Math.floor(Math.log10(Math.abs(v)));
    if (e >= -4 && e < 6) return String(Number(v.toPrecision(6)));
    const [mant, exp] = v.toExponential(5).split("e");
    const n = parseInt(exp, 10);
    return mant.replace(/\.?0+$/, "") + "e" + (n < 0 ? "-" : "+") + String(Math.abs(n)).padStart(2, "0");
  }
  for (const p of PTS) {
    p.hover += DATA.metrics.map((k, j) => p.m[k] === null ? "" : "<br>" + DATA.metric_labels[j] + " = " + g6(p.m[k]))
      .join("");
  }

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
    // points that break the study's constraints (on the fresh seeds when re-checked): no pick chooses them
    const unmet = SEARCH.filter((i) => PTS[i].unmet);
    if (unmet.length) {
      out.push({ type: "scatter", mode: "markers", name: "breaks a constraint (never picked or exported)",
                 x: col(unmet, xm), y: col(unmet, ym), customdata: unmet,
                 text: unmet.map((i) => PTS[i].unmet), hoverinfo: "text",
                 marker: { symbol: "square-x-open", size: 12, color: "#7f7f7f", line: { width: 2 } } });
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

  const yamlOf = (p) => p.y.map((k) => DATA.blocks[k]).join("");

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
    document.getElementById("config-yaml").textContent = yamlOf(p);
    document.getElementById("download").disabled = false;
  }

  document.getElementById("download").addEventListener("click", () => {
    if (!current) return;
    const blob = new Blob([yamlOf(current)], { type: "application/x-yaml" });
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
});
"""
