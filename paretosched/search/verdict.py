"""Verdicts on fresh seeds, and the end-of-run table.

After the budget, every front point and every baseline is re-simulated on the same fresh
`recheck` seeds (never used by the search). Whether a front point dominates a baseline is
decided on those re-check means only: the search values were selected on their seeds and are
biased in the front's favour. The "overfit" figure is the median, over the front, of
|re-check - search| / |search| per objective (docs/search.md).

`recheck_block` builds summary.json's `recheck` (`blocks.RecheckBlock`); `summary_table` renders a summary as plain
aligned text (terminals and batch logs). Picks (balanced, knee) belong to the analysis layer,
which this layer must not import: the CLI's printer (paretosched/commands/optimise.py) passes
them in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from paretosched.search import pareto
from paretosched.search.blocks import BaselineCheck, FrontCheck, PointCheck, RecheckBlock, SeedValues
from paretosched.search.rundir import cache_note
from paretosched.search.runlog import Evaluation
from paretosched.search.summary import Summary


def _values(row: Evaluation | None, names: list[str]) -> dict[str, float] | None:
    return None if row is None or not row.ok else dict(zip(names, row.objective_values(names)))


def _per_seed(row: Evaluation | None, names: list[str]) -> list[SeedValues]:
    if row is None:
        return []
    return [SeedValues(s.seed, s.status, {o: s.metrics.get(o) for o in names} if s.metrics else None)
            for s in row.per_seed]


def _std(per_seed: list[SeedValues], names: list[str]) -> dict[str, float] | None:
    """Population standard deviation over the re-check seeds; None below two seeds (undefined, not 0)."""
    vals = [p.objectives for p in per_seed if p.objectives]
    if len(vals) < 2 or any(v[o] is None for v in vals for o in names):
        return None
    return {o: float(np.std([v[o] for v in vals])) for o in names}


def _dominates(a: dict[str, float], b: dict[str, float], names: list[str], signs: np.ndarray) -> bool:
    fa = signs * np.array([a[o] for o in names])
    fb = signs * np.array([b[o] for o in names])
    return pareto.dominates(fa, fb)


def rel_change(search: dict[str, float], recheck: dict[str, float], names: list[str]) -> dict[str, float | None]:
    """(re-check - search) / |search| per objective; None where the search value is 0."""
    return {o: (recheck[o] - search[o]) / abs(search[o]) if search[o] != 0 else None for o in names}


def recheck_block(rows: dict[int, Evaluation], names: list[str], signs: np.ndarray, seeds: list[int],
                  front: list[int], baselines: dict[str, int], recheck_ids: dict[int, int],
                  limited: bool = False, reference: str | None = None) -> RecheckBlock:
    """summary.json's `recheck` (docs/rundir.md): front and baselines on the fresh seeds, verdicts.

    Without re-check seeds (a study's `recheck: 0`) the verdicts fall back to the search values
    and `verdicts_on` says so: "no baseline dominated" must never stand for "not re-checked".
    `limited`: the study has constraints, judged again on the re-check; `reference`: the baseline
    the `vs_reference` ratios are measured against."""
    def part(eid: int) -> dict[str, Any]:
        rc = rows.get(recheck_ids[eid]) if eid in recheck_ids else None
        per_seed = _per_seed(rc, names)
        out = {"eval_id": eid, "recheck_eval_id": None if rc is None else rc.eval_id,
               "search": _values(rows[eid], names), "n_search_seeds": len(rows[eid].seeds),
               "objectives": _values(rc, names), "per_seed": per_seed, "std": _std(per_seed, names)}
        if limited:  # a point feasible on its search seeds may not be on fresh ones
            judged = rc if seeds and rc is not None and rc.ok else rows[eid]
            out.update(constraints=rows[eid].constraints, recheck_constraints=None if rc is None else rc.constraints,
                       feasible=judged.ok and judged.feasible)
        return out

    key = "objectives" if seeds else "search"  # what the verdicts are decided on
    base = {name: BaselineCheck(**part(bid)) for name, bid in baselines.items()}
    ref = getattr(base.get(reference), key) if reference in base else None  # type: ignore[arg-type]
    out_front = []
    for eid in front:
        p = FrontCheck(**part(eid))
        p.rel_change = rel_change(p.search, p.objectives, names) if p.search and p.objectives else None
        p.dominated_by_baseline = [n for n, b in base.items() if getattr(p, key) and getattr(b, key)
                                   and _dominates(getattr(b, key), getattr(p, key), names, signs)]
        out_front.append(p)
    for p in out_front:  # the front may not stay one on fresh seeds: which points fall behind another
        p.dominated_by_front = [q.eval_id for q in out_front if seeds and q is not p and p.objectives
                                and q.objectives and _dominates(q.objectives, p.objectives, names, signs)]
    for p in [*out_front, *base.values()]:
        own = getattr(p, key)
        if ref and own:
            p.vs_reference = {o: vs(own.get(o), ref.get(o)) for o in names}
    for b in base.values():
        b.dominated_by = [p.eval_id for p in out_front if getattr(p, key) and getattr(b, key)
                          and _dominates(getattr(p, key), getattr(b, key), names, signs)]
    median: dict[str, float | None] = {}
    stderr: dict[str, float | None] = {}
    for o in names:
        ch = [abs(p.rel_change[o]) for p in out_front if p.rel_change and p.rel_change[o] is not None]
        median[o] = float(np.median(ch)) if ch else None
        # the re-check mean's own sampling noise, relative: the floor under the overfit figure
        se = [p.std[o] / np.sqrt(len(seeds)) / abs(p.objectives[o]) for p in out_front
              if p.std and p.objectives and p.objectives[o] != 0]
        stderr[o] = float(np.median(se)) if se else None
    return RecheckBlock(seeds=list(seeds), verdicts_on="re-check seeds" if seeds else "search seeds",
                        front=out_front, baselines=base,
                        dominated_baselines=[n for n, b in base.items() if b.dominated_by],
                        median_rel_change=median, median_rel_stderr=stderr,
                        eval_ids={str(k): v for k, v in sorted(recheck_ids.items())})


def vs(value: float | None, reference: float | None) -> float | None:
    """(value - reference) / |reference|: the "vs current" ratio; None where either is missing or 0."""
    return None if value is None or not reference else (value - reference) / abs(reference)


def _percents(values: dict[str, float | None]) -> str:
    return ", ".join(f"{o} {'-' if v is None else f'{100 * v:.1f}%'}" for o, v in values.items())


def overfit_line(recheck: RecheckBlock) -> str | None:
    """'energy_kwh 1.2%, mean_bsld 8.3% (...)': the overfit figure, or None without a re-check."""
    med = recheck.median_rel_change or {}
    if not med or all(v is None for v in med.values()):
        return None
    noise = recheck.median_rel_stderr or {}
    extra = f" (re-check's own noise, std/sqrt(n)/mean: {_percents(noise)})" if noise else ""
    return _percents(med) + extra


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def summary_table(summary: Summary, run_dir: str, picks: dict[str, int] | None = None,
                  next_lines: list[str] | None = None) -> str:
    """The end-of-run report of `optimise` as plain aligned text. `next_lines`: commands to add
    after the explore and export ones (the CLI's printer knows the study's slurm.conf)."""
    names = [o["name"] for o in summary.objectives]
    rc = summary.recheck
    seeds = rc.seeds or []
    ref = summary.reference if summary.reference in (rc.baselines or {}) else None
    limits = summary.constraints
    lines = [f"{summary.study}: {summary.status} ({summary.stop_reason}), "
             f"{summary.n_evaluations} genomes, {summary.n_simulations} simulations, "
             f"{len(summary.front)} front points"]
    if summary.n_cache_hits:  # a re-run that "finished in 0.15 s" must say why, and what to delete
        lines.append(cache_note(Path(run_dir), summary.n_cache_hits, summary.n_simulations))
    if seeds:
        spread = " (values: mean +- std over them)" if len(seeds) > 1 else " (one seed: no spread)"
        lines.append(f"fresh seeds: the re-check on {len(seeds)} seed{'s' if len(seeds) > 1 else ''} {seeds} the search "
                     f"never used{spread}; search seeds: the seeds the search selected on (they flatter the front)")
    else:
        lines.append("no re-check (study recheck: 0): verdicts below are on the search seeds")
    if ref:
        lines.append(f"vs {ref}: (value - {ref}'s) / {ref}'s on the {'fresh' if seeds else 'search'} seeds")
    if limits:
        lines.append(f"constraints: {'; '.join(limits)} (judged on the {'fresh' if seeds else 'search'} seeds)")

    def cells(entry: PointCheck) -> dict[str, str]:
        out: dict[str, str] = {}
        for o in names:
            out[f"{o} search seeds"] = _num((entry.search or {}).get(o))
            v, sd = (entry.objectives or {}).get(o), (entry.std or {}).get(o)
            if sd is not None and sd <= 1e-9 * abs(v or 1.0):
                sd = 0.0  # float noise of a mean over identical values
            if seeds:
                out[f"{o} fresh seeds"] = "-" if v is None else f"{v:.4g} +- {sd:.2g}" if sd is not None else f"{v:.4g}"
            if ref:
                r = (entry.vs_reference or {}).get(o)
                out[f"{o} vs {ref}"] = "-" if r is None else f"{100 * r:+.1f}%"
        if limits:
            out["constraints"] = "-" if entry.feasible is None else "met" if entry.feasible else \
                "NOT MET: " + _unmet(entry, limits, bool(seeds))
        return out

    front_rows = [{"eval": p.eval_id, "seeds": p.n_search_seeds, **cells(p),
                   "dominated by": ", ".join(p.dominated_by_baseline) or "-"} for p in rc.front or []]
    if front_rows:
        lines += ["", "front (search seeds: mean over the genome's own seeds, the number in `seeds`)", _render(front_rows)]
    base_rows = [{"baseline": n, **cells(b), "dominated by": _ids(b.dominated_by)}
                 for n, b in (rc.baselines or {}).items()]
    if base_rows:
        lines += ["", "baselines (the same seeds)", _render(base_rows)]
        dom = rc.dominated_baselines or []
        lines.append(f"dominated on the {rc.verdicts_on or 're-check seeds'}: {', '.join(dom) if dom else 'none'} "
                     f"({len(dom)} of {len(base_rows)} baselines)")
    flagged = [str(p.eval_id) for p in rc.front or [] if p.dominated_by_baseline]
    if flagged:
        lines.append(f"warning: front points {', '.join(flagged)} are dominated by a baseline on the "
                     f"{rc.verdicts_on or 're-check seeds'}")
    unmet = [str(p.eval_id) for p in rc.front or [] if p.feasible is False]
    if unmet and len(unmet) == len(rc.front or []):
        lines.append("no front point meets the constraints: export refuses every pick (loosen a limit, or search longer)")
    elif unmet:
        lines.append(f"front points {', '.join(unmet)} do not meet the constraints: no pick or export chooses them")
    behind = [f"{p.eval_id} (by {', '.join(map(str, p.dominated_by_front))})" for p in rc.front or []
              if p.dominated_by_front]
    if behind:
        lines.append(f"on the re-check seeds, front points fall behind other front points: {'; '.join(behind)}")
    if summary.hv == 0 and summary.front:
        refp = summary.reference_point or {}
        lines.append(f"warning: hypervolume 0: no front point is better than the reference point {refp} in every "
                     f"objective ({summary.reference_point_source or 'a study reference_point set below the front?'})")
    ov = overfit_line(rc)
    if ov:
        lines.append(f"overfit (median |re-check - search| / search over the front): {ov}")
    if picks:
        lines.append("picks: " + ", ".join(f"{k} = eval {v}" for k, v in picks.items()))
    lines += ["", "next:", f"  paretosched explore {run_dir} --open",
              f"  paretosched export {run_dir} --pick balanced -o best.yaml", *(f"  {c}" for c in next_lines or [])]
    return "\n".join(lines)


def _unmet(entry: PointCheck, labels: list[str], fresh: bool) -> str:
    """'p95_wait_s <= 7200 (+12%)': the constraints a point exceeds, by how much of the limit."""
    values = (entry.recheck_constraints if fresh and entry.recheck_constraints is not None else entry.constraints) or []
    return ", ".join(f"{lab} ({100 * v:+.0f}%)" for lab, v in zip(labels, values) if v is not None and v > 0) or "?"


def _ids(ids: list[int], most: int = 4) -> str:
    if not ids:
        return "-"
    shown = ", ".join(map(str, ids[:most]))
    return f"{len(ids)} front points ({shown}{', ...' if len(ids) > most else ''})"


def _render(records: list[dict[str, Any]]) -> str:
    # pandas aligns the columns; strings keep the numbers as formatted above
    return pd.DataFrame.from_records(records).astype(str).to_string(index=False)
