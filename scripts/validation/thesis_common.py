"""What the thesis-experiment scripts share: configs from studies/thesis/ with a window override."""

from __future__ import annotations

from pathlib import Path

from paretosched.config import SimConfig, load_config

REPO = Path(__file__).resolve().parents[2]


def configs(paths: dict[str, Path], trace: str | None, first_job: int | None,
            n_jobs: int | None) -> dict[str, SimConfig]:
    """Each named config, with the workload's trace/window replaced where given."""
    out = {}
    for name, path in paths.items():
        cfg = load_config(path)
        update = {"path": str(Path(trace).resolve()) if trace else None, "first_job": first_job, "n_jobs": n_jobs}
        wl = cfg.workload.model_copy(update={k: v for k, v in update.items() if v is not None})
        out[name] = cfg.model_copy(update={"workload": wl})
    return out


def with_progress(cfgs: dict[str, SimConfig], progress: str | None) -> dict[str, SimConfig]:
    """The configs with `model.progress` replaced where given (lockstep: Batsim's model)."""
    if not progress:
        return cfgs
    return {n: c.model_copy(update={"model": c.model.model_copy(update={"progress": progress})})
            for n, c in cfgs.items()}


def seed_ratios(cfgs: dict[str, SimConfig], num: str, den: str, keys: tuple[str, ...],
                seeds: int, prepared: dict | None = None) -> dict[str, list[float]]:
    """metric(num) / metric(den) for each seed in 0..seeds-1 (each seed redraws the enrichment)."""
    from paretosched.sim.run import simulate

    prepared = prepared or {}
    rows: dict[str, list[float]] = {k: [] for k in keys}
    for seed in range(seeds):
        m = {n: simulate(cfg, seed=seed, prepared=prepared.get(n)).metrics for n, cfg in cfgs.items()}
        for k in keys:
            rows[k].append(m[num][k] / m[den][k])
    return rows


def print_ratios(rows: dict[str, list[float]]) -> None:
    import statistics

    for k, v in rows.items():
        print(f"  {k}: {statistics.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]")
