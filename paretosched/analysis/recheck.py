"""The re-check of a run: front points and baselines re-simulated on fresh seeds.

Read from `summary.json["recheck"]` as the search layer writes it:
`{"seeds", "front": [{"eval_id", "objectives", "per_seed", "dominated_by_baseline"}],
"baselines": {NAME: {"objectives", "per_seed"}}, "dominated_baselines", "median_rel_change"}`.
Older runs only have `{"seeds", "eval_ids": {front_id: recheck_id}}` and the re-check rows in the
log (kind "recheck", `recheck_of`); their baselines were not re-checked. Every key is optional:
what is missing is empty (or None where "not recorded" differs from "none").

A run without a re-check (`recheck: 0`), or whose baselines are not re-checked yet, has no
verdict on fresh seeds (`dominated_baselines` None); `search_seed_verdicts` reads the one
summary.json keeps on the search seeds, which readers must label as such.

Verdicts (which baseline is dominated, which front point a baseline dominates, the overfit
figure) are the search layer's: this module reads them and never recomputes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from paretosched.analysis.rundata import RunData
from paretosched.search.runlog import Evaluation


@dataclass(frozen=True)
class Checked:
    """One point on the re-check seeds: mean objectives, per-seed values, all metrics when logged."""

    objectives: dict[str, float]
    per_seed: list[dict[str, float]] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)  # every logged metric (objectives included)
    dominated_by: tuple[str, ...] = ()  # baselines whose re-check dominates this one

    def value(self, metric: str) -> float | None:
        v = self.metrics.get(metric, self.objectives.get(metric))
        return v if isinstance(v, (int, float)) and math.isfinite(v) else None

    def spread(self, metric: str) -> tuple[float, float] | None:
        """(lowest, highest) per-seed value; None with fewer than two per-seed values, where the
        spread is undefined (a one-seed re-check's "range" of zero would read as no noise)."""
        vals = [s[metric] for s in self.per_seed if isinstance(s.get(metric), (int, float))]
        return (min(vals), max(vals)) if len(vals) >= 2 else None


@dataclass(frozen=True)
class Recheck:
    seeds: list[int]
    front: dict[int, Checked]  # by the re-checked front point's eval id
    baselines: dict[str, Checked]
    # None: the run did not judge baselines on re-check seeds (no re-check, or none of its
    # baselines re-checked yet): the only verdict then is summary.json's, on the search seeds
    dominated_baselines: list[str] | None
    median_rel_change: dict[str, float]

    @property
    def judged(self) -> bool:
        return self.dominated_baselines is not None


def _numbers(d: Any) -> dict[str, float]:
    if not isinstance(d, dict):
        return {}
    return {str(k): float(v) for k, v in d.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def _per_seed(entries: Any) -> list[dict[str, float]]:
    out = []
    for e in entries if isinstance(entries, list) else []:
        if not isinstance(e, dict) or e.get("status", "ok") != "ok":
            continue  # a failed seed has no values
        # {"seed", "status", "objectives"} (summary.json), {"seed", "metrics"} (log), or a plain value map
        values = e.get("objectives") if "objectives" in e else e.get("metrics") if "metrics" in e else e
        if isinstance(values, dict):
            out.append(_numbers(values))
    return out


def _from_row(row: Evaluation | None) -> tuple[dict[str, float], list[dict[str, float]], dict[str, float]]:
    if row is None:
        return {}, [], {}
    per_seed = [_numbers(s.metrics) for s in row.per_seed if s.ok and s.metrics is not None]
    return _numbers(row.objectives), per_seed, _numbers(row.metrics)


def _checked(entry: Any, row: Evaluation | None, dominated_by: Any = ()) -> Checked | None:
    objs, per_seed, metrics = _from_row(row)
    if isinstance(entry, dict):
        objs = _numbers(entry.get("objectives")) or objs
        per_seed = _per_seed(entry.get("per_seed")) or per_seed
    if not objs:
        return None
    names = tuple(str(n) for n in dominated_by) if isinstance(dominated_by, list) else ()
    return Checked(objs, per_seed, {**metrics, **objs}, names)


def load_recheck(run: RunData) -> Recheck:
    """The run's re-check, from summary.json and the log (see the module docstring)."""
    block = run.summary.recheck
    seeds = [int(s) for s in block.get("seeds") or [] if isinstance(s, int)]
    front: dict[int, Checked] = {}
    entries = block.get("front")
    if isinstance(entries, list):
        for e in entries:
            if isinstance(e, dict) and isinstance(e.get("eval_id"), int):
                c = _checked(e, run.rechecks.get(e["eval_id"]), e.get("dominated_by_baseline"))
                if c is not None:
                    front[int(e["eval_id"])] = c
    else:  # older runs: the re-check rows of the log
        for eid, row in run.rechecks.items():
            if eid in run.rows and run.rows[eid].kind == "search":
                c = _checked(None, row)
                if c is not None:
                    front[eid] = c
    base_ids = {r.name: eid for eid, r in run.rows.items() if r.kind == "baseline"}
    raw = block.get("baselines")
    raw = raw if isinstance(raw, dict) else {}
    baselines: dict[str, Checked] = {}
    # a baseline re-checked in the log but missing from the block still shows (without a verdict)
    for name in [*raw, *(n for n in base_ids if n not in raw)]:
        c = _checked(raw.get(name), run.rechecks.get(base_ids.get(name, -1)))
        if c is not None:
            baselines[str(name)] = c
    dom = block.get("dominated_baselines")
    # without re-check seeds or re-checked baselines the search writes an empty list: that is no
    # verdict, not "no baseline dominated" (a run with `recheck: 0`, or one still running)
    judged = isinstance(dom, list) and bool(seeds) and any(n in baselines for n in raw)
    dominated = [str(n) for n in dom] if judged else None
    return Recheck(seeds, front, baselines, dominated, _numbers(block.get("median_rel_change")))


def search_seed_verdicts(run: RunData) -> dict[str, bool]:
    """summary.json's `baselines.NAME.dominated_on_search_seeds` (`dominated` in runs written before
    the name said so): dominated by the front on the SEARCH seeds (the seeds the front was selected
    on, which flatters it); only baselines the summary judges."""
    said = run.summary.baselines
    out = {}
    for n, e in said.items():
        v = e.get("dominated_on_search_seeds", e.get("dominated")) if isinstance(e, dict) else None
        if isinstance(v, bool):
            out[str(n)] = v
    return out
