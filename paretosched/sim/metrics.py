"""Per-run metrics from finished jobs (every key carries its unit)."""

from __future__ import annotations

import math
from typing import Any

BSLD_TAU_S = 10.0
J_PER_KWH = 3.6e6

METRIC_NAMES: tuple[str, ...] = (
    "energy_j", "energy_kwh", "makespan_s", "mean_power_w",
    "mean_wait_s", "median_wait_s", "p95_wait_s", "max_wait_s",
    "mean_turnaround_s", "median_turnaround_s",
    "mean_slowdown", "median_slowdown", "p95_slowdown", "max_slowdown",
    "mean_bsld", "median_bsld", "p95_bsld", "max_bsld",
    "utilisation", "n_jobs", "n_boots", "boot_energy_kwh",
)


def _quantile(sorted_vals: list[float], q: float) -> float:
    """Linear-interpolated quantile (numpy's default) of an already sorted list."""
    n = len(sorted_vals)
    if n == 0:
        return math.nan
    pos = q * (n - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def _stats(prefix: str, vals: list[float], suffix: str = "", with_p95: bool = True) -> dict[str, float]:
    s = sorted(vals)
    n = len(s)
    out = {
        f"mean_{prefix}{suffix}": sum(s) / n if n else math.nan,
        f"median_{prefix}{suffix}": _quantile(s, 0.5),
        f"max_{prefix}{suffix}": s[-1] if n else math.nan,
    }
    if with_p95:
        out[f"p95_{prefix}{suffix}"] = _quantile(s, 0.95)
    return out


def compute_metrics(jobs: list[Any], energy_j: float, n_cores: int, boots: int = 0,
                    boot_energy_j: float = 0.0) -> dict[str, float]:
    """Energy, makespan (last end - first submit), wait, turnaround, slowdown, bounded slowdown, utilisation."""
    if not jobs:
        return {k: 0.0 for k in METRIC_NAMES}
    first_submit = min(j.submit for j in jobs)
    last_end = max(j.end for j in jobs)
    makespan = last_end - first_submit
    waits, turns, sld, bsld = [], [], [], []
    busy = 0.0
    for j in jobs:
        run = j.end - j.start
        turn = j.end - j.submit
        waits.append(j.start - j.submit)
        turns.append(turn)
        sld.append(turn / max(run, 1.0))
        bsld.append(max(1.0, turn / max(run, BSLD_TAU_S)))
        busy += run * j.size
    m: dict[str, float] = {
        "energy_j": energy_j,
        "energy_kwh": energy_j / J_PER_KWH,
        "makespan_s": makespan,
        "mean_power_w": energy_j / makespan if makespan > 0 else 0.0,
        "utilisation": busy / (n_cores * makespan) if makespan > 0 else 0.0,
        "n_jobs": float(len(jobs)),
        "n_boots": float(boots),
        "boot_energy_kwh": boot_energy_j / J_PER_KWH,
    }
    m.update(_stats("wait", waits, "_s"))
    m.update(_stats("turnaround", turns, "_s", with_p95=False))
    m.update(_stats("slowdown", sld))
    m.update(_stats("bsld", bsld))
    return {k: m[k] for k in METRIC_NAMES}


def mean_metrics(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Mean of each metric over seeds, summed in seed order (the one rule search and simulate share)."""
    n = len(per_seed)
    return {k: sum(m[k] for m in per_seed) / n for k in per_seed[0]}
