"""Charts of one simulation run (the thesis's `hdeeprm-visual` views, with plotly).

Gantt of jobs over cores (grouped by processor type), utilisation and queue length, power,
job lifecycles, and P-states: cores per state over time and bandwidth over-use spans per
processor. Written as one HTML page (run.html, loading the plotly.min.js it shares with its folder),
plus one PNG per chart when the optional static exporter (kaleido) is installed.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from paretosched.analysis.escape import plotly_text
from paretosched.analysis.plotlyjs import plotly_script
from paretosched.errors import UserError

# Beyond this many core-bars the Gantt would be too heavy for a browser: it shows the first jobs.
MAX_GANTT_BARS = 20_000
RUN_PAGE = "run.html"  # the page write_run_plots writes into its folder
H = 3600.0  # time axes in hours: a week-long window in seconds reads 0-600k
TIME_TITLE = "time (h)"
# jobs coloured by job (cycled), not by core: neighbouring jobs must be told apart
_JOB_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd")
_STATE_COLOURS = {"p0": "#2ca02c", "p1": "#d62728", "p2": "#ff7f0e", "p3": "#9edae5",
                  "off": "#c7c7c7", "booting": "#9467bd"}


def gantt(platform: Any, jobs: list[dict[str, Any]]) -> tuple[go.Figure, str]:
    """Jobs as bars on the cores they held; bands mark processor types."""
    xs, bases, ys, texts, colours = [], [], [], [], []
    shown = 0
    for k, j in enumerate(jobs):
        cores = [int(c) for c in str(j["core_ids"]).split()]
        if len(xs) + len(cores) > MAX_GANTT_BARS:
            break
        shown += 1
        for c in cores:
            bases.append(j["start_s"] / H)
            xs.append(max(j["end_s"] - j["start_s"], 1e-9) / H)
            ys.append(c)
            texts.append(f"job {j['job_id']}")
            colours.append(_JOB_COLOURS[k % len(_JOB_COLOURS)])
    fig = go.Figure(go.Bar(x=xs, base=bases, y=ys, orientation="h", text=texts, hoverinfo="text+y",
                           marker={"color": colours, "line": {"width": 0}},
                           textposition="none", width=0.9))
    band, first = None, 0
    for p in list(platform.procs) + [None]:
        ptype = p.ptype if p is not None else None
        if ptype != band:
            if band is not None:
                fig.add_hrect(y0=first - 0.5, y1=(p.first_core if p else platform.n_cores) - 0.5, line_width=0,
                              fillcolor="grey", opacity=0.06, annotation_text=plotly_text(band), annotation_position="left")
            band, first = ptype, p.first_core if p else 0
    fig.update_layout(title="Gantt: jobs on cores (one colour per job, cycled)", xaxis_title=TIME_TITLE,
                      yaxis_title="core", bargap=0,
                      showlegend=False)
    note = "" if shown == len(jobs) else f"Gantt shows the first {shown} of {len(jobs)} jobs."
    return fig, note


def utilisation_queue(tl: Any, n_cores: int) -> go.Figure:
    busy = (tl["cores_p0"] + tl["cores_p1"]) / n_cores
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=tl["t_start_s"] / H, y=busy, name="utilisation", line_shape="hv"))
    fig.add_trace(go.Scatter(x=tl["t_start_s"] / H, y=tl["queue_len"], name="queue length (jobs)", line_shape="hv",
                             yaxis="y2"))
    # a queue length is a count: whole ticks from 0 (autorange padded it to -4.3 ... 80.6)
    fig.update_layout(title="Utilisation and queue length", xaxis_title=TIME_TITLE,
                      yaxis={"title": "utilisation (busy cores / cores)", "range": [0, 1.02]},
                      yaxis2={"title": "queue length (jobs)", "overlaying": "y", "side": "right",
                              "rangemode": "nonnegative", "tickformat": "d"})
    return fig


def power(tl: Any) -> go.Figure:
    fig = go.Figure(go.Scatter(x=tl["t_start_s"] / H, y=tl["power_w"], line_shape="hv", name="power (W)"))
    fig.update_layout(title="Power", xaxis_title=TIME_TITLE, yaxis_title="power (W)")
    return fig


def lifecycle(jobs: list[dict[str, Any]]) -> go.Figure:
    """Arrival -> start (waiting) and start -> end (running), one row per job."""
    wait_x, wait_y, run_x, run_y = [], [], [], []
    for i, j in enumerate(jobs):
        wait_x += [j["submit_s"] / H, j["start_s"] / H, None]
        wait_y += [i, i, None]
        run_x += [j["start_s"] / H, j["end_s"] / H, None]
        run_y += [i, i, None]
    fig = go.Figure()
    fig.add_trace(go.Scattergl(x=wait_x, y=wait_y, mode="lines", name="waiting", line={"color": "#ff7f0e"}))
    fig.add_trace(go.Scattergl(x=run_x, y=run_y, mode="lines", name="running", line={"color": "#1f77b4"}))
    fig.update_layout(title="Job lifecycles (arrival, start, end)", xaxis_title=TIME_TITLE,
                      yaxis_title="job (arrival order)")
    return fig


def pstates(tl: Any) -> go.Figure:
    fig = go.Figure()
    for state, colour in _STATE_COLOURS.items():
        col = f"cores_{state}"
        if tl[col].any():
            fig.add_trace(go.Scatter(x=tl["t_start_s"] / H, y=tl[col], name=state.upper(), stackgroup="cores",
                                     line_shape="hv", line={"width": 0}, fillcolor=colour))
    fig.update_layout(title="Cores per state", xaxis_title=TIME_TITLE, yaxis_title="cores")
    return fig


def overuse(spans: Any) -> go.Figure:
    fig = go.Figure(go.Bar(x=((spans["end_s"] - spans["start_s"]) / H).tolist(), base=(spans["start_s"] / H).tolist(),
                           y=spans["processor"].tolist(), orientation="h", text=[plotly_text(t) for t in spans["processor_type"]],
                           hoverinfo="text+x+y", marker={"color": "#d62728"}, textposition="none"))
    fig.update_layout(title="Memory-bandwidth over-use spans (P1) per processor", xaxis_title=TIME_TITLE,
                      yaxis_title="processor", bargap=0.1)
    return fig


def write_run_plots(out: Path, platform: Any, jobs: list[dict[str, Any]], timeline: dict[str, Any] | None,
                    title: str = "run") -> Path:
    """Write run.html (all charts) into `out`; PNGs too when kaleido is installed."""
    if timeline is None:
        raise UserError("--plots needs the run's timeline (internal: simulate with timeline=True)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--plots {out}: cannot create folder: {exc}") from None
    tl, spans = timeline["timeline"], timeline["overuse"]
    g, note = gantt(platform, jobs)
    figs = {"gantt": g, "utilisation": utilisation_queue(tl, platform.n_cores), "power": power(tl),
            "lifecycle": lifecycle(jobs), "pstates": pstates(tl), "overuse": overuse(spans)}
    parts = [f"<h1>{html.escape(title)}</h1>"]
    if note:
        parts.append(f"<p>{html.escape(note)}</p>")
    if spans.empty:
        parts.append("<p>No memory-bandwidth over-use in this run.</p>")
    for name, fig in figs.items():
        parts.append(fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"plot-{name}"))
    page = out / RUN_PAGE
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>" + html.escape(title)
                    + "</title>" + plotly_script(out) + "</head><body>" + "\n".join(parts) + "</body></html>",
                    encoding="utf-8")
    _maybe_png(out, figs)
    return page


def _maybe_png(out: Path, figs: dict[str, go.Figure]) -> None:
    try:
        import kaleido  # noqa: F401
    except ImportError:
        return  # static export is optional
    for name, fig in figs.items():
        try:
            fig.write_image(out / f"{name}.png")
        except Exception:  # a broken kaleido install must not fail the run  # noqa: BLE001
            return
