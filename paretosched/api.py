"""The Python API (docs/api.md): `simulate` a config, `optimise` a study, `load_run` a run.

It sits at the command line's level (it may call sim, search and analysis) and takes what a
notebook has at hand: a dict, a file path or a validated object. The model is pymoo's
`minimize -> Result`: `optimise` returns a `Run`, not a folder.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pandas as pd

from paretosched.arguments import ADDRESS, CONFIG, FLAG, OPTIONAL_PATH, SEEDS, STUDY, WORKERS, checked, plain
from paretosched.config import SimConfig, config_from_dict, load_config
from paretosched.errors import UserError
from paretosched.runs import Run, load_run
from paretosched.yamlio import dump_yaml, validate

if TYPE_CHECKING:
    from paretosched.search.study import Study

__all__ = ["Simulation", "simulate", "optimise", "optimize", "load_run", "Run"]


@dataclass(frozen=True)
class Simulation:
    """What `simulate` returns: metrics per seed and their mean (the search's rule)."""

    config: SimConfig
    seeds: list[int]
    per_seed: pd.DataFrame            # one row per seed: `seed`, then every metric
    metrics: dict[str, float]         # mean over seeds (sim.metrics.mean_metrics)
    jobs: pd.DataFrame | None = None  # with jobs=True: one row per job and seed (`seed` first)
    note: str | None = None           # e.g. the trace ends before the configured window


def as_config(config: SimConfig | dict[str, Any] | str | Path) -> SimConfig:
    """A SimConfig from a dict (relative paths from the working directory), a file or a SimConfig."""
    if isinstance(config, SimConfig):
        return config
    if isinstance(config, dict):
        return config_from_dict(plain(config), "<config dict>").resolved(Path.cwd())
    if isinstance(config, (str, Path)):
        return load_config(config)
    raise UserError(f"config: expected a dict, a file path or a SimConfig, got {type(config).__name__}")


@checked(config=CONFIG, seeds=SEEDS, jobs=FLAG)
def simulate(config: SimConfig | dict[str, Any] | str | Path, seeds: int | Sequence[int] | None = None,
             jobs: bool = False) -> Simulation:
    """Run a config on the twin for each seed, as `paretosched simulate` does; `jobs=True` adds
    per-job records.

    `seeds` follows a study's rule: an int n is n seeds, derived from the config's `seed` as a
    study derives its replication seeds from its own `seed` (so `seeds=3` runs the three seeds a
    study with `seeds: 3, seed: <config seed>` evaluates); a list is the seeds themselves (`[3]`
    is seed 3); None is an export's provenance seeds, else the config's `seed`.
    """
    from paretosched.sim.engine.metrics import mean_metrics
    from paretosched.sim.run import prepare, simulate as simulate_one, window_note

    cfg = as_config(config)
    seed_list = _seed_list(cfg, seeds)
    prep = prepare(cfg)
    results = [simulate_one(cfg, seed=s, record_jobs=jobs, prepared=prep) for s in seed_list]
    per_seed = pd.DataFrame.from_records([{"seed": s, **r.metrics} for s, r in zip(seed_list, results)])
    job_table = None
    if jobs:
        job_table = pd.DataFrame.from_records([{"seed": s, **j} for s, r in zip(seed_list, results) for j in r.jobs])
    return Simulation(config=cfg, seeds=seed_list, per_seed=per_seed,
                      metrics=mean_metrics([r.metrics for r in results]), jobs=job_table,
                      note=window_note(cfg, prep))


@checked(study=STUDY, out=OPTIONAL_PATH, workers=WORKERS, resume=FLAG, dask=ADDRESS, quiet=FLAG)
def optimise(study: Study | dict[str, Any] | str | Path, out: str | Path | None = None, workers: int | None = None, resume: bool = False,
             dask: str | None = None, quiet: bool = False) -> Run:
    """Run (or with `resume`, continue) a study given as a file, a dict or a `Study`; returns
    its `Run`. `out` defaults to runs/<study name>, as `paretosched optimise`. `quiet=True`
    writes no progress on stderr (not even the command's --quiet lines: the `Run` holds what
    they say); only results the evaluation cache gave are still said, as they explain a run
    that took no time."""
    if not quiet:
        return _said(_optimise(study, out, workers, resume, dask, quiet))
    with contextlib.redirect_stderr(io.StringIO()):
        run = _optimise(study, out, workers, resume, dask, quiet)
    return _said(run)


def _optimise(study: Study | dict[str, Any] | str | Path, out: str | Path | None, workers: int | None, resume: bool,
              dask: str | None, quiet: bool) -> Run:
    from paretosched.search.optimise import optimise as run_study

    kw: dict[str, Any] = {"out": None if out is None else str(out), "resume": resume, "workers": workers,
                          "dask": dask, "quiet": quiet, "silent": quiet}
    if isinstance(study, (str, Path)):
        return _said(load_run(_api_words(lambda: run_study(str(study), **kw))), quiet)
    resolved = _resolved_study(study)
    # the search layer starts from a study file (it records, re-reads and compares it on
    # resume); a resolved study is self-contained (absolute paths, explicit seeds), so a
    # temporary copy of it is that file
    with tempfile.TemporaryDirectory(prefix="paretosched-study-") as tmp:
        path = Path(tmp) / f"{resolved.name}.yaml"
        path.write_text(dump_yaml(resolved.model_dump(mode="json"), sort_keys=False), encoding="utf-8")
        run_dir = _api_words(lambda: run_study(str(path), **kw), str(path))
    return _said(load_run(run_dir), quiet)


def _api_words(call: Callable[[], Path], tmp_file: str | None = None) -> Path:
    """`call()`, its errors worded for the API: the CLI's flags as `optimise`'s arguments, and
    `<study dict>` for the temporary copy of a study given as a dict or a Study."""
    try:
        return call()
    except UserError as exc:
        msg = str(exc).replace("--resume", "resume=True").replace("--out", "out=")
        raise UserError(msg.replace(tmp_file, "<study dict>") if tmp_file else msg) from None


def _said(run: Run, quiet: bool = False) -> Run:
    """`run`, after saying on stderr how many seed results the hidden evaluation cache gave (and where it is)."""
    from paretosched.search.rundir import cache_note

    s = run.summary
    if s.n_cache_hits and not quiet:  # a re-run that "finished in 0.15 s" must say why, as the CLI's table does
        print(cache_note(run.path, s.n_cache_hits, s.n_simulations), file=sys.stderr)
    return run


optimize = optimise


def _seed_list(cfg: SimConfig, seeds: int | Sequence[int] | None) -> list[int]:
    """The seeds `simulate` runs (its docstring has the rule)."""
    from paretosched.search.study import Study, derive_seeds

    if seeds is None:  # the rule of `paretosched simulate`: an export replays the seeds it was found with
        recorded = (cfg.provenance or {}).get("seeds")
        if isinstance(recorded, list) and recorded:  # free-form (a user may edit it): the seeds rule all the same
            return list(SEEDS.check(recorded, "provenance.seeds"))
        return [cfg.seed]
    if isinstance(seeds, int):  # a count (`arguments.SEEDS` checked its range)
        # the study's own derivation: only `seed`, `seeds` and `recheck` are read, so an unvalidated
        # Study carrying those three is the study that rule applies to
        return derive_seeds(Study.model_construct(seed=cfg.seed, seeds=seeds, recheck=0))[0]
    return list(seeds)


def _resolved_study(study: Study | dict[str, Any]) -> Study:
    """A dict or a `Study` validated and resolved as a study file in the working directory is."""
    from paretosched.search.study import Study, resolve_study

    if isinstance(study, dict):
        study = validate(Study, plain(study), "<study dict>")
    elif not isinstance(study, Study):
        raise UserError(f"study: expected a file path, a dict or a Study, got {type(study).__name__}")
    return resolve_study(study, Path("<study>"))
