"""The table at the top of report.html: what an operator needs to act on a run.

The front with its search value and its re-check on fresh seeds (mean and per-seed range), the
baselines on the same re-check seeds, which baselines the front dominates there, the balanced
and knee picks, the overfit figure (median relative change search -> re-check) and the next
commands. Verdicts come from summary.json (`recheck.Recheck`); nothing is recomputed here.
Every user-provided name is HTML-escaped.
"""

from __future__ import annotations

import shlex
from html import escape as esc

import pandas as pd

from paretosched.analysis.front import Pick
from paretosched.analysis.recheck import Checked, Recheck, search_seed_verdicts
from paretosched.analysis.rundata import RunData
from paretosched.analysis.units import metric_title


OVERFIT_TARGET = 0.10  # issue 13's target for the median relative change search -> re-check


def _num(v: object) -> str:
    return f"{v:.4g}" if isinstance(v, (int, float)) else "–"


def _checked_cell(c: Checked | None, o: str) -> str:
    if c is None or c.value(o) is None:
        return "–"
    sp = c.spread(o)
    if sp is None and len(c.per_seed) == 1:  # one seed: the spread is undefined, not zero
        return _num(c.value(o)) + " <small>(range n/a: one seed)</small>"
    return _num(c.value(o)) + (f" <small>({_num(sp[0])}–{_num(sp[1])})</small>" if sp else "")


def _table(head: list[str], rows: list[list[str]]) -> str:
    """Cells are already escaped HTML."""
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table class='overview'><tr>{th}</tr>{body}</table>"


def _front_rows(run: RunData, front: pd.DataFrame, picks: list[Pick], rc: Recheck) -> list[list[str]]:
    marks: dict[int, list[str]] = {}
    for p in picks:
        if p.name in ("balanced", "knee"):
            marks.setdefault(p.eval_id, []).append(p.name)
    rows = []
    for eid in front["eval_id"].astype(int):
        c = rc.front.get(eid)
        cells = [str(eid), esc(", ".join(marks.get(eid, [])))]
        for o in run.objectives:
            cells += [_num(front.loc[eid, o]), _checked_cell(c, o)]
        if c is not None and c.dominated_by:
            flag = f"<b class='bad'>dominated by {esc(', '.join(c.dominated_by))}</b>"
        else:  # without baseline re-checks there is no verdict, which is not a "no"
            flag = "no" if c is not None and rc.judged else "–"
        rows.append([*cells, flag])
    return rows


def _baseline_rows(run: RunData, rc: Recheck) -> list[list[str]]:
    rows = []
    f = run.frame
    for _, b in f[(f["kind"] == "baseline")].iterrows():
        name = str(b["name"])
        c = rc.baselines.get(name)
        cells = [esc(name)]
        for o in run.objectives:
            cells += [_num(b[o]) if b["status"] == "ok" else esc(str(b["status"])), _checked_cell(c, o)]
        if rc.judged:
            cells.append("<b>yes</b>" if name in (rc.dominated_baselines or []) else "no")
        else:
            cells.append(_search_seed_verdict(run, name))
        rows.append(cells)
    return rows


def _search_seed_verdict(run: RunData, name: str) -> str:
    said = search_seed_verdicts(run)
    if name not in said:
        return "–"
    return ("yes" if said[name] else "no") + " <small>(search seeds only)</small>"


def _verdict_line(run: RunData, rc: Recheck) -> str:
    if not (run.frame["kind"] == "baseline").any():
        return ""
    if not rc.judged:
        said = search_seed_verdicts(run)
        dom = [n for n, d in said.items() if d]
        which = (", ".join(f"<b>{esc(n)}</b>" for n in dom) if dom else "none") if said else "not recorded"
        why = "has no re-check" if not rc.seeds else "did not re-simulate its baselines on fresh seeds"
        return (f"<p class='warn'>Baselines dominated by a front point on the <b>search seeds</b>: {which}. This run "
                f"{why}, so this verdict is judged on the seeds the front was selected on, which flatters the "
                "front (set <code>recheck</code> in the study for a verdict on fresh seeds).</p>")
    seeds = ", ".join(str(s) for s in rc.seeds)
    dom = rc.dominated_baselines or []
    which = ", ".join(f"<b>{esc(n)}</b>" for n in dom) if dom else "none"
    return f"<p>Baselines dominated by a front point on the re-check seeds ({esc(seeds)}): {which}.</p>"


def _overfit_line(run: RunData, rc: Recheck) -> str:
    if not rc.median_rel_change:
        return ("<p>Overfit figure (median relative change search → re-check): not recorded by this run"
                + ("" if rc.front else "; the run has no re-check") + ".</p>")
    med = {o: rc.median_rel_change[o] for o in run.objectives if o in rc.median_rel_change}
    parts = [f"{esc(o)} {100 * v:.1f}%" for o, v in med.items()]
    over = [o for o, v in med.items() if v > OVERFIT_TARGET]
    warn = (f" The front's {esc(', '.join(over))} moved more than {100 * OVERFIT_TARGET:.0f}% on fresh seeds: trust "
            "the re-check columns, not the search values.") if over else ""
    return (f"<p{' class=warn' if over else ''}>Overfit figure, median relative change of a front point from its "
            f"search value to its re-check: {', '.join(parts)} <small>(target ≤ 10%)</small>.{warn}</p>")


def overview_html(run: RunData, front: pd.DataFrame, picks: list[Pick], rc: Recheck) -> str:
    """The summary section (HTML fragment) for the top of report.html."""
    seeds = ", ".join(str(s) for s in rc.seeds) or "none (the run has no re-check)"
    head = ["eval", "pick"]
    for o in run.objectives:
        head += [f"{esc(metric_title(o))}<br>search", "re-check<br><small>mean (per-seed range)</small>"]
    parts = ["<h2>Summary</h2>",
             f"<p>Pareto front: {len(front)} point(s). Re-check seeds: {esc(seeds)}.</p>",
             _table([*head, "re-check dominated by a baseline"], _front_rows(run, front, picks, rc))]
    base = _baseline_rows(run, rc)
    if base:
        head_b = ["baseline"]
        for o in run.objectives:
            head_b += [f"{esc(metric_title(o))}<br>search seeds", "re-check seeds"]
        parts += ["<h3>Baselines</h3>", _table([*head_b, "dominated"], base)]
    parts.append(_verdict_line(run, rc))
    by_name = {p.name: p for p in picks}
    for name in ("balanced", "knee"):
        if name in by_name:
            parts.append(f"<p>Pick <b>{name}</b>: eval {by_name[name].eval_id} ({esc(by_name[name].note)}).</p>")
    parts.append(_overfit_line(run, rc))
    d = shlex.quote(str(run.run_dir))
    cmds = [f"paretosched explore {d} --open", f"paretosched export {d} --pick balanced -o best.yaml",
            "paretosched simulate best.yaml"]
    parts.append("<p>Next:</p><pre class='next'>" + esc("\n".join(cmds)) + "</pre>")
    return "\n".join(parts)

