"""Per-run metrics from finished jobs (every key carries its unit).

Slowdown is charged against each job's *reference* run time (`Job.ref_run`: its run time at the
platform's reference speed, which no scheduling decision changes), so a scheduler that slows
jobs down (DVFS, bandwidth over-use, slow cores) pays for it:

    slowdown = turnaround / max(ref_run, 1 s)        bsld = max(1, turnaround / max(ref_run, tau))

The thesis (and HDeepRM's code) divided by the *observed* run time, `end - start`, which the
scheduler itself stretches; those figures stay available as `*_observed` for comparisons with
published numbers. `mean_stretch` is the mean of observed / reference run time. `utilisation`
counts useful work (reference core-seconds) over capacity; `utilisation_observed` counts the
core-seconds jobs held, however slowly they ran.
"""

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
    "mean_stretch", "p95_stretch", "max_stretch",
    "mean_slowdown_observed", "median_slowdown_observed", "p95_slowdown_observed", "max_slowdown_observed",
    "mean_bsld_observed", "median_bsld_observed", "p95_bsld_observed", "max_bsld_observed",
    "utilisation", "utilisation_observed", "n_jobs", "n_boots", "boot_energy_kwh",
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
    # one comprehension per list (a run of 10,000 jobs: a third of one loop appending to all seven)
    waits = [j.start - j.submit for j in jobs]
    turns = [j.end - j.submit for j in jobs]
    runs = [j.end - j.start for j in jobs]
    refs = [j.ref_run for j in jobs]
    sld = [turn / max(ref, 1.0) for turn, ref in zip(turns, refs)]
    bsld = [max(1.0, turn / max(ref, BSLD_TAU_S)) for turn, ref in zip(turns, refs)]
    stretch = [run / ref if ref > 0 else 1.0 for run, ref in zip(runs, refs)]
    sld_obs = [turn / max(run, 1.0) for turn, run in zip(turns, runs)]
    bsld_obs = [max(1.0, turn / max(run, BSLD_TAU_S)) for turn, run in zip(turns, runs)]
    busy = useful = 0.0
    for j, run, ref in zip(jobs, runs, refs):  # summed in job order, as always
        busy += run * j.size
        useful += ref * j.size
    m: dict[str, float] = {
        "energy_j": energy_j,
        "energy_kwh": energy_j / J_PER_KWH,
        "makespan_s": makespan,
        "mean_power_w": energy_j / makespan if makespan > 0 else 0.0,
        "utilisation": useful / (n_cores * makespan) if makespan > 0 else 0.0,
        "utilisation_observed": busy / (n_cores * makespan) if makespan > 0 else 0.0,
        "n_jobs": float(len(jobs)),
        "n_boots": float(boots),
        "boot_energy_kwh": boot_energy_j / J_PER_KWH,
    }
    m.update(_stats("wait", waits, "_s"))
    m.update(_stats("turnaround", turns, "_s", with_p95=False))
    m.update(_stats("slowdown", sld))
    m.update(_stats("bsld", bsld))
    m.update(_stats("slowdown", sld_obs, "_observed"))
    m.update(_stats("bsld", bsld_obs, "_observed"))
    st = _stats("stretch", stretch)
    m.update({k: st[k] for k in ("mean_stretch", "p95_stretch", "max_stretch")})
    return {k: m[k] for k in METRIC_NAMES}


def mean_metrics(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Mean of each metric over seeds, summed in seed order (the one rule search and simulate share)."""
    n = len(per_seed)
    return {k: sum(m[k] for m in per_seed) / n for k in per_seed[0]}
