"""Steady-state NSGA-II (`algorithm.schedule: steady`, docs/search.md): no generation barrier.

The genomes a run evaluates, and its log, depend on the study seed and the lag L only, never on
which worker finished first:

- genomes 0 .. mu-1 are generation 0's sample, the same genomes as under the generational schedule;
  genomes mu .. mu+L-1 are a further random sample (pymoo's, without duplicates of generation 0),
  drawn at the start, so that workers are not idle while generation 0 is told;
- results are told to pymoo strictly in index order (early ones wait in a buffer). Generation 0 is
  told as one population; after it each result is told alone, so pymoo's survival (rank and
  crowding with NSGA-II) cuts the population plus that one genome back to mu: (mu + 1) selection;
- genome j >= mu + L is bred (pymoo's ask: tournament, the mixed-variable crossover and mutation)
  from the population after results 0 .. j-L-1, right after result j-L-1 is told and before the
  next one is: breeding and survival draw from the algorithm's one RNG in a fixed order.

Every bred genome goes to the engine's task pool at once, so a worker waits only when result
j - L - 1 is still out. The baselines' simulations go first into the same pool, beside generation
0's, and their rows are logged before generation 0's. `budget.generations` counts mu results as one
generation; rows carry generation j // mu.

Resampling (docs/search.md) never stops the telling: when result (g+1) mu - 1 is told, generation g's
round is decided (resample.py: the near-front genomes of the log so far, `step` more seeds each; its
seeds counted in the budget at once) and its seeds go to the front of the pool; genomes are told and
bred meanwhile, and the round is folded in (its rows logged, the population's means refreshed) when
result (g+1) mu + D - 1 has been told, D = min(L, mu), before anything else: the telling waits there
only if its seeds are still out. So at most one round is out, and where each starts and lands in the
sequence depends on mu and L only. At the search's end the round out is folded in and resampling then
runs until stable (rounds one after another), so the final front holds no genome near it on fewer
seeds than it could have.

Speculation (`parallel.speculate`): when a round is decided, the seeds later rounds are likely to
ask for (`Resampler.ahead`) go to the pool, whose idle workers run them while the search waits and
nothing is queued (TaskPool.speculate); a round's task found there completes at once. It changes
when results are ready, never what is decided.

Stop: the budget is checked after each result told. A spent evaluations budget drops every genome
bred and not told (the log stops at the same genome whatever completed); a wall-time stop cancels
the genome seeds not started and tells only the genomes whose seeds are back or in flight. A round
is never cut short.

Resume: every mu results (and at the end) the checkpoint holds the algorithm (population, and RNG
after the last genome bred), the number told, the genomes bred but not told, the round out and
whether the search has ended; the rows an interrupted session logged after it are replayed in index
order, not simulated again. An ended search is only finished (re-checked) on resume.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypedDict

import numpy as np
from pymoo.core.individual import Individual
from pymoo.core.mixed import MixedVariableSampling
from pymoo.core.population import Population

from paretosched.search.blocks import Speculation
from paretosched.search.evaluate import TaskPool
from paretosched.search.ledger import Spec
from paretosched.search.runlog import Generation, SeedResult
from paretosched.search.focus import baseline_specs


_REBREED = 10  # tries to breed a genome that is not already queued before accepting a duplicate


def default_lag(lag: int | None, workers: int) -> int:
    """The study's lag, else 2 x workers (enough for workers that finish in any order)."""
    return lag if lag is not None else 2 * max(1, workers)


class SteadyLoop:
    """A steady-state run's baselines and search, for `SearchRun` (the re-check is its `_finish`)."""

    # `run` is optimise.SearchRun, typed Any: optimise.py imports this module, and naming its class
    # here (even for type checkers only) would close an import circle
    def __init__(self, run: Any) -> None:
        self.run = run
        st = run.state
        if st.steady is None:  # a new run (or one killed before generation 0 was told)
            st.steady = {"lag": default_lag(run.study.algorithm.lag, run.engine.workers), "queue": []}
        self.lag: int = st.steady["lag"]
        self.mu = run.study.algorithm.pop_size
        self.delay = min(self.lag, self.mu)  # results told between a round's start and its fold-in
        b = run.study.budget
        caps = [c for c in (b.evaluations, None if b.generations is None else self.mu * b.generations) if c]
        self.cap = min(caps) if caps else None
        self.evaluations = b.evaluations
        self.told = st.n_told
        self.queue: list[Individual] = list(st.steady["queue"])  # bred, not told: genomes told .. bred-1
        self.specs = [self._spec(q) for q in self.queue]  # what each queued genome evaluates
        self.results: dict[int, dict[int, SeedResult]] = {}
        self.needed: dict[int, int] = {}
        self.gen_ids: list[int] = []
        self.breeding = True
        self.stop: str | None = None  # the budget's stop reason, once a result told has spent it
        self.ended = bool(st.steady.get("ended"))  # a finished search, killed in its re-check
        self.n0 = 0  # generation 0's size, while it is being told
        self.gen0: list[Individual] = []
        self.round: _Round | None = st.steady.get("round")  # the resampling round out
        self.resampled = 0  # seeds of the rounds started since the last generation record
        self.round_tasks: list[tuple[dict[str, Any], int]] = []  # the round's simulations, in order
        self.round_results: dict[int, SeedResult] = {}  # and those back, by index
        # speculation's counts (TaskPool.stats) of the sessions before this one, for summary.json
        self.speculated = Speculation.from_json(st.steady.get("speculation")) or Speculation()
        self.pool: TaskPool | None = None
        run.algo.n_offsprings = 1  # ask() breeds one genome

    @property
    def bred(self) -> int:
        return self.told + len(self.queue)

    def search(self) -> str:
        """Evaluate and tell until the budget is spent; the stop reason."""
        r = self.run
        if self.ended:  # resumed after the search had ended: nothing more to breed, tell or record
            return r._stop_reason() or "no_new_offspring"
        if self.told == 0:  # generation 0, from the checkpoint taken before anything was asked
            r._checkpoint()  # the lag is the run's from now on, whatever --workers a resume gives
            pop = r.algo.ask()
            self.n0 = min(len(pop), self.cap or len(pop)) if pop is not None else 0
            self.queue = list(pop[:self.n0]) if pop is not None else []
            if self.n0:
                extra = MixedVariableSampling().do(r.algo.problem, self.lag, random_state=r.algo.random_state)
                self.queue += list(r.algo.eliminate_duplicates.do(extra, pop))
            self.queue = self.queue[:self.cap or len(self.queue)]
            self.specs = [self._spec(q) for q in self.queue]
            r.progress.stage("generation 0")
        base = [] if r.state.baselines_done else baseline_specs(r.study, r.seeds, r.resampler.order)
        r.state.baselines_done = r.state.baselines_done or not base
        with r.engine.pool() as pool:
            self.pool = pool
            for k, spec in enumerate(base):  # first in the pool, and logged first (tags -1, -2, ...)
                self._submit_spec(pool, -1 - k, spec, [])
            if self.round is not None:  # resumed with a round out
                self._submit_round(pool)
            for j in range(self.told, self.bred):
                self._submit(pool, j)
            if self.told > 0:
                # resumed at the record after which the budget stopped it (`_tell`): breed no more
                if (stop := r._stop_reason()) is not None:
                    self._drop(pool, stop)
                self._breed_more(pool)  # else breed what the checkpointed population may breed
            while base or self.told < self.bred:
                if base and all(self._complete(-1 - k) for k in range(len(base))):
                    self._tell_baselines(base)
                    base = []
                while not base and self.told < self.bred and self._complete(self.told):
                    self._tell(pool)
                if base or self.told < self.bred:
                    self._collect(pool)
            if self.told == 0:
                return "no_new_offspring"
            self.ended = True
            self._last_record(pool)
        r.state.steady["speculation"] = self._speculation()  # with what the close cut or left unused
        if (st := pool.stats).speculated:
            r.progress.message(f"speculation: {st.speculated} simulations run ahead on idle workers, "
                               f"{st.used} used, {st.unused_s:.1f} worker-s unused")
        return r._stop_reason() or "no_new_offspring"

    # ----------------------------------------------------------------------------------------
    def _spec(self, ind: Individual) -> Spec:
        space = self.run.space
        genome = space.decode(ind.X)
        return Spec("search", space.config(genome), self.run.seeds, genome=genome, x=space.raw(ind.X))

    def _submit(self, pool: TaskPool, j: int) -> None:
        self._submit_spec(pool, j, self.specs[j - self.told], self.specs[:j - self.told])

    def _submit_spec(self, pool: TaskPool, j: int, spec: Spec, earlier: list[Spec]) -> None:
        key = spec.key()
        self.results[j] = {}
        # told before, logged by an interrupted session, or bred already: the ledger gives its row
        if self.run.ledger.replayable(spec) or any(s.key() == key for s in earlier):
            self.needed[j] = 0
            return
        self.needed[j] = len(spec.seeds)
        for seed in spec.seeds:
            pool.submit((j, seed), spec.config, seed)

    def _complete(self, j: int) -> bool:
        return len(self.results[j]) == self.needed[j]

    def _collect(self, pool: TaskPool) -> None:
        """Wait for completions and keep each for its turn: a genome's seed, or the round's."""
        for tag, res in pool.wait():
            if tag[0] == "round":
                self.round_results[tag[1]] = res
            elif tag[0] in self.results:  # else a genome dropped at the stop
                self.results[tag[0]][tag[1]] = res

    def _tell_baselines(self, base: list[Spec]) -> None:
        """The baselines' rows, before generation 0's (their simulations ran beside it)."""
        r = self.run
        ids = []
        for k, spec in enumerate(base):
            ids.append(r.ledger.record(spec, -1, self.results.pop(-1 - k)))
            del self.needed[-1 - k]
        r.state.baseline_ids = dict(zip(r.study.baselines, ids))
        r.state.baselines_done = True

    def _tell(self, pool: TaskPool) -> None:
        """Log result `told` and tell pymoo (generation 0 as a whole); fold in the round due, start
        a generation's round, record it, then breed."""
        r, j = self.run, self.told
        ind, spec = self.queue.pop(0), self.specs.pop(0)
        eid = r.ledger.record(spec, j // self.mu, self.results.pop(j))
        del self.needed[j]
        self.gen_ids.append(eid)
        self.told += 1
        r.state.n_told = self.told
        r.progress.advance(1)
        if self.told <= self.n0:
            self.gen0.append(ind)
            if self.told < self.n0:
                return
            self._tell_pymoo(self.gen_ids, self.gen0)
            r.state.generation = 0
            if r.state.ref is None:
                r._fix_reference(self.gen_ids)
        else:
            self._tell_pymoo([eid], [ind])
        if self.round is not None and self.told >= self.round["at"]:
            self._fold(pool)
        boundary = self.told < (self.cap or np.inf) and self.told % self.mu == 0
        if boundary and self.stop is None and r._stop_reason() is None:
            self._start_round(pool, self.told // self.mu - 1)
        if self.stop is None and (stop := r._stop_reason()) is not None:
            self._drop(pool, stop)  # the end records this generation, once its round is in
        elif boundary:
            self._record(self.told // self.mu - 1)
        self._breed_more(pool)

    def _drop(self, pool: TaskPool, stop: str) -> None:
        """At a stop: breed no more, and cancel the genomes bred and not told (docs/search.md, Budget).

        A spent evaluations budget drops them all, whatever has completed, so that the log stops at the
        same genome whatever the completion order; at a wall-time stop the genomes whose seeds have all
        completed or are in flight are told, up to the first one with a seed no worker has started.
        The round out keeps its seeds: resampling is never cut short."""
        self.stop, self.breeding = stop, False
        cancelled = pool.cancel_queued(keep=lambda tag: tag[0] == "round")
        cancelled = [tag[0] for tag in cancelled if isinstance(tag[0], int) and tag[0] >= self.told]
        keep = min(cancelled, default=self.bred) - self.told if stop == "wall_time_s" else 0
        for j in range(self.told + keep, self.bred):
            del self.results[j], self.needed[j]
        self.queue, self.specs = self.queue[:keep], self.specs[:keep]

    def _breed_more(self, pool: TaskPool) -> None:
        """Breed (and submit) every genome the population after `told` results may breed."""
        while self.breeding and self.bred - self.lag <= self.told and self.bred < self._room():
            child = self._breed()
            if child is None:
                self.breeding = False
                return
            self.queue.append(child)
            self.specs.append(self._spec(child))
            self._submit(pool, self.bred - 1)

    def _room(self) -> float:
        """Genomes the budget holds, resampling's seeds so far counted as in `SearchRun._spent`."""
        r = self.run
        left = np.inf if self.evaluations is None else self.evaluations - r.state.n_resampled / len(r.seeds)
        return min(left, self.cap or np.inf)

    # resampling ---------------------------------------------------------------------------
    def _start_round(self, pool: TaskPool, gen: int) -> int:
        """Generation `gen`'s resampling round (resample.py), decided now and sent to the front of
        the pool; its seeds count in the budget at once. The number of seed results it adds."""
        r = self.run
        specs = r.resampler.round_specs()
        if not specs:
            return 0
        added = r.resampler.added(specs)
        r.state.n_resampled += added
        self.resampled += added
        self.round = {"gen": gen, "at": self.told + self.delay, "specs": specs}
        self._submit_round(pool)
        if r.study.parallel.speculate and pool.parallel:  # a serial pool would not use them
            pool.speculate(r.resampler.ahead(specs))
        return added

    def _submit_round(self, pool: TaskPool) -> None:
        """The round's simulations, in the order `Ledger.submit` will ask for them at the fold-in."""
        assert self.round is not None
        ledger = self.run.ledger
        self.round_tasks = [(s.config, seed) for s in self.round["specs"] if not ledger.replayable(s)
                            for seed in s.seeds if seed not in ledger.rows[s.supersedes].seeds]  # type: ignore[index]
        self.round_results = {}
        # to the front, in order: the fold-in waits for these
        pool.submit_all([(("round", k), cfg, seed) for k, (cfg, seed) in enumerate(self.round_tasks)], first=True)

    def _fold(self, pool: TaskPool) -> None:
        """The round's rows logged (after the genomes' told so far) and the population's means refreshed."""
        assert self.round is not None
        r = self.run
        while len(self.round_results) < len(self.round_tasks):
            self._collect(pool)
        r.ledger.flush()
        done = [self.round_results[k] for k in range(len(self.round_tasks))]
        r.ledger.submit(self.round["specs"], _Done(self.round_tasks, done), self.round["gen"])  # type: ignore[arg-type]
        r.focus.refresh(r.algo.pop, r._population_ids())
        self.round = None

    def _tell_pymoo(self, ids: list[int], inds: list[Individual]) -> None:
        self.run.focus.tell(self.run.algo, Population.create(*inds), ids)

    def _breed(self) -> Individual | None:
        queued = {s.key() for s in self.specs}
        child = None
        for _ in range(_REBREED):  # pymoo removes duplicates of the population, not of genomes in flight
            off = self.run.algo.ask()
            if off is None or len(off) == 0:
                return None
            child = off[0]
            if self._spec(child).key() not in queued:
                break
        return child

    def _record(self, gen: int) -> None:
        """Generation `gen`'s record (its round's seeds as `resampled`), outputs and checkpoint."""
        r = self.run
        r.ledger.flush()
        r.state.generation = gen
        record = r._record(gen, self.gen_ids, self.resampled)
        r.state.generations.append(record)
        self._save(record)
        self.gen_ids, self.resampled = [], 0

    def _save(self, record: Generation) -> None:
        """Outputs and checkpoint after a generation's record (the round out saved with it)."""
        r = self.run
        r.state.population = r._population_ids()
        r.state.steady = {"lag": self.lag, "queue": list(self.queue), "ended": self.ended, "round": self.round,
                          "speculation": self._speculation()}
        r._write_outputs(final=False)
        r._checkpoint()
        r.progress.update(self.told, record)

    def _speculation(self) -> dict[str, Any]:
        """The run's speculation so far, earlier sessions' and this one's (its unused time is known when
        the pool closes), as summary.json holds it (the checkpoint too: a plain dict, `checkpoint.Checkpoint`)."""
        return (self.speculated + (self.pool.stats if self.pool is not None else Speculation())).to_json()

    def _last_record(self, pool: TaskPool) -> None:
        """At the search's end: the round out folded in, resampling until stable, the last record."""
        r = self.run
        gen = (self.told - 1) // self.mu
        if self.round is not None or r.resampler.active:
            r.progress.stage(f"generation {gen}: extra seeds near the front")
        if self.round is not None:
            self._fold(pool)
        while self._start_round(pool, gen):
            self._fold(pool)
        if self.gen_ids or not r.state.generations or r.state.generations[-1].generation != gen:
            self._record(gen)
            return
        # the last generation was recorded when its last result was told: its resampling ends now
        last = r.state.generations.pop()
        record = r._record(gen, [], last.resampled + self.resampled)
        r.state.generations.append(replace(record, new_evaluations=last.new_evaluations, failures=last.failures))
        self._save(r.state.generations[-1])
        self.resampled = 0


class _Round(TypedDict):
    """A resampling round out: the generation it counts in, the results told before its fold-in,
    its rows (their seeds are the specs' seeds beyond the rows they supersede)."""

    gen: int
    at: int
    specs: list[Spec]


class _Done:
    """`Engine.evaluate` for `Ledger.submit` at a round's fold-in: the simulations already ran in the pool."""

    def __init__(self, tasks: list[tuple[dict[str, Any], int]], results: list[SeedResult]) -> None:
        self.tasks, self.results = tasks, results

    def evaluate(self, tasks: list[tuple[dict[str, Any], int]], on_done: Any = None) -> list[SeedResult]:
        if [seed for _, seed in tasks] != [seed for _, seed in self.tasks]:
            raise RuntimeError("a resampling round's simulations are not the ones the ledger asks for")
        return self.results
