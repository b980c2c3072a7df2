"""The evaluation engine: run (config, seed) simulations serially, with joblib, or on Dask.

The function that turns a config dict and a seed into metrics is injectable: a callable or a
`'module:function'` reference a study names (imported once per worker). The default is the
twin's `paretosched.search.twin.evaluate`, passed as the function itself.

Results come back in task order whatever the backend, so nothing downstream depends on
which worker finished first. An exception inside a simulation is a *result* (status failed,
error text), never an exception of the engine: the run goes on.
"""

from __future__ import annotations

import importlib
import time
from collections import Counter
from typing import Any, Callable, Iterator

from paretosched.errors import UserError
from paretosched.search.cache import Cache, cache_key, input_digest
from paretosched.search.guards import evaluator_id, require_evaluator
from paretosched.search.runlog import SeedResult
from paretosched.search import twin
from paretosched.search.space import canonical

EvalFn = Callable[[dict[str, Any], int], dict[str, float]]


_FN_MEMO: dict[str, EvalFn] = {}


def resolve_fn(fn: str | EvalFn) -> EvalFn:
    """A callable from a callable or a 'module:function' reference (memoised per process)."""
    if callable(fn):
        return fn
    if fn not in _FN_MEMO:
        module, _, name = fn.partition(":")
        _FN_MEMO[fn] = getattr(importlib.import_module(module), name)
    return _FN_MEMO[fn]


def run_one(fn: str | EvalFn, cfg: dict[str, Any], seed: int) -> tuple[str, dict[str, float] | None, str | None, float]:
    """Run one simulation in the current process; failures are returned, not raised."""
    t0 = time.perf_counter()
    try:
        raw = resolve_fn(fn)(cfg, int(seed))
        metrics = {str(k): float(v) for k, v in raw.items()}
        return "ok", metrics, None, time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - any failure of a genome is data, not a crash
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
        return "failed", None, text, time.perf_counter() - t0


def require_backend(backend: str) -> None:
    """A one-line error when `backend` needs an extra that is not installed (dask: the `dask` extra)."""
    if backend == "dask":
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            raise UserError("the dask backend needs dask.distributed: pip install 'paretosched[dask]' "
                            "(or evaluate here with --local)") from None


class Engine:
    """Evaluates batches of (config, seed) tasks; use as a context manager."""

    def __init__(self, fn: str | EvalFn | None = None, workers: int = 1, backend: str = "local",
                 address: str | None = None, cache: Cache | None = None) -> None:
        self.fn: str | EvalFn = fn if fn is not None else twin.evaluate
        if isinstance(self.fn, str):  # a reference from a file; a callable was chosen by code
            require_evaluator(self.fn, "study")
        self._evaluator = evaluator_id(self.fn)
        self.workers = max(1, int(workers))
        self.backend = backend
        self.address = address
        self.cache = cache if cache is not None else Cache(None)
        self._client: Any = None
        self._cluster: Any = None

    # lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> Engine:
        if self.backend == "dask":
            from dask.distributed import Client, LocalCluster

            if self.address:
                try:
                    self._client = Client(self.address)
                except (OSError, TimeoutError, ValueError) as exc:  # ValueError: a malformed address
                    raise UserError(f"Dask scheduler {self.address}: cannot connect ({exc}); check the "
                                    "address, or run here with --local") from None
            else:
                self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1,
                                             processes=True, dashboard_address=None)
                self._client = Client(self._cluster)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    # work --------------------------------------------------------------------------------
    def evaluate(self, tasks: list[tuple[dict[str, Any], int]],
                 on_done: Callable[[int], None] | None = None) -> list[SeedResult]:
        """Results of `tasks` in the same order; cached ones are not simulated. `on_done(n)` is
        told as tasks complete (cache hits at once, then one call per simulation), for progress."""
        digests: dict[str, dict[str, str | None]] = {}
        keys: list[str] = []
        for cfg, seed in tasks:
            io = canonical([cfg.get("platform"), cfg.get("workload")])
            if io not in digests:
                digests[io] = input_digest(cfg)
            keys.append(cache_key(cfg, seed, digests[io], self._evaluator))

        results: dict[str, SeedResult] = {}
        todo: dict[str, tuple[dict[str, Any], int]] = {}  # unique misses, in first-seen order
        for key, (cfg, seed) in zip(keys, tasks):
            if key in results or key in todo:
                continue
            hit = self.cache.get(key)
            if hit is not None:
                results[key] = SeedResult(int(seed), "ok", hit, None, 0.0, True)
            else:
                todo[key] = (cfg, seed)

        mult = Counter(keys)  # a task repeated in the batch completes with its first occurrence
        if on_done is not None and len(todo) < len(mult):
            on_done(sum(n for k, n in mult.items() if k not in todo))
        # results are cached as they arrive (in task order), so a run killed mid-batch keeps
        # what finished and a resume does not simulate it again
        for (key, (_, seed)), (status, metrics, error, wall) in zip(todo.items(), self._run(list(todo.values()))):
            results[key] = SeedResult(int(seed), status, metrics, error, wall, False)
            if status == "ok" and metrics is not None:
                self.cache.put(key, metrics)
            if on_done is not None:
                on_done(mult[key])
        return [results[k] for k in keys]

    def _run(self, todo: list[tuple[dict[str, Any], int]]) -> Iterator[tuple[Any, ...]]:
        """Outcomes of `todo`, yielded in task order as soon as each (and all before it) is done."""
        if not todo:
            return iter(())
        if self._client is not None:
            futures = self._client.map(run_one, [self.fn] * len(todo), [c for c, _ in todo],
                                       [s for _, s in todo], pure=False)
            return (f.result() for f in futures)
        if self.workers == 1 or len(todo) == 1:
            return (run_one(self.fn, cfg, seed) for cfg, seed in todo)
        from joblib import Parallel, delayed

        return iter(Parallel(n_jobs=self.workers, backend="loky", return_as="generator")(
            delayed(run_one)(self.fn, cfg, seed) for cfg, seed in todo))
