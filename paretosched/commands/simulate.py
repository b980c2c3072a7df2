"""`paretosched simulate`: run a config (one or several seeds), print a table or JSON, write files."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path
from typing import Any

from paretosched.commands.outputs import json_safe, refuse_existing, say_replaced
from paretosched.config import BUILTIN_PREFIX, SimConfig, load_config, resolve_path
from paretosched.errors import UserError
from paretosched.sim.engine.metrics import mean_metrics
from paretosched.sim.run import freq_note, prepare, simulate, window_note
from paretosched.sim.readers.workload import min_run_note

_KEYS = ("workload", "scheduler", "platform", "model")  # messages that start with a config key
_TIMELINE_TABLES = ("timeline", "overuse")  # the frames of sim.timeline, one CSV each with --out

# (metric, label, format) rows of the readable table
_TABLE = (
    ("n_jobs", "jobs", "{:.0f}"),
    ("energy_kwh", "energy (kWh)", "{:.4f}"),
    ("mean_power_w", "mean power (W)", "{:.1f}"),
    ("makespan_s", "makespan (s)", "{:.1f}"),
    ("utilisation", "utilisation", "{:.4f}"),
    ("mean_wait_s", "mean wait (s)", "{:.1f}"),
    ("median_wait_s", "median wait (s)", "{:.1f}"),
    ("max_wait_s", "max wait (s)", "{:.1f}"),
    ("mean_turnaround_s", "mean turnaround (s)", "{:.1f}"),
    ("mean_slowdown", "mean slowdown", "{:.3f}"),
    ("max_slowdown", "max slowdown", "{:.3f}"),
    ("mean_bsld", "mean bounded slowdown", "{:.3f}"),
    ("p95_bsld", "p95 bounded slowdown", "{:.3f}"),
    ("max_bsld", "max bounded slowdown", "{:.3f}"),
)


def apply_overrides(cfg: SimConfig, args: Any) -> SimConfig:
    data = cfg.model_dump()
    for option, value in (("--platform", args.platform), ("--workload", args.workload)):
        if value is not None and not value.strip():
            raise UserError(f"{option}: empty value (leave the option out to keep the config's)")
    if args.platform:
        data["platform"] = args.platform
    wl = data["workload"]
    if args.workload:
        # a bundled trace keeps its name (inputs.py resolves it inside the package); a file is
        # taken from the current folder, not the config's
        path = args.workload if args.workload.startswith(BUILTIN_PREFIX) else resolve_path(Path(args.workload),
                                                                                            "--workload")
        wl["path"], wl["jobs"] = path, None
    if args.first_job is not None:
        wl["first_job"] = args.first_job
    if args.n_jobs is not None:
        wl["n_jobs"] = args.n_jobs
    from paretosched.config import config_from_dict

    return config_from_dict(data, source=f"{args.config} (with command-line overrides)")


def run_simulate(args: Any) -> int:
    cfg = apply_overrides(load_config(args.config), args)
    if args.seeds:
        seeds = args.seeds
    elif args.seed is not None:
        seeds = [args.seed]
    elif cfg.provenance and isinstance(cfg.provenance.get("seeds"), list) and cfg.provenance["seeds"]:
        seeds = _provenance_seeds(cfg.provenance["seeds"], args.config)
    else:
        seeds = [cfg.seed]
    _warn_if_other_twin(cfg)
    if args.timeline and not (args.out or args.plots):
        raise UserError("--timeline: needs --out DIR (the timeline tables) or --plots DIR (its charts)")
    want_tl = bool(args.timeline or args.plots or cfg.timeline)
    replaced = _refuse_existing_outputs(args, seeds, want_tl)
    try:
        prep = prepare(cfg)
        for note in (window_note(cfg, prep), freq_note(cfg, prep.platform)):
            if note:
                print(f"paretosched: note: {note}", file=sys.stderr)
        # in a process of its own, the last run's objects are left to the exit (`process_ends`)
        last = len(seeds) - 1 if getattr(args, "own_process", False) else -1
        results = [simulate(cfg, seed=s, record_jobs=bool(args.out or args.plots), prepared=prep, timeline=want_tl,
                            process_ends=i == last) for i, s in enumerate(seeds)]
    except UserError as exc:  # a key path alone ('workload.jobs: ...') gets the file it is in
        msg = str(exc)
        raise UserError(f"{args.config}: {msg}" if msg.startswith(_KEYS) else msg) from None
    note = min_run_note(results[0].load)
    if note:
        print(f"paretosched: note: {note}", file=sys.stderr)
    metrics = mean_metrics([r.metrics for r in results]) if len(results) > 1 else results[0].metrics
    written: list[Path] = []
    if args.out:
        written += _write_outputs(Path(args.out), seeds, results, metrics)
    if args.plots:
        from paretosched.analysis.runplots import write_run_plots

        written.append(write_run_plots(Path(args.plots), prep.platform, results[0].jobs, results[0].timeline,
                                       title=str(args.config)))
    say_replaced(replaced)
    if args.json:
        print(json.dumps(json_safe(metrics), sort_keys=False, allow_nan=False))
    else:
        _print_table(cfg, seeds, results[0].load, metrics)
    if written:  # stdout stays one JSON object with --json
        print(f"wrote {', '.join(map(str, written))}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _refuse_existing_outputs(args: Any, seeds: list[int], want_tl: bool) -> list[Path]:
    """The files --out and --plots would replace (an error without --force, before simulating)."""
    files: list[Path] = []
    if args.out:
        out = Path(args.out)
        files += [out / "jobs.csv", out / "metrics.json"]
        if want_tl:
            suffixes = [f"_seed{s}" for s in seeds] if len(seeds) > 1 else [""]
            files += [out / f"{name}{sfx}.csv" for sfx in suffixes for name in _TIMELINE_TABLES]
    existing = refuse_existing(files, "--out", args.force)
    if args.plots:
        from paretosched.analysis.runplots import RUN_PAGE

        existing += refuse_existing([Path(args.plots) / RUN_PAGE], "--plots", args.force)
    return existing


def _provenance_seeds(seeds: list[Any], source: str) -> list[int]:
    """The seeds an export recorded (provenance is free-form: `export` writes it, a user may edit it)."""
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise UserError(f"{source}: provenance.seeds.{i}: expected a non-negative integer seed (got {s!r})")
        if s in seeds[:i]:  # one run counted twice (the study's rule, search.study.Seeds)
            raise UserError(f"{source}: provenance.seeds.{i}: seed {s} is listed twice (expected distinct seeds)")
    return list(seeds)


def _warn_if_other_twin(cfg: SimConfig) -> None:
    """An exported config records the twin that produced its objectives; say when this one differs."""
    recorded = (cfg.provenance or {}).get("twin_version")
    if not recorded:
        return
    from paretosched.sim import twin_version

    current = twin_version()
    if recorded != current:
        print(f"paretosched: note: this config's objectives were recorded by twin {recorded}; this is "
              f"{current}, whose numbers may differ", file=sys.stderr)


def _print_table(cfg: SimConfig, seeds: list[int], load: dict[str, Any], metrics: dict[str, float]) -> None:
    sch = cfg.scheduler
    desc = getattr(sch, "job_policy", "") and f"{sch.job_policy}-{sch.resource_policy}, backfilling {sch.backfilling}"
    plat = cfg.platform if isinstance(cfg.platform, str) else cfg.platform.get("name", "inline")
    skipped = sum(load["skipped"].values())
    print(f"platform {plat}; scheduler {sch.kind} {desc}; interference {cfg.model.interference}")
    print(f"workload {load['source']}: {load['lines']} job lines, {load['loaded']} loaded, {skipped} skipped"
          + (f" ({', '.join(f'{k}: {v}' for k, v in load['skipped'].items() if v)})" if skipped else ""))
    print(f"seeds {', '.join(map(str, seeds))}" + (" (metrics are means over seeds)" if len(seeds) > 1 else ""))
    width = max(len(label) for _, label, _ in _TABLE)
    for key, label, fmt in _TABLE:
        print(f"  {label:<{width}}  {fmt.format(metrics[key])}")


def _write_outputs(out: Path, seeds: list[int], results: list[Any], metrics: dict[str, float]) -> list[Path]:
    """Write jobs.csv, the timeline tables and metrics.json into `out`; returns the files written."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create folder: {exc}") from None
    rows = [dict(seed=s, **row) for s, r in zip(seeds, results) for row in r.jobs]
    tmp = out / "jobs.csv.tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        if rows:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    os.replace(tmp, out / "jobs.csv")
    written = [out / "jobs.csv"]
    for s, r in zip(seeds, results):
        if r.timeline is not None:
            suffix = f"_seed{s}" if len(results) > 1 else ""
            for name, frame in r.timeline.items():
                frame.to_csv(out / f"{name}{suffix}.csv", index=False)
                written.append(out / f"{name}{suffix}.csv")
    doc = {"metrics": metrics, "seeds": seeds, "per_seed": [r.metrics for r in results],
           "energy_unattributed_j": [r.energy_unattributed_j for r in results], "load": results[0].load}
    tmp = out / "metrics.json.tmp"
    tmp.write_text(json.dumps(json_safe(doc), indent=2, allow_nan=False), encoding="utf-8")
    os.replace(tmp, out / "metrics.json")
    return written + [out / "metrics.json"]
