"""The report's plotly figures (Kell et al. figs. 3-10 plus hypervolume convergence).

Every builder takes tidy frames and returns a `plotly.graph_objects.Figure`; axis titles are
metric names, which carry their units (energy_kwh, mean_bsld, ...). 2-D figures show the
first two objectives; the report says so when a study has more.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from paretosched.analysis.escape import plotly_text as _t
from paretosched.analysis.rundata import GeneInfo

_NOISE_COLOUR = "#9e9e9e"


def _cluster_name(c: int) -> str:
    return "noise (-1)" if c == -1 else f"cluster {c}"


def progress(points: pd.DataFrame, front: pd.DataFrame, baselines: pd.DataFrame, x: str, y: str) -> go.Figure:
    """Fig. 3: every successful search evaluation coloured by generation, the front as a line."""
    fig = go.Figure()
    fig.add_trace(go.Scattergl(
        x=points[x], y=points[y], mode="markers", name="evaluations",
        marker=dict(color=points["generation"], colorscale="Viridis", size=6, opacity=0.7,
                    colorbar=dict(title="generation")),
        customdata=points[["eval_id", "generation"]].to_numpy(),
        hovertemplate=f"eval %{{customdata[0]}} (gen %{{customdata[1]}})<br>{x}=%{{x:.4g}}<br>{y}=%{{y:.4g}}<extra></extra>"))
    f = front.sort_values(x)
    fig.add_trace(go.Scatter(x=f[x], y=f[y], mode="lines+markers", name="Pareto front",
                             line=dict(color="crimson", shape="hv"), marker=dict(color="crimson", size=8)))
    if not baselines.empty:
        fig.add_trace(go.Scatter(x=baselines[x], y=baselines[y], mode="markers+text", name="baselines",
                                 text=[_t(n) for n in baselines["name"]], textposition="top center",
                                 marker=dict(symbol="diamond", size=11, color="black")))
    fig.update_layout(title="Progress towards the Pareto front", xaxis_title=x, yaxis_title=y)
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
    fig.update_layout(title=f"DBSCAN clusters of the {what}", xaxis_title=x, yaxis_title=y)
    return fig


def lasso_bars(lasso: pd.DataFrame, objective: str) -> go.Figure:
    """Figs. 4b, 5: Lasso coefficients per gene feature, one bar group per cluster."""
    sub = lasso[(lasso["objective"] == objective) & (lasso["feature"] != "")]
    fig = go.Figure()
    for c in sorted(sub["cluster"].unique().tolist()):
        part = sub[sub["cluster"] == c]
        r2 = part["r2"].iloc[0]
        fig.add_trace(go.Bar(x=[_t(f) for f in part["feature"]], y=part["coef"], name=f"{_cluster_name(int(c))} (R² {r2:.2f})"))
    fig.update_layout(title=f"Lasso coefficients for {objective}", barmode="group",
                      xaxis_title="gene (scaled 1-100)", yaxis_title=f"{objective} per scaled gene unit")
    return fig


def violins(population: pd.DataFrame, genes: dict[str, GeneInfo]) -> go.Figure | None:
    """Fig. 6: the distribution of each numeric gene in the final population (natural units)."""
    numeric = [g for g in genes.values() if g.numeric]
    if not numeric or population.empty:
        return None
    fig = make_subplots(rows=1, cols=len(numeric), subplot_titles=[_t(g.path) for g in numeric])
    for i, g in enumerate(numeric, start=1):
        fig.add_trace(go.Violin(y=pd.to_numeric(population[g.path], errors="coerce"), name=_t(g.path),
                                box_visible=True, points="all", showlegend=False), row=1, col=i)
        if g.log:
            fig.update_yaxes(type="log", row=1, col=i)
    fig.update_layout(title="Numeric genes in the final population")
    return fig


def categorical_shares(points: pd.DataFrame, labels: np.ndarray, gene: GeneInfo) -> go.Figure:
    """Figs. 8-10: share of each value of a categorical gene per cluster (stacked bars)."""
    values = [str(v) for v in points[gene.path]]
    table = pd.crosstab(pd.Series([_cluster_name(int(c)) for c in labels], name="cluster"),
                        pd.Series(values, name="value"), normalize="index")
    fig = go.Figure()
    for val in table.columns:
        fig.add_trace(go.Bar(x=table.index, y=table[val], name=_t(f"{gene.path} = {val}")))
    fig.update_layout(title=_t(f"{gene.path} per cluster"), barmode="stack", yaxis_title="share of points (0-1)",
                      xaxis_title="cluster")
    return fig


def hypervolume(hv: pd.DataFrame) -> go.Figure:
    """Hypervolume of the front so far, per generation (fixed reference point)."""
    fig = go.Figure(go.Scatter(x=hv["generation"], y=hv["hv"], mode="lines+markers", name="hypervolume"))
    fig.update_layout(title="Hypervolume convergence", xaxis_title="generation",
                      yaxis_title="hypervolume (product of objective units)")
    return fig
