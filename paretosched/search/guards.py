"""Guards of `optimise` against inputs that would run code, or run for ever, unasked.

Evaluators: a study file names the function that turns a config into metrics. A study is data
(shared, downloaded, generated), so it may only name a *known* evaluator: the twin, or the
built-in analytic test problem (`paretosched.search.analytic:evaluate*`). Any other function
must be allowed by the person running the command, in the environment variable
`PARETOSCHED_EVALUATORS` (comma-separated `module:function`, or `module:*` for a whole
module); a study alone can then never make `optimise` call `os:system`.

Bounds: what one run may cost (docs/reliability.md). A leaf module: it imports no other part of
`paretosched.search`, so the study schema and the engine can both use it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from paretosched.errors import UserError

TWIN_EVALUATOR = "paretosched.search.twin:evaluate"
KNOWN_EVALUATORS = frozenset({TWIN_EVALUATOR})
KNOWN_MODULES = frozenset({"paretosched.search.analytic"})  # test problems: pure functions of (config, seed)
ALLOW_ENV = "PARETOSCHED_EVALUATORS"

MAX_POP_SIZE = 10_000
MAX_SEEDS = 1_000
MAX_WORKERS = 1_024
MAX_SIMULATIONS_PER_GENERATION = 1_000_000  # (pop or offspring) x seeds: a generation must end to checkpoint
MAX_SIMULATIONS = 100_000_000               # the whole budget, when it is counted in evaluations


def evaluator_allowed(ref: str) -> bool:
    """True for a known evaluator or one the environment allows (see the module doc)."""
    module, _, name = ref.partition(":")
    if ref in KNOWN_EVALUATORS or (module in KNOWN_MODULES and name.startswith("evaluate")):
        return True
    allowed = {a.strip() for a in os.environ.get(ALLOW_ENV, "").split(",") if a.strip()}
    return ref in allowed or f"{module}:*" in allowed


def require_evaluator(ref: str, src: str) -> None:
    """A UserError unless `ref` may be imported and called (before anything imports it)."""
    if not evaluator_allowed(ref):
        raise UserError(f"{src}: evaluator: {ref!r} is not a known evaluator (the twin, or "
                        f"paretosched.search.analytic:evaluate); to run your own function, allow it with "
                        f"{ALLOW_ENV}={ref} in the environment")


def evaluator_id(fn: Any) -> str | None:
    """The evaluator's 'module:function' for cache keys; None for the twin (keys unchanged)."""
    ref = fn if isinstance(fn, str) else f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
    return None if ref == TWIN_EVALUATOR else ref


def _screening_runs(study: Any) -> tuple[int, float]:
    """(screening runs per offspring kept, each one's share of an evaluation); (0, 0.0) without
    screening runs (no screening, or the forest's, which simulates nothing)."""
    scr = getattr(study, "screening", None)
    share = scr.budget_share if scr is not None else 0.0
    return (scr.factor, share) if share else (0, 0.0)


def _runs(study: Any) -> tuple[float, float] | None:
    """(genomes run in full, prefix-screening runs) of the whole search at most, per seed; None
    when only wall time bounds it."""
    alg, b = study.algorithm, study.budget
    off = alg.n_offsprings or alg.pop_size
    k, share = _screening_runs(study)
    runs: tuple[float, float] | None = None
    if b.evaluations is not None:
        # after generation 0, each offspring kept costs 1 + k x share evaluations (screening.room),
        # and the last evaluation may go unscreened
        gens = max(0.0, b.evaluations - alg.pop_size) / (1 + k * share)
        runs = (min(b.evaluations, alg.pop_size) + gens + (1 if k else 0), k * gens)
    if b.generations is not None:
        by_gen = (alg.pop_size + (b.generations - 1) * off, (b.generations - 1) * off * k)
        runs = by_gen if runs is None or sum(by_gen) < sum(runs) else runs
    return runs


def simulations(study: Any) -> tuple[int | None, int]:
    """(simulations of the whole search or None when only wall time bounds it, per generation)."""
    alg = study.algorithm
    n_seeds = len(study.seeds) if isinstance(study.seeds, list) else int(study.seeds)
    k = _screening_runs(study)[0]
    per_gen = max(alg.pop_size, (alg.n_offsprings or alg.pop_size) * (1 + k)) * n_seeds
    runs = _runs(study)
    return (None if runs is None else int(runs[0] + runs[1] + 1e-9) * n_seeds), per_gen


def check_cost(study: Any, src: str) -> str:
    """Refuse a study that cannot finish; else the line that says what it will cost."""
    total, per_gen = simulations(study)
    if per_gen > MAX_SIMULATIONS_PER_GENERATION:
        raise UserError(f"{src}: algorithm.pop_size x seeds = {per_gen} simulations per generation; at most "
                        f"{MAX_SIMULATIONS_PER_GENERATION} (a generation must finish to be checkpointed)")
    if total is not None and total > MAX_SIMULATIONS:
        raise UserError(f"{src}: budget: {total} simulations (evaluations x seeds); at most {MAX_SIMULATIONS}")
    n_seeds = len(study.seeds) if isinstance(study.seeds, list) else int(study.seeds)
    n_base = len(study.baselines) * n_seeds
    focus, spec = getattr(study, "focus", None), getattr(study, "resampling", None)
    every = {focus.baseline} if focus is not None else set()
    every |= {c.max_vs for c in getattr(study, "constraints", []) if c.max_vs is not None}
    if spec is not None and spec.max_seeds > n_seeds:
        n_base += len(every) * (spec.max_seeds - n_seeds)  # these baselines run on every seed a genome may reach
    limit = f"up to {total} simulations" if total is not None else "simulations until the wall time"
    wall = f", stops after {study.budget.wall_time_s:g} s" if study.budget.wall_time_s is not None else ""
    spec = getattr(study, "resampling", None)
    more = ""
    if spec is not None and spec.max_seeds > n_seeds:
        # near-front genomes get up to max_seeds: inside an evaluations budget but for the last
        # generation's resampling; with a generations budget, for every genome at worst
        extra = spec.max_seeds - n_seeds
        if total is not None:
            last = max(study.algorithm.pop_size, study.algorithm.n_offsprings or study.algorithm.pop_size)
            full = int((_runs(study) or (0, 0))[0])  # screen runs are never resampled
            top = total + last * extra if study.budget.evaluations is not None else total + full * extra
            limit = f"{total} to {top} simulations"
        more = f" (resampling: genomes near the front up to {spec.max_seeds} seeds)"
        if _speculates(study):  # CPU the count above leaves out: say it where the cost is read
            more += " (speculation: idle workers also run seeds resampling may ask for, some never used)"
    k, share = _screening_runs(study)
    if k:  # inside an evaluations budget, each counted as its share
        more += f" (screening: {k} x the offspring of each generation also run on the first {share:.0%} of the jobs)"
    rc = study.recheck if isinstance(study.recheck, list) else []
    recheck = (f", then the re-check: {len(rc)} seed(s) x (front points + {len(study.baselines)} baseline(s))"
               if rc else "")
    return (f"cost: {limit} ({n_seeds} seed(s) per evaluation, {per_gen} per generation){more}{wall}"
            + (f", plus {n_base} for {len(study.baselines)} baseline(s)" if n_base else "") + recheck)


def _speculates(study: Any) -> bool:
    """Whether the steady schedule's idle workers may run simulations ahead (TaskPool.speculate)."""
    par = study.parallel
    return study.algorithm.schedule == "steady" and par.speculate and (par.workers > 1 or par.backend == "dask")


def announce(text: str) -> None:
    """Print a line at once, before inputs are parsed or workers start (progress from the first second)."""
    print(text, file=sys.stderr, flush=True)


def check_cache_dir(path: Path | None, src: str) -> None:
    """The cache folder must be a folder we can write: said now, not after evaluations started."""
    if path is None:
        return
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UserError(f"{src}: cache_dir: {path} (or a parent) is a file, not a folder") from None
    except OSError as exc:
        raise UserError(f"{src}: cache_dir: {path}: cannot create: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UserError(f"{src}: cache_dir: {path}: not writable")


def check_log(read_rows: Any, run_dir: Path) -> None:
    """A corrupt line inside a run's log (not a torn last line) as a one-line error, before resuming."""
    try:
        read_rows(run_dir)
    except ValueError as exc:
        raise UserError(f"{exc}; the log is damaged before its end: restore it from a copy, or start a new "
                        "run (another --out)") from None
