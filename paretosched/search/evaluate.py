"""The evaluation engine: run (config, seed) simulations serially, with joblib, or on Dask.

The function that turns a config dict and a seed into metrics is injectable: a callable or a
`'module:function'` reference a study names (imported once per worker). The default is the
twin's `paretosched.search.twin.evaluate`, passed as the function itself.

`Engine.evaluate` returns results in task order whatever the backend, so nothing downstream
depends on which worker finished first. `Engine.pool()` (the steady-state search) takes single
tasks and hands back completions in the order workers finish them; its caller restores the order. An exception inside a simulation is a *result* (status failed,
error text), never an exception of the engine: the run goes on.
"""

from __future__ import annotations

import importlib
import queue
import time
from collections import Counter, deque
from typing import Any, Callable, Hashable, Iterator

from paretosched.errors import UserError
from paretosched.search.blocks import Speculation
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
        keys = [self._key(cfg, seed, digests) for cfg, seed in tasks]

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
        for (key, (_, seed)), outcome in zip(todo.items(), self._run(list(todo.values()))):
            results[key] = self._settle(key, seed, outcome)
            if on_done is not None:
                on_done(mult[key])
        return [results[k] for k in keys]

    def _key(self, cfg: dict[str, Any], seed: int, digests: dict[str, dict[str, str | None]]) -> str:
        """The cache key of (cfg, seed); `digests` memoises the input files' digests per platform
        and workload."""
        io = canonical([cfg.get("platform"), cfg.get("workload")])
        if io not in digests:
            digests[io] = input_digest(cfg)
        return cache_key(cfg, seed, digests[io], self._evaluator)

    def _settle(self, key: str, seed: int, outcome: tuple[Any, ...]) -> SeedResult:
        """A simulation's outcome as a result, cached when it succeeded."""
        status, metrics, error, wall = outcome
        if status == "ok" and metrics is not None:
            self.cache.put(key, metrics)
        return SeedResult(int(seed), status, metrics, error, wall, False)

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

    def pool(self) -> TaskPool:
        """A pool of single tasks on this engine's workers (use as a context manager)."""
        return TaskPool(self)


_AHEAD = object()  # the tag of a speculative task (TaskPool.speculate)


class TaskPool:
    """Single (config, seed) tasks in, completions out as workers finish them (steady.py).

    The pool keeps its own queue and hands the workers (joblib's loky processes, or Dask's) at
    most one task each, so a task submitted `first` (resampling's, which the search waits for)
    runs next. Serial: the queue's first task runs when a completion is asked for. Cache hits
    complete at once; new results are cached as they come.

    Speculation (`speculate`, docs/search.md): when the search waits and a worker would idle with
    nothing queued, the worker runs the next candidate the search named, a task it may submit
    later; the result is kept and completes that task at once when it is submitted (or the task
    joins the speculation still running). A speculation never starts while a task is queued, takes
    one idle worker each, and none is left running when the pool closes; results never depend on
    it, only when they are ready. Serial pools do not speculate."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._digests: dict[str, dict[str, str | None]] = {}
        self._done: list[tuple[Hashable, SeedResult]] = []
        self._queue: deque[tuple[Hashable, str, dict[str, Any], int]] = deque()
        self._futures: dict[Any, tuple[Hashable, str, int]] = {}
        self._executor: Any = None
        self._slots = engine.workers
        self._ahead: deque[tuple[str, dict[str, Any], int]] = deque()  # speculation's candidates, best first
        self._seen: set[str] = set()  # keys submitted or speculated: never speculated (again)
        self._running: dict[str, Any] = {}  # speculations running, by key
        self._since: dict[str, float] = {}  # when each started (its worker-time, if cut at the close)
        self._kept: dict[str, SeedResult] = {}  # and those done, not yet asked for
        self.stats = Speculation()
        if engine._client is not None:
            self._slots = max(1, sum(engine._client.nthreads().values()))
        elif engine.workers > 1:
            # loky (joblib's process pool: cloudpickle, spawn), its own pool: joblib's reusable one
            # belongs to Parallel, which `evaluate` (baselines, re-check) uses
            from joblib.externals.loky import ProcessPoolExecutor

            self._executor = ProcessPoolExecutor(max_workers=engine.workers)
        self.parallel = self._executor is not None or engine._client is not None

    def __enter__(self) -> TaskPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        now = time.perf_counter()
        self.stats.unused_s += sum(r.wall_s for r in self._kept.values()) + \
            sum(now - self._since[key] for key in self._running)  # cut now: spent for nothing
        # loky cannot cancel a running task: its workers are killed, so no speculation outlives the pool
        killed = self._executor is not None and (exc[0] is not None or bool(self._running))
        if not killed:  # loky's kill fails its futures itself, and a cancelled one breaks it (and the exit)
            for fut in self._futures:  # an interrupted search leaves no work behind
                fut.cancel()
        self._futures.clear()
        self._queue.clear()
        self._ahead.clear()
        self._running.clear()
        if self._executor is not None:
            if killed:
                forget_unsent(self._executor)
            self._executor.shutdown(wait=exc[0] is None, kill_workers=killed)
            self._executor = None

    @property
    def busy(self) -> int:
        """Tasks submitted and not yet handed back."""
        return len(self._done) + len(self._queue) + len(self._futures) - len(self._running)

    def submit(self, tag: Hashable, cfg: dict[str, Any], seed: int, first: bool = False) -> None:
        """Queue a task (at the front with `first`); its completion comes back from `wait` with `tag`."""
        self.submit_all([(tag, cfg, seed)], first)

    def submit_all(self, tasks: list[tuple[Hashable, dict[str, Any], int]], first: bool = False) -> None:
        """Queue tasks (with `first`, all at the front, in their order), then start what free workers can take."""
        queued = []
        for tag, cfg, seed in tasks:
            key = self.engine._key(cfg, seed, self._digests)
            self._seen.add(key)
            if key in self._kept:  # speculated: simulated by this run, so logged as such (not cached)
                self._done.append((tag, self._kept.pop(key)))
                self.stats.used += 1
            elif key in self._running:  # speculation running: the task is that one
                self._futures[self._running.pop(key)] = (tag, key, seed)
                self.stats.used += 1
            elif (hit := self.engine.cache.get(key)) is not None:
                self._done.append((tag, SeedResult(int(seed), "ok", hit, None, 0.0, True)))
            else:
                queued.append((tag, key, cfg, seed))
        if first:
            self._queue.extendleft(reversed(queued))
        else:
            self._queue.extend(queued)
        self._feed()

    def speculate(self, tasks: list[tuple[dict[str, Any], int]]) -> None:
        """The tasks idle workers may run ahead, most likely needed first (replaces the earlier list)."""
        if self.parallel:
            self._ahead = deque((self.engine._key(cfg, seed, self._digests), cfg, seed) for cfg, seed in tasks)

    def cancel_queued(self, keep: Callable[[Hashable], bool] | None = None) -> list[Hashable]:
        """Drop the tasks no worker has started (those in flight still complete), but those whose
        tag `keep` accepts; the dropped ones' tags."""
        tags = [task[0] for task in self._queue if keep is None or not keep(task[0])]
        self._queue = deque(task for task in self._queue if keep is not None and keep(task[0]))
        return tags

    def _feed(self) -> None:
        if not self.parallel:
            return
        while self._queue and len(self._futures) < self._slots:
            tag, key, cfg, seed = self._queue.popleft()
            self._futures[self._start(cfg, seed)] = (tag, key, seed)

    def _speculate(self) -> None:
        """Idle workers take candidates, only when nothing is queued (the search is about to wait)."""
        while self._ahead and not self._queue and len(self._futures) < self._slots:
            key, cfg, seed = self._ahead.popleft()
            if key in self._seen or self.engine.cache.get(key) is not None:
                continue
            self._seen.add(key)
            fut = self._start(cfg, seed)
            self._futures[fut], self._running[key], self._since[key] = (_AHEAD, key, seed), fut, time.perf_counter()
            self.stats.speculated += 1

    def _start(self, cfg: dict[str, Any], seed: int) -> Any:
        """A running task's future."""
        client, fn = self.engine._client, self.engine.fn
        return client.submit(run_one, fn, cfg, seed, pure=False) if client is not None else \
            self._executor.submit(run_one, fn, cfg, seed)

    def _finished(self) -> set[Any]:
        """The futures done (at least one; blocks until then)."""
        if self.engine._client is not None:
            from dask.distributed import wait as dask_wait

            return set(dask_wait(list(self._futures), return_when="FIRST_COMPLETED").done)
        import concurrent.futures as cf

        return set(cf.wait(list(self._futures), return_when=cf.FIRST_COMPLETED).done)

    def _outcome(self, fut: Any) -> tuple[Any, ...]:
        """A finished task's `run_one` outcome (with `_start` and `_finished`, what the replay tests'
        virtual pool replaces)."""
        return fut.result()

    def _spared(self, fut: Any) -> tuple[Any, ...] | None:
        """A speculation's outcome; None when its future raised (what `run_one` cannot catch: a lost
        worker, a SystemExit). Why not raise: its task may never be asked for, and a run must not die
        of speculation; forgotten (and never speculated again), the task runs when asked for and
        fails then, as it would have without speculation."""
        try:
            return self._outcome(fut)
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - see above
            return None

    def wait(self) -> list[tuple[Hashable, SeedResult]]:
        """Completed tasks (at least one, blocking until then; [] when nothing is submitted)."""
        if not self._done and self._queue and not self.parallel:  # serial
            tag, key, cfg, seed = self._queue.popleft()
            self._done.append((tag, self.engine._settle(key, seed, run_one(self.engine.fn, cfg, seed))))
        # a task queued behind speculations only waits for one of them to end
        while not self._done and (self._queue or len(self._futures) > len(self._running)):
            self._speculate()
            finished = self._finished()
            # several at once: in submission order, so a serial replay of the same completions matches
            for fut in [f for f in self._futures if f in finished]:
                tag, key, seed = self._futures.pop(fut)
                if tag is not _AHEAD:
                    self._done.append((tag, self.engine._settle(key, seed, self._outcome(fut))))
                    continue
                del self._running[key]
                if (outcome := self._spared(fut)) is not None:
                    self._kept[key] = self.engine._settle(key, seed, outcome)
            self._feed()  # the freed workers' next tasks, before the caller looks at the results
        out, self._done = self._done, []
        return out


def forget_unsent(executor: Any) -> None:
    """Before loky's shutdown(kill_workers=True): take out the ids of the tasks its manager thread has
    not yet moved to its call queue. Why: that shutdown fails and forgets their futures but leaves
    their ids queued, and the manager thread then dies on the first (KeyError in
    add_call_item_to_queue; joblib 1.6's loky), printing a thread traceback on Ctrl-C of a steady
    search; the futures are failed by the shutdown all the same. loky's queue is private: read only
    if it is there."""
    ids = getattr(executor, "_work_ids", None)
    while ids is not None:
        try:
            ids.get_nowait()
        except queue.Empty:
            return
