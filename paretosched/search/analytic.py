"""An analytic bi-objective mixed-variable problem with a known front, to test the search
layer without the twin (`evaluator: paretosched.search.analytic:evaluate` in a study).

It reads five genes from real scheduler-config paths, so study validation, decoding and the
run directory are exercised exactly as with the twin:

    t = (scheduler.freq - 0.1) / 0.9                         in [0, 1]   (float)
    u = log10(scheduler.power_off_idle_s) / 4                 in [0, 1]   (float, log gene, 1..1e4 s)
    k = scheduler.min_nodes_on                                in 0..10    (int)
    c = scheduler.job_policy                                  (choice)
    b = scheduler.backfilling                                 (bool gene: none/easy)

    g = 1 + 4 (u - 1/2)^2 + 0.05 (k - 3)^2 + 0.5 [c != shortest] + 0.5 [b != easy]
    energy_kwh = t,    mean_bsld = g (1 - sqrt(t / g))        (ZDT1 in its objectives)

The Pareto set is u = 1/2 (100 s), k = 3, c = shortest, b = easy, any t; the front is
mean_bsld = 1 - sqrt(energy_kwh), energy_kwh in [0, 1]. Its exact hypervolume for the
reference point (r1, r2) with r1 >= 1, r2 >= 1 is (r2 - 1 + 2/3) + (r1 - 1) r2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def _objectives(cfg: dict[str, Any]) -> tuple[float, float]:
    s = cfg["scheduler"]
    t = (float(s["freq"]) - 0.1) / 0.9
    t = min(max(t, 0.0), 1.0)
    idle = s.get("power_off_idle_s")
    u = math.log10(float(idle)) / 4.0 if idle else 0.0
    k = int(s.get("min_nodes_on", 0))
    g = (1.0 + 4.0 * (u - 0.5) ** 2 + 0.05 * (k - 3) ** 2
         + 0.5 * (s.get("job_policy") != "shortest") + 0.5 * (s.get("backfilling") != "easy"))
    return t, g * (1.0 - math.sqrt(t / g))


def evaluate(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """Metrics of the analytic problem; seed-dependent only in metrics that are not objectives."""
    f1, f2 = _objectives(cfg)
    return {
        "energy_kwh": f1,
        "mean_bsld": f2,
        "utilisation": 1.0 - 0.5 * f1,
        "makespan_s": 1000.0 + float(seed % 97),  # shows that per-seed values are kept
        "n_jobs": 1.0,
    }


def evaluate_noisy(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """As `evaluate` plus seeded noise on mean_bsld (common random numbers across genomes)."""
    m = evaluate(cfg, seed)
    m["mean_bsld"] += 0.01 * float(np.random.default_rng(seed).standard_normal())
    return m


def evaluate_lucky(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """As `evaluate` plus noise on mean_bsld that differs per genome and seed (sd 0.05), so a
    genome can be lucky on its search seeds: a front selected on few seeds overfits them."""
    import zlib

    m = evaluate(cfg, seed)
    genome = zlib.crc32(repr(sorted(cfg["scheduler"].items())).encode())
    m["mean_bsld"] += 0.05 * float(np.random.default_rng([seed, genome]).standard_normal())
    return m


def true_hypervolume(r1: float = 1.1, r2: float = 1.1) -> float:
    """Exact hypervolume of the true front (continuous) for reference point (r1, r2) >= (1, 1)."""
    if r1 < 1 or r2 < 1:
        raise ValueError("the closed form needs r1 >= 1 and r2 >= 1")
    return (r2 - 1.0 + 2.0 / 3.0) + (r1 - 1.0) * r2


def study_dict(budget: dict[str, Any] | None = None, **overrides: Any) -> dict[str, Any]:
    """A ready study dict for this problem (tests and the quality benchmark start from it)."""
    study: dict[str, Any] = {
        "name": "analytic",
        "base": {"platform": "homogeneous-4", "workload": {"jobs": [{"run_s": 10.0}]}},
        "search": {
            "scheduler.freq": {"type": "float", "low": 0.1, "high": 1.0},
            "scheduler.power_off_idle_s": {"type": "float", "low": 1.0, "high": 10000.0, "log": True},
            "scheduler.min_nodes_on": {"type": "int", "low": 0, "high": 10},
            "scheduler.job_policy": {"type": "choice",
                                     "values": ["random", "first", "shortest", "smallest", "low_mem", "low_mem_bw"]},
            "scheduler.backfilling": {"type": "bool", "values": ["none", "easy"]},
        },
        "objectives": ["energy_kwh", "mean_bsld"],
        "seeds": 1,
        "seed": 1,
        "budget": budget if budget is not None else {"generations": 10},
        "algorithm": {"pop_size": 20},
        "reference_point": {"energy_kwh": 1.1, "mean_bsld": 1.1},
        "evaluator": "paretosched.search.analytic:evaluate",
        "recheck": 0,
        "resampling": None,  # off: the analytic objectives are noiseless (tests turn it on)
    }
    study.update(overrides)
    return study
