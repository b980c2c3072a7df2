"""`paretosched analyse RUN`: CSV tables and one self-contained report.html.

Writes into `<run_dir>/analysis/` (or `out`): front.csv (front points, picks marked),
picks.csv, clusters.csv, lasso.csv, hypervolume.csv, notes.txt and report.html, which opens
with the summary of `overview.py` (front and baselines on the re-check seeds, verdicts, picks,
next commands). Degenerate runs (one front point, identical points, clusters too small to
fit) give notes, and sentences in place of charts, never an exception; only user mistakes
raise `UserError`.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from paretosched.analysis import figures
from paretosched.analysis.drivers import Clustering, cluster, lasso_table
from paretosched.analysis.front import (Pick, front_of, hypervolume_by_generation, min_form, near_front, scaled,
                                        standard_picks)
from paretosched.analysis.overview import overview_html
from paretosched.analysis.plotlyjs import plotly_script
from paretosched.analysis.recheck import Recheck, load_recheck
from paretosched.analysis.rundata import RunData, load_run
from paretosched.errors import UserError
from paretosched.search.files import make_output_dir, write_output


def final_population(run: RunData, notes: list[str]) -> pd.DataFrame:
    """Successful members of population.json's population (the front when it is missing)."""
    ok = run.search_ok()
    pop = run.population or {}
    ids = [int(i) for i in pop.get("eval_ids") or [] if int(i) in ok.index]
    if not ids:
        notes.append("population.json missing or empty: the front stands in for the final population")
        return front_of(run)
    if not pop.get("final", False):
        notes.append(f"the run is not finished: population of generation {pop.get('generation')} used")
    return ok.loc[list(dict.fromkeys(ids))]


def _clustering(run: RunData, points: pd.DataFrame, eps: float | None, min_samples: int | None) -> Clustering:
    if eps is not None and eps <= 0:
        raise UserError(f"eps must be > 0 (got {eps})")
    if min_samples is not None and min_samples < 1:
        raise UserError(f"min_samples must be >= 1 (got {min_samples})")
    S = scaled(min_form(points[run.objectives].to_numpy(), run.signs))
    return cluster(S, eps=eps, min_samples=min_samples)


def _front_table(run: RunData, front: pd.DataFrame, picks: list[Pick]) -> pd.DataFrame:
    marks: dict[int, list[str]] = {}
    for p in picks:
        marks.setdefault(p.eval_id, []).append(p.name)
    t = front[["eval_id", "generation", *run.genes, *run.objectives]].copy()
    t.insert(0, "index", range(len(t)))
    t["picks"] = [";".join(marks.get(int(e), [])) for e in t["eval_id"]]
    if run.summary.constraints:  # a point that breaks a limit is shown, marked, and never picked
        t["constraints"] = [run.infeasible(int(e)) or "met" for e in t["eval_id"]]
    return t.reset_index(drop=True)


def _picks_table(run: RunData, front: pd.DataFrame, picks: list[Pick]) -> pd.DataFrame:
    pos = {int(e): i for i, e in enumerate(front["eval_id"])}
    rows = []
    for p in picks:
        # values straight from the log row: a Series row would coerce ints to floats
        row = run.rows[p.eval_id]
        rows.append({"pick": p.name, "eval_id": p.eval_id, "index": pos[p.eval_id],
                     **dict(zip(run.objectives, row.objective_values(run.objectives))),
                     **{g: row.genome.get(g) for g in run.genes},
                     "note": p.note})
    return pd.DataFrame(rows)


ON = {"near": "evaluations near the front", "front": "Pareto front", "population": "final population"}


# what analyse writes into its folder
REPORT_FILES = ("front.csv", "picks.csv", "clusters.csv", "lasso.csv", "hypervolume.csv", "notes.txt", "report.html")


def analyse(run_dir: str, out: str | None = None, on: str = "near", eps: float | None = None,
            min_samples: int | None = None, layers: int | None = None) -> Path:
    """Analyse a run directory; returns the folder holding the CSV tables and report.html.

    `on` chooses what DBSCAN clusters and Lasso fits: "near" (every distinct successful search
    evaluation in the first `layers` non-dominated layers; by default as many layers as reach
    NEAR_MIN_POINTS points, see docs/analysis.md), "front" or "population" (the final
    population). `eps`/`min_samples` override the automatic DBSCAN settings.
    """
    if on not in ON:
        raise UserError(f"on must be one of {', '.join(repr(k) for k in ON)} (got {on!r})")
    if layers is not None and on != "near":
        raise UserError(f"--layers applies to --on near only (got --on {on})")
    run = load_run(run_dir)
    notes = list(run.notes)
    front = front_of(run)  # UserError when no successful search evaluation exists
    picks = standard_picks(run, front)
    notes += [f"pick {p.name}: {p.note}" for p in picks if "fell back" in p.note]
    if len(front) == 1:
        notes.append("the front has a single point: every pick is that point")
    population = final_population(run, notes)
    if on == "near":
        points, used = near_front(run, layers)
        notes.append(f"clusters and drivers: {len(points)} distinct successful search evaluations in the first "
                     f"{used} non-dominated layer(s)")
    else:
        points = front if on == "front" else population
    clus = _clustering(run, points, eps, min_samples)
    notes += clus.notes
    lasso, lasso_notes = lasso_table(points, clus.labels, run.genes, run.objectives)
    notes += lasso_notes
    hv = hypervolume_by_generation(run)
    x, y = run.objectives[0], run.objectives[1]
    if len(run.objectives) > 2:
        notes.append(f"{len(run.objectives)} objectives: 2-D figures show {x} and {y}")
    n_failed = int(((run.frame["kind"] == "search") & (run.frame["status"] != "ok")).sum())
    if n_failed:
        notes.append(f"{n_failed} failed search evaluation(s) are left out of every table and figure")

    dest = Path(out) if out else run.run_dir / "analysis"
    make_output_dir(dest, run.run_dir)  # in the run dir, never through a link (search/files.py)
    front_t = _front_table(run, front, picks)
    picks_t = _picks_table(run, front, picks)
    clusters_t = points[["eval_id", *run.objectives]].reset_index(drop=True)
    clusters_t.insert(1, "cluster", clus.labels)
    for name, table in (("front", front_t), ("picks", picks_t), ("clusters", clusters_t), ("lasso", lasso),
                        ("hypervolume", hv)):
        write_output(dest / f"{name}.csv", table.to_csv(index=False), run.run_dir)
    write_output(dest / "notes.txt", "".join(n + "\n" for n in notes), run.run_dir)

    what = ON[on]
    rc = load_recheck(run)
    figs = _figures(run, front, points, population, clus, lasso, hv, rc, picks, what)
    tables = [("Picks", picks_t), ("Pareto front", front_t), ("Lasso fits", _lasso_summary(lasso))]
    top = overview_html(run, front, picks, rc)
    # the run's own analysis/ shares the run dir's plotly.min.js (explorer.html's) instead of a second 4.8 MB copy
    shared = run.run_dir if dest.resolve().parent == Path(run.run_dir).resolve() else None
    page = _html(run, notes, figs, tables, clus, what, top, plotly_script(dest, shared_in=shared))
    write_output(dest / "report.html", page, run.run_dir)
    return dest


def _figures(run: RunData, front: pd.DataFrame, points: pd.DataFrame, population: pd.DataFrame, clus: Clustering,
             lasso: pd.DataFrame, hv: pd.DataFrame, rc: Recheck, picks: list[Pick],
             what: str) -> list[tuple[str, go.Figure | str]]:
    """The report's figures in order; a sentence (str) stands in for a chart that would mislead."""
    x, y = run.objectives[0], run.objectives[1]
    baselines = run.frame[(run.frame["kind"] == "baseline") & (run.frame["status"] == "ok")]
    figs: list[tuple[str, go.Figure | str]] = [
        ("Progress towards the front (Kell et al. fig. 3)",
         figures.progress(run.search_ok(), front, baselines, x, y, rc, picks)),
        ("Hypervolume convergence", figures.hypervolume(hv)),
        (f"Clusters of the {what} (fig. 4a)", figures.clusters(points, clus.labels, x, y, what)),
    ]
    for obj in run.objectives:
        useful = lasso["objective"].eq(obj) & lasso["feature"].ne("") & lasso["useful"].astype(bool)
        figs.append((f"What drives {obj} (figs. 4b, 5)",
                     figures.lasso_bars(lasso, obj) if useful.any() else _no_driver_chart(lasso, obj)))
        skipped = _not_charted(lasso, obj) if useful.any() else ""
        if skipped:
            figs.append(("", skipped))
    vio = figures.violins(population, run.genes)
    if vio is not None:
        figs.append(("Numeric genes in the final population (fig. 6)", vio))
    for path, g in run.genes.items():
        if not g.numeric:
            figs.append((f"{path} per cluster (figs. 8-10)", figures.categorical_shares(points, clus.labels, path)))
    return figs


def _lasso_summary(lasso: pd.DataFrame) -> pd.DataFrame:
    return (lasso.groupby(["cluster", "objective"], sort=True)
            .agg(n=("n", "first"), method=("method", "first"), r2_cv=("r2_cv", "first"),
                 r2_train=("r2_train", "first"), alpha=("alpha", "first"), note=("note", "first"))
            .reset_index())


def _no_driver_chart(lasso: pd.DataFrame, obj: str) -> str:
    """In place of the chart: why there is none, per cluster, and what to change."""
    fits = lasso[lasso["objective"].eq(obj) & lasso["cluster"].ne(-1)].drop_duplicates("cluster")
    if fits.empty:
        return f"No driver chart for {obj}: every point is DBSCAN noise. Try --eps larger, or --on front."
    why = "; ".join(f"cluster {int(r.cluster)}: {r.note}" for r in fits.itertuples())
    todo = next((a for a in fits["advice"] if isinstance(a, str) and a), "")
    return f"No driver chart for {obj}: {why}. To get one: {todo}." if todo else f"No driver chart for {obj}: {why}."


def _not_charted(lasso: pd.DataFrame, obj: str) -> str:
    """Below a chart: the clusters it leaves out and why."""
    fits = lasso[lasso["objective"].eq(obj) & lasso["cluster"].ne(-1) & ~lasso["useful"].astype(bool)]
    fits = fits.drop_duplicates("cluster")
    return "; ".join(f"Cluster {int(r.cluster)} not charted: {r.note}" for r in fits.itertuples()) + \
        ("." if len(fits) else "")


def _html(run: RunData, notes: list[str], figs: list[tuple[str, go.Figure | str]],
          tables: list[tuple[str, pd.DataFrame]], clus: Clustering, what: str, top: str, plotly: str) -> str:
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>paretosched report: {esc(run.study_name)}</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;"
        "display:block;overflow-x:auto;"
        "font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}.notes li{color:#8a4b00}.bad{color:#c00}"
        ".warn,.nochart{color:#8a4b00;font-weight:bold}pre.next{background:#f4f4f4;padding:6px}</style>",
        plotly + "</head><body>",
        f"<h1>Study {esc(run.study_name)}</h1>",
        f"<p>Run directory: <code>{esc(str(run.run_dir))}</code>; generated "
        f"{esc(datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC'))}.</p>",
        f"<p>Objectives: {esc(', '.join(f'{o} ({s})' for o, s in zip(run.objectives, run.senses)))}. "
        f"{len(run.search_ok())} successful search evaluations; DBSCAN on the {esc(what)} "
        f"(eps {clus.eps:.4g}, min_samples {clus.min_samples}, label -1 = noise).</p>",
        top,
        "<h2>Notes</h2><ul class='notes'>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>"
        if notes else "",
    ]
    for title, table in tables[:1]:
        parts.append(f"<h2>{esc(title)}</h2>" + table.to_html(index=False, escape=True, float_format=lambda v: f"{v:.6g}"))
    for title, fig in figs:
        if title:
            parts.append(f"<h2>{esc(title)}</h2>")
        if isinstance(fig, str):  # no chart: the sentence saying why
            parts.append(f"<p class='nochart'>{esc(fig)}</p>")
            continue
        parts.append(fig.to_html(full_html=False, include_plotlyjs=False, default_height="480px"))
    for title, table in tables[1:]:
        parts.append(f"<h2>{esc(title)}</h2>" + table.to_html(index=False, escape=True, float_format=lambda v: f"{v:.6g}"))
    parts.append("</body></html>")
    return "\n".join(parts)
