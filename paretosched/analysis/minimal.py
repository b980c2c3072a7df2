"""The pick `minimal:P`: the smallest change that pays.

Among the run's re-checked front points (summary.json's `recheck`, fresh seeds), those no worse
than the reference baseline in every objective other than energy (the slowdown, the waits) qualify;
a point's saving is (baseline energy - its energy) / baseline energy on the re-check seeds, and
the best saving is the largest among the qualifying points. `minimal:P` takes the qualifying
points that keep at least P% of that best saving and chooses the one whose config differs from
the baseline's in the fewest parameters (leaves of the config, `provenance` aside); ties go to the
larger saving, then the lower eval id.

The reference baseline: `minimal:P@NAME` names it; else the study's `reference`; else its
`focus.baseline`; else a baseline named `current` (the operator's running configuration); else
the run's only baseline. Points that break the study's constraints (on the re-check seeds) never qualify.
Search-seed values never decide: they were selected on those seeds and flatter the front.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from paretosched.analysis.recheck import Checked, load_recheck
from paretosched.analysis.rundata import RunData
from paretosched.errors import UserError
from paretosched.search.study import STUDY_FILE
from paretosched.yamlio import read_yaml


@dataclass(frozen=True)
class Candidate:
    eval_id: int
    saving_pct: float  # energy saved vs the baseline, % of the baseline's
    no_worse: bool  # every other objective no worse than the baseline's
    changed: int  # config leaves that differ from the baseline's


def _leaves(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            if prefix == "" and k == "provenance":
                continue
            out.update(_leaves(v, f"{prefix}{k}."))
        return out  # an empty mapping holds no parameter
    return {prefix.rstrip("."): d}


def changed_parameters(config: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """Dotted paths of the config leaves that differ from the baseline's (either side missing counts)."""
    a, b = _leaves(config), _leaves(baseline)
    return sorted(k for k in a.keys() | b.keys() if a.get(k, object()) != b.get(k, object()))


def parse_percent(expr: str) -> tuple[float, str | None]:
    """`minimal:P[@NAME]` -> (P, NAME or None); P must be in (0, 100]."""
    arg = expr.strip().partition(":")[2]
    text, _, name = arg.partition("@")
    try:
        p = float(text)
    except ValueError:
        raise UserError(f"pick {expr.strip()!r}: expected minimal:P with P a percentage in (0, 100], e.g. minimal:90") from None
    if not (math.isfinite(p) and 0 < p <= 100):
        raise UserError(f"pick {expr.strip()!r}: P must be in (0, 100] (the share of the best re-checked saving to "
                        f"keep), got {text.strip()}")
    return p, (name.strip() or None)


def _energy(run: RunData, expr: str) -> str:
    for o in run.objectives:
        if o.startswith("energy"):
            return o
    raise UserError(f"pick {expr!r}: the run has no energy objective to save (objectives: {', '.join(run.objectives)})")


def _reference(run: RunData, named: str | None, expr: str) -> str:
    names = [r.name for r in run.rows.values() if r.kind == "baseline" and r.name]
    if named is not None:
        if named not in names:
            raise UserError(f"pick {expr!r}: no baseline named {named!r} (baselines: {', '.join(names) or 'none'})")
        return named
    study = run.run_dir / STUDY_FILE
    data = (read_yaml(study) or {}) if study.is_file() else {}
    focus = data.get("focus") if isinstance(data, dict) else None
    for cand in (data.get("reference") if isinstance(data, dict) else None,
                 (focus or {}).get("baseline") if isinstance(focus, dict) else None, "current"):
        if cand in names:
            return str(cand)
    if len(names) == 1:
        return names[0]
    if not names:
        raise UserError(f"pick {expr!r}: the run has no baseline to measure a saving against")
    raise UserError(f"pick {expr!r}: the run has baselines {', '.join(names)}: name the one savings are measured "
                    f"against, e.g. {expr}@{names[0]}")


def candidates(run: RunData, expr: str, reference: str | None) -> tuple[str, str, list[Candidate]]:
    """(baseline name, energy objective, the re-checked front points with their saving and changes)."""
    rc = load_recheck(run)
    if not rc.seeds or not rc.front:
        raise UserError(f"pick {expr!r}: the run has no re-check on fresh seeds (study `recheck: 0`, or it stopped "
                        "before the re-check); minimal:P compares re-checked savings")
    energy = _energy(run, expr)
    name = _reference(run, reference, expr)
    base: Checked | None = rc.baselines.get(name)
    base_row = next(r for r in run.rows.values() if r.kind == "baseline" and r.name == name)
    e0 = base.value(energy) if base is not None else None
    if base is None or e0 is None or e0 == 0 or not base_row.config:
        raise UserError(f"pick {expr!r}: baseline {name!r} has no re-checked {energy} to measure a saving against")
    sign = {o: (1.0 if s == "min" else -1.0) for o, s in zip(run.objectives, run.senses)}
    out = []
    for eid, c in sorted(rc.front.items()):
        row = run.rows.get(eid)
        e = c.value(energy)
        if row is None or not row.ok or not row.config or e is None or run.infeasible(eid) is not None:
            continue  # a point that breaks the study's constraints is never deployed
        others = [(c.value(o), base.value(o), sign[o]) for o in run.objectives if o != energy]
        no_worse = all(v is not None and b is not None and s * v <= s * b for v, b, s in others)
        saving = 100.0 * sign[energy] * (e0 - e) / abs(e0)
        out.append(Candidate(eid, saving, no_worse, len(changed_parameters(row.config, base_row.config))))
    return name, energy, out


def pick_minimal(run: RunData, expr: str) -> tuple[int, str]:
    """(eval id, why) of `minimal:P[@NAME]` (see the module docstring); mistakes are one-line UserErrors."""
    expr = expr.strip()
    p, named = parse_percent(expr)
    name, energy, cands = candidates(run, expr, named)
    others = ", ".join(o for o in run.objectives if o != energy)
    qual = [c for c in cands if c.no_worse]
    best = max(qual, key=lambda c: (c.saving_pct, -c.eval_id), default=None)
    if best is None or best.saving_pct <= 0:
        top = max(cands, key=lambda c: c.saving_pct, default=None)
        at_no_worse = (f"the best saving at no worse {others} is {best.saving_pct:.2f}% (eval {best.eval_id})"
                       if best is not None else f"no re-checked front point has {others} no worse than it")
        anyway = f"; at any {others}: {top.saving_pct:.2f}% (eval {top.eval_id})" if top is not None else ""
        raise UserError(f"pick {expr!r}: no re-checked front point saves {energy} vs baseline {name!r}: "
                        f"{at_no_worse}{anyway}")
    floor = best.saving_pct * p / 100.0
    keep = [c for c in qual if c.saving_pct >= floor - 1e-9 * abs(floor)]
    chosen = min(keep, key=lambda c: (c.changed, -c.saving_pct, c.eval_id))
    why = (f"{chosen.changed} changed parameter(s) vs baseline {name}; saves {chosen.saving_pct:.2f}% {energy} on "
           f"the re-check seeds, >= {p:g}% of the best {best.saving_pct:.2f}% (eval {best.eval_id}), {others} "
           "no worse")
    return chosen.eval_id, why
