"""Helpers shared by the scripts of scripts/paper/ (run with `python scripts/paper/<script>.py`)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

from paretosched.config import set_path
from paretosched.search.cache import Cache
from paretosched.search.evaluate import Engine
from paretosched.yamlio import read_yaml


def run_inputs(run_dir: str | Path) -> tuple[dict[str, Any], list[int], list[int]]:
    """The resolved base config, the replication seeds and the re-check seeds of a run directory."""
    study = read_yaml(Path(run_dir) / "study.yaml")
    return study["base"], list(study["seeds"]), list(study.get("recheck") or [])


def run_front(run: Any) -> Any:
    """The search layer's front (summary.json "front", the end-of-run table's), else `front_of`.

    With dynamic resampling `front_of` also ranks genomes the budget left on one seed, so it can
    list points the search never admitted (and pick another balanced point) than `optimise` printed."""
    from paretosched.analysis.front import front_of

    ids = run.summary.front  # a Summary record (paretosched.search.summary), not a dict
    if not ids:
        return front_of(run)
    f = run.frame.loc[[int(i) for i in ids]]
    return f.sort_values([run.objectives[0], "eval_id"], kind="mergesort")


def baselines(run: Any) -> dict[str, dict[str, Any]]:
    """summary.json's baselines as plain mappings (name -> eval_id, status, objectives, ...)."""
    return {name: b.to_json() for name, b in run.summary.baselines.items()}


def recheck_objectives(run: Any, eval_id: int) -> dict[str, float] | None:
    """The objectives of a front point's re-check row (None when it was not re-checked)."""
    row = run.rechecks.get(int(eval_id))
    return None if row is None else row.objectives


def with_values(base: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """A copy of `base` with dotted-path values set (as a genome does)."""
    cfg = copy.deepcopy(base)
    for path, v in values.items():
        set_path(cfg, path, v)
    return cfg


def evaluate(configs: list[dict[str, Any]], seeds: list[int], workers: int, cache_dir: str | Path,
             objectives: tuple[str, ...] = ("energy_kwh", "mean_bsld")) -> list[dict[str, float] | None]:
    """Mean objectives over `seeds` of each config (None when a seed failed); cached by content."""
    tasks = [(c, s) for c in configs for s in seeds]
    with Engine(workers=workers, cache=Cache(cache_dir)) as eng:
        res = eng.evaluate(tasks)
    out: list[dict[str, float] | None] = []
    for k in range(len(configs)):
        rs = res[k * len(seeds):(k + 1) * len(seeds)]
        if any(r.status != "ok" or r.metrics is None for r in rs):
            out.append(None)
        else:
            out.append({o: float(np.mean([r.metrics[o] for r in rs])) for o in objectives})
    return out


def front_mask(F: np.ndarray) -> np.ndarray:
    """Non-dominated rows of F (all minimised)."""
    from paretosched.search.pareto import front_indices

    m = np.zeros(len(F), dtype=bool)
    m[front_indices(F)] = True
    return m


def energy_at(E: np.ndarray, B: np.ndarray, b: float) -> float | None:
    """Cheapest energy among points whose slowdown is <= b (a configuration that attains it)."""
    ok = B <= b
    return float(E[ok].min()) if ok.any() else None


def energy_interp(E: np.ndarray, B: np.ndarray, b: float) -> float | None:
    """Energy of the front's staircase-free interpolation at slowdown b (None outside its range).

    The front (non-dominated points, sorted by slowdown) is joined by straight segments; this is
    what `numpy.interp` gives between the two points that bracket b."""
    F = np.column_stack([E, B])
    f = F[front_mask(F)]
    f = f[np.argsort(f[:, 1])]
    if len(f) == 0 or b < f[0, 1]:
        return None
    if b >= f[-1, 1]:
        return float(f[-1, 0])
    return float(np.interp(b, f[:, 1], f[:, 0]))


def save_figure(fig: Any, png: str | Path) -> None:
    """Lay out `fig`, write it to `png` (creating its folder) and say where."""
    fig.tight_layout()
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png)
    print(f"figure: {png}")
