"""Synthetic run directories (docs/rundir.md) so analysis tests need no optimiser.

`write_run(dir, points)` writes study.yaml, evaluations.jsonl, summary.json and
population.json for a list of `Point`s. Objectives are the mean of per-seed values computed
with the same summation rule as `paretosched.sim.engine.metrics.mean_metrics`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

OBJECTIVES = [{"name": "energy_kwh", "sense": "min"}, {"name": "mean_bsld", "sense": "min"}]

GENES: dict[str, dict[str, Any]] = {
    "scheduler.freq": {"type": "float", "low": 0.5, "high": 1.0, "log": False},
    "scheduler.power_off_idle_s": {"type": "float", "low": 1.0, "high": 1000.0, "log": True},
    "scheduler.min_nodes_on": {"type": "int", "low": 0, "high": 8, "log": False},
    "scheduler.job_policy": {"type": "choice", "values": ["first", "shortest", "smallest"]},
    "scheduler.backfilling": {"type": "bool", "values": ["none", "easy"]},
}

BASE: dict[str, Any] = {
    "platform": "homogeneous-4",
    "workload": {"path": None, "jobs": [{"run_s": 10.0, "cores": 2}, {"run_s": 20.0, "submit_s": 5.0}],
                 "mode": "trace", "first_job": 0, "n_jobs": None, "seed": None},
    "model": {"interference": "thesis", "p1_speed": 0.75, "p2_power": 0.25, "p3_power": 0.05, "static_power": 0.3},
    "scheduler": {"kind": "classic", "job_policy": "first", "resource_policy": "high_gflops", "backfilling": "none",
                  "bw_cap": None, "power_off_idle_s": None, "min_nodes_on": 0, "boot_s": None, "boot_j": None,
                  "off_w": None, "freq": 1.0, "freq_by_type": {}},
    "seed": 0,
    "provenance": None,
}

SEEDS = [11, 22, 33]


@dataclass
class Point:
    objectives: tuple[float, ...]
    genome: dict[str, Any] = field(default_factory=dict)
    generation: int = 0
    kind: str = "search"
    status: str = "ok"
    name: str | None = None
    extra_metrics: dict[str, float] = field(default_factory=dict)
    recheck_of: int | None = None  # kind "recheck": the eval id it re-runs on fresh seeds


def default_genome(i: int) -> dict[str, Any]:
    return {"scheduler.freq": 0.5 + 0.5 * ((i * 7) % 11) / 10, "scheduler.power_off_idle_s": float(10 ** (i % 4)),
            "scheduler.min_nodes_on": i % 9, "scheduler.job_policy": ["first", "shortest", "smallest"][i % 3],
            "scheduler.backfilling": ["none", "easy"][i % 2]}


def _row(eval_id: int, p: Point, objectives: list[dict[str, str]], genes: dict[str, Any]) -> dict[str, Any]:
    genome = dict(p.genome) if p.kind != "baseline" else {}
    if p.kind == "search" and not genome:
        genome = default_genome(eval_id)
    cfg = json.loads(json.dumps(BASE))
    for path, v in genome.items():
        sec, key = path.split(".")
        cfg[sec][key] = v
    names = [o["name"] for o in objectives]
    per_seed = []
    for k, s in enumerate(SEEDS):
        if p.status != "ok":
            per_seed.append({"seed": s, "status": "failed", "metrics": None, "error": "RuntimeError: boom",
                             "wall_s": 0.01, "cached": False})
            continue
        # per-seed values around the target mean: offsets -d, 0, +d keep the exact mean only
        # approximately, so the logged mean is recomputed from them below (as the search does)
        m = {n: float(v) * (1.0 + 0.01 * (k - 1)) for n, v in zip(names, p.objectives)}
        m.update(p.extra_metrics)
        m.setdefault("makespan_s", 100.0 + eval_id)
        m.setdefault("utilisation", 0.5)
        per_seed.append({"seed": s, "status": "ok", "metrics": m, "error": None, "wall_s": 0.01, "cached": False})
    if p.status == "ok":
        ms = [ps["metrics"] for ps in per_seed]
        metrics = {key: sum(x[key] for x in ms) / len(ms) for key in ms[0]}
        objs = {n: metrics[n] for n in names}
    else:
        metrics = objs = None
    return {"eval_id": eval_id, "kind": p.kind, "generation": -1 if p.kind == "baseline" else p.generation,
            "name": p.name, "recheck_of": p.recheck_of, "genome": genome,
            "x": {k: v for k, v in genome.items()}, "config": cfg, "seeds": list(SEEDS), "per_seed": per_seed,
            "metrics": metrics, "objectives": objs, "status": p.status,
            "error": None if p.status == "ok" else "RuntimeError: boom", "wall_s": 0.03}


def write_run(d: Path, points: list[Point], *, objectives: list[dict[str, str]] | None = None,
              genes: dict[str, Any] | None = None, population: list[int] | None = None, name: str = "synth",
              summary_extra: dict[str, Any] | None = None, torn_tail: bool = False) -> Path:
    d = Path(d)
    d.mkdir(parents=True, exist_ok=True)
    objectives = objectives or OBJECTIVES
    genes = genes if genes is not None else GENES
    rows = [_row(i, p, objectives, genes) for i, p in enumerate(points)]
    study = {"name": name, "base": BASE, "search": genes, "objectives": objectives, "seeds": SEEDS,
             "seed": 0, "budget": {"evaluations": len(points)}}
    (d / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if torn_tail:
        text += '{"eval_id": 99999, "kind": "sea'
    (d / "evaluations.jsonl").write_text(text)
    gens = sorted({r["generation"] for r in rows if r["kind"] == "search"})
    for r in rows:  # a re-check row runs at the end, on the last generation
        if r["kind"] == "recheck":
            r["generation"] = gens[-1] if gens else 0
    summary = {"study": name, "status": "done", "objectives": objectives, "generations": [
        {"generation": g, "evaluations": sum(1 for r in rows if r["kind"] == "search" and r["generation"] <= g)}
        for g in gens], "baselines": {}}
    summary.update(summary_extra or {})
    (d / "summary.json").write_text(json.dumps(summary))
    search_ids = [r["eval_id"] for r in rows if r["kind"] == "search"]
    pop = population if population is not None else search_ids[-20:]
    (d / "population.json").write_text(json.dumps({"generation": gens[-1] if gens else 0, "final": True,
                                                   "eval_ids": pop, "rank": [0] * len(pop)}))
    return d


def recheck_block(front: dict[int, tuple[float, ...]], baselines: dict[str, tuple[float, ...]],
                  dominated: list[str] | None, median: dict[str, float] | None = None,
                  dominated_by: dict[int, list[str]] | None = None, spread: float = 0.1) -> dict[str, Any]:
    """summary.json's new `recheck` block; per-seed values are mean * (1 -+ spread)."""
    names = [o["name"] for o in OBJECTIVES]

    def entry(vals: tuple[float, ...]) -> dict[str, Any]:
        objs = dict(zip(names, vals))
        per_seed = [{"seed": s, "objectives": {n: v * (1 + k * spread) for n, v in objs.items()}}
                    for s, k in ((101, -1), (202, 1))]
        return {"objectives": objs, "per_seed": per_seed}

    block: dict[str, Any] = {
        "seeds": [101, 202],
        "front": [{"eval_id": i, **entry(v), **({"dominated_by_baseline": (dominated_by or {})[i]}
                                               if i in (dominated_by or {}) else {})} for i, v in front.items()],
        "baselines": {n: entry(v) for n, v in baselines.items()},
        "median_rel_change": median or {},
    }
    if dominated is not None:
        block["dominated_baselines"] = dominated
    return block
