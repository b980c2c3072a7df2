"""The report's plotly figures (Kell et al. figs. 3-10 plus hypervolume convergence).

Every builder takes tidy frames and returns a `plotly.graph_objects.Figure`; axis titles come
from `units.metric_title` ("energy (kWh)"); an axis spanning more than LOG_SPAN x is logarithmic. 2-D figures show the
first two objectives; the report says so when a study has more.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from paretosched.analysis.escape import plotly_text as _t
from paretosched.analysis.front import Pick
from paretosched.analysis.recheck import Checked, Recheck
from paretosched.analysis.units import metric_title
from paretosched.search.genes import GeneSpec

_NOISE_COLOUR = "#9e9e9e"


def _cluster_name(c: int) -> str:
    return "noise (-1)" if c == -1 else f"cluster {c}"


LOG_SPAN = 30.0  # an axis whose positive values span more than this factor is drawn in log scale
BASELINE_SYMBOLS = ["diamond", "square", "triangle-up", "cross", "triangle-down", "pentagon", "hexagram", "star-square"]
PICK_STYLE = {"balanced": ("star", "#f2b701"), "knee": ("star-triangle-up", "#7b2cbf")}


def wants_log(values: Iterable[float | None]) -> bool:
    """Log scale when all values are positive and the largest is more than LOG_SPAN x the smallest."""
    v = np.array([x for x in values if x is not None], dtype=float)
    v = v[np.isfinite(v)]
    return bool(len(v) and v.min() > 0 and v.max() > LOG_SPAN * v.min())


def axis(metric: str, values: Iterable[float | None]) -> dict:
    """Axis layout: title with unit; log scale (labels 1, 2, 5 per decade) when values span > LOG_SPAN x."""
    v = [float(x) for x in values if x is not None and math.isfinite(x)]
    if not wants_log(v):
        return dict(title=metric_title(metric), type="linear")
    lo, hi = math.floor(math.log10(min(v))), math.ceil(math.log10(max(v)))
    ticks = [d * 10.0 ** e for e in range(lo, hi + 1) for d in (1, 2, 5)]
    return dict(title=metric_title(metric), type="log", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])


def _pairs(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> tuple[list, list]:
    """Line segments a[i] -> b[i] as one trace (None separates them)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for (x0, y0), (x1, y1) in zip(a, b):
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    return xs, ys


def _error(checked: list[Checked], metric: str, color: str = "#ff7f0e") -> dict | None:
    """Per-seed range bars; none when no point has a spread (a one-seed re-check: a bar of
    zero would read as "no noise")."""
    if all(c.spread(metric) is None for c in checked):
        return None
    lo, hi = [], []
    for c in checked:
        v, sp = c.value(metric), c.spread(metric)
        lo.append(v - sp[0] if sp and v is not None else 0.0)
        hi.append(sp[1] - v if sp and v is not None else 0.0)
    return dict(type="data", symmetric=False, array=hi, arrayminus=lo, thickness=1, width=3, color=color)


def progress(points: pd.DataFrame, front: pd.DataFrame, baselines: pd.DataFrame, x: str, y: str,
             recheck: Recheck | None = None, picks: Iterable[Pick] = ()) -> go.Figure:
    """Fig. 3: every evaluation by generation, the front, its re-check (bars: per-seed range), the
    balanced and knee picks, each baseline as a legend entry (names escaped: plotly reads tags)."""
    esc = _t
    fig = go.Figure()
    fig.add_trace(go.Scattergl(
        x=points[x], y=points[y], mode="markers", name="evaluations",
        marker=dict(color=points["generation"], colorscale="Viridis", size=6, opacity=0.6,
                    colorbar=dict(title="generation")),
        customdata=points[["eval_id", "generation"]].to_numpy(),
        hovertemplate=f"eval %{{customdata[0]}} (gen %{{customdata[1]}})<br>{x}=%{{x:.4g}}<br>{y}=%{{y:.4g}}<extra></extra>"))
    f = front.sort_values(x)
    fig.add_trace(go.Scatter(x=f[x], y=f[y], mode="lines+markers", name="Pareto front (search seeds)",
                             line=dict(color="crimson", shape="hv"), marker=dict(color="crimson", size=8),
                             customdata=f["eval_id"], hovertemplate="eval %{customdata}<br>%{x:.4g}, %{y:.4g}<extra></extra>"))
    xs_all = [*points[x].tolist(), *baselines[x].tolist()]
    ys_all = [*points[y].tolist(), *baselines[y].tolist()]
    rc = recheck.front if recheck else {}
    ids = [int(e) for e in f["eval_id"] if int(e) in rc and rc[int(e)].value(x) is not None
           and rc[int(e)].value(y) is not None]
    if ids:
        checked = [rc[i] for i in ids]
        cx, cy = [c.value(x) for c in checked], [c.value(y) for c in checked]
        lx, ly = _pairs([(float(f.loc[i, x]), float(f.loc[i, y])) for i in ids], list(zip(cx, cy)))
        fig.add_trace(go.Scatter(x=lx, y=ly, mode="lines", name="search → re-check", hoverinfo="skip",
                                 line=dict(color="#ff7f0e", width=1, dash="dot")))
        one_seed = all(c.spread(x) is None and c.spread(y) is None for c in checked)
        label = "re-check (one fresh seed: spread n/a)" if one_seed else "re-check (fresh seeds; bars: per-seed range)"
        fig.add_trace(go.Scatter(x=cx, y=cy, mode="markers", name=label,
                                 marker=dict(symbol="circle-open", size=10, color="#ff7f0e", line=dict(width=2)),
                                 error_x=_error(checked, x), error_y=_error(checked, y), customdata=ids,
                                 hovertemplate="re-check of eval %{customdata}<br>%{x:.4g}, %{y:.4g}<extra></extra>"))
        bad = [k for k, c in enumerate(checked) if c.dominated_by]
        if bad:
            fig.add_trace(go.Scatter(
                x=[cx[k] for k in bad], y=[cy[k] for k in bad], mode="markers",
                name="re-check dominated by a baseline", marker=dict(symbol="x-thin-open", size=16, color="red",
                                                                    line=dict(width=3)),
                text=[esc(", ".join(checked[k].dominated_by)) for k in bad],
                hovertemplate="dominated by %{text}<extra></extra>"))
        xs_all += cx
        ys_all += cy
    picked: dict[int, list[str]] = {}  # the balanced and knee picks often coincide: one marker
    for p in picks:
        if p.name in PICK_STYLE and p.eval_id in f.index:
            picked.setdefault(p.eval_id, []).append(p.name)
    for eid, names in picked.items():
        symbol, colour = PICK_STYLE[names[0]]
        fig.add_trace(go.Scatter(x=[f.loc[eid, x]], y=[f.loc[eid, y]], mode="markers",
                                 name=f"{' and '.join(names)} pick (eval {eid})",
                                 marker=dict(symbol=symbol, size=18 if names[0] == "balanced" else 14,
                                             color=colour, line=dict(width=1, color="black"))))
    for k, (_, b) in enumerate(baselines.iterrows()):
        name = str(b["name"])
        symbol = BASELINE_SYMBOLS[k % len(BASELINE_SYMBOLS)]
        fig.add_trace(go.Scatter(x=[b[x]], y=[b[y]], mode="markers", name=f"baseline {esc(name)}",
                                 legendgroup=f"b{k}", marker=dict(symbol=symbol, size=12, color="black"),
                                 # the name as text, not inside the template: "%{...}" in it stays literal
                                 text=[esc(name)], hovertemplate="%{text}<br>%{x:.4g}, %{y:.4g}<extra></extra>"))
        c = recheck.baselines.get(name) if recheck else None
        if c is not None and c.value(x) is not None and c.value(y) is not None:
            fig.add_trace(go.Scatter(x=[b[x], c.value(x)], y=[b[y], c.value(y)], mode="lines", hoverinfo="skip",
                                     legendgroup=f"b{k}", showlegend=False,
                                     line=dict(color="black", width=1, dash="dot")))
            fig.add_trace(go.Scatter(
                x=[c.value(x)], y=[c.value(y)], mode="markers", legendgroup=f"b{k}",
                name=f"baseline {esc(name)}, re-check", error_x=_error([c], x, "black"),
                error_y=_error([c], y, "black"),
                marker=dict(symbol=symbol + "-open", size=12, color="black", line=dict(width=2)),
                text=[esc(name)], hovertemplate="%{text} (re-check)<br>%{x:.4g}, %{y:.4g}<extra></extra>"))
            xs_all.append(c.value(x))
            ys_all.append(c.value(y))
    # legend below the plot, the generation colour bar on the right: they never overlap
    fig.update_layout(title="Progress towards the Pareto front", xaxis=axis(x, xs_all), yaxis=axis(y, ys_all),
                      legend=dict(orientation="h", y=-0.2, yanchor="top"), margin=dict(b=170), height=640)
    return fig


def clusters(points: pd.DataFrame, labels: np.ndarray, x: str, y: str, what: str) -> go.Figure:
    """Fig. 4a: the clustered points (front or final population), one colour per DBSCAN label."""
    fig = go.Figure()
    palette = px.colors.qualitative.Plotly
    for c in sorted(set(labels.tolist())):
        sub = points[labels == c]
        colour = _NOISE_COLOUR if c == -1 else palette[c % len(palette)]
        fig.add_trace(go.Scatter(x=sub[x], y=sub[y], mode="markers", name=_cluster_name(c),
                                 marker=dict(color=colour, size=9), customdata=sub["eval_id"],
                                 hovertemplate="eval %{customdata}<br>%{x:.4g}, %{y:.4g}<extra></extra>"))
    fig.update_layout(title=f"DBSCAN clusters of the {what}",
                      xaxis=axis(x, points[x]), yaxis=axis(y, points[y]))
    return fig


def lasso_bars(lasso: pd.DataFrame, objective: str) -> go.Figure:
    """Figs. 4b, 5: Lasso coefficients per gene feature, one bar group per cluster with a useful fit."""
    sub = lasso[(lasso["objective"] == objective) & (lasso["feature"] != "") & lasso["useful"].astype(bool)]
    # a feature Lasso set to zero in every charted cluster is left out: with dozens of one-hot
    # columns (RL studies) the zeros crowd the few drivers off the axis
    kept = sub.groupby("feature", sort=False)["coef"].apply(lambda w: bool((w.abs() > 0).any()))
    dropped = int((~kept).sum())
    sub = sub[sub["feature"].map(kept)]
    fig = go.Figure()
    for c in sorted(sub["cluster"].unique().tolist()):
        part = sub[sub["cluster"] == c]
        r2, n = part["r2_cv"].iloc[0], int(part["n"].iloc[0])
        fig.add_trace(go.Bar(x=[_t(f) for f in part["feature"]], y=part["coef"],
                             name=f"{_cluster_name(int(c))} (n {n}, out-of-sample R² {r2:.2f})"))
    unit = metric_title(objective)
    zeros = f"; {dropped} gene feature(s) with zero coefficients not shown" if dropped else ""
    fig.update_layout(title=f"Lasso coefficients for {objective}", barmode="group", showlegend=True,
                      legend=dict(orientation="h", y=1.02, yanchor="bottom", x=1.0, xanchor="right"),
                      xaxis_title=f"gene (scaled 1-100 over its search range){zeros}",
                      yaxis_title=f"{unit} per scaled gene unit")
    return fig


def violins(population: pd.DataFrame, genes: dict[str, GeneSpec]) -> go.Figure | None:
    """Fig. 6: the distribution of each numeric gene in the final population (natural units)."""
    numeric = [(path, g) for path, g in genes.items() if g.numeric]
    if not numeric or population.empty:
        return None
    # at most 6 violins a row: a dozen RL genes in one row made their titles overlap
    cols = min(6, len(numeric))
    rows = -(-len(numeric) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[_t(path.split(".")[-1]) for path, _ in numeric],
                        vertical_spacing=0.12)
    for i, (path, g) in enumerate(numeric):
        r, c = i // cols + 1, i % cols + 1
        # spanmode "hard": the density ends at the extreme values; plotly's default extends it by
        # two bandwidths, past the gene's search range (freq drawn down to 0.35 for a 0.55-1.0 gene)
        fig.add_trace(go.Violin(y=pd.to_numeric(population[path], errors="coerce"), name=_t(path),
                                box_visible=True, points="all", showlegend=False, spanmode="hard"), row=r, col=c)
        if g.log:
            fig.update_yaxes(type="log", row=r, col=c)
    fig.update_layout(title="Numeric genes in the final population", height=max(480, 380 * rows))
    return fig


def categorical_shares(points: pd.DataFrame, labels: np.ndarray, path: str) -> go.Figure:
    """Figs. 8-10: share of each value of a categorical gene (`path`) per cluster (stacked bars)."""
    raw = list(points[path])
    values = [_choice_label(v) for v in raw]
    table = pd.crosstab(pd.Series([_cluster_name(int(c)) for c in labels], name="cluster"),
                        pd.Series(values, name="value"), normalize="index")
    order = {label: _choice_key(v) for v, label in zip(raw, values)}
    fig = go.Figure()
    for val in sorted(table.columns, key=lambda label: order[label]):
        fig.add_trace(go.Bar(x=table.index, y=table[val], name=_t(f"{path} = {val}")))
    fig.update_layout(title=_t(f"{path} per cluster"), barmode="stack", yaxis_title="share of points (0-1)",
                      xaxis_title="cluster")
    return fig


def _missing(v: object) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and math.isnan(v))


def _choice_label(v: object) -> str:
    """A choice value as the study wrote it: `null` (a null value, e.g. never switch nodes off),
    not pandas' NaN; 7200, not the 7200.0 a column mixing null and numbers holds."""
    if _missing(v):
        return "null"
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _choice_key(v: object) -> tuple[int, float, str]:
    """Legend order: null, then numbers ascending, then the rest alphabetically."""
    if _missing(v):
        return (0, 0.0, "")
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return (1, float(v), "")
    return (2, 0.0, str(v))


def hypervolume(hv: pd.DataFrame) -> go.Figure:
    """Hypervolume of the front so far, per generation (fixed reference point)."""
    fig = go.Figure(go.Scatter(x=hv["generation"], y=hv["hv"], mode="lines+markers", name="hypervolume"))
    fig.update_layout(title="Hypervolume convergence", xaxis_title="generation",
                      yaxis_title="hypervolume (product of objective units)")
    return fig
