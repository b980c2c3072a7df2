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
generation; rows carry generation j // mu. Resampling (docs/search.md) runs after every mu results
(and after the last, unless that was a multiple of mu), as after a generation: its seeds go through
the same pool, the master tells nothing meanwhile (workers go on with the genomes already bred), and
the population's means are refreshed before the next genome is bred.

Stop: the budget is checked after each result told. A spent evaluations budget drops every genome
bred and not told (the log stops at the same genome whatever completed); a wall-time stop cancels
the seeds not started and tells only the genomes whose seeds are back or in flight.

Resume: every mu results (and at the end) the checkpoint holds the algorithm (population, and RNG
after the last genome bred), the number told, the genomes bred but not told and whether the search
has ended; the rows an interrupted session logged after it are replayed in index order, not
simulated again. An ended search is only finished (re-checked) on resume.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pymoo.core.individual import Individual
from pymoo.core.mixed import MixedVariableSampling
from pymoo.core.population import Population

from paretosched.search.evaluate import TaskPool
from paretosched.search.ledger import Spec
from paretosched.search.problem import tell_objectives
from paretosched.search.resample import refresh_objectives
from paretosched.search.runlog import SeedResult
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
        run.algo.n_offsprings = 1  # ask() breeds one genome

    @property
    def bred(self) -> int:
        return self.told + len(self.queue)

    def search(self) -> str:
        """Evaluate and tell until the budget is spent; the stop reason."""
        r = self.run
        # resumed after the search had ended (or at the record after which it stopped, `_tell`):
        # nothing more to breed, tell or record
        if self.ended or (self.told > 0 and r._stop_reason() is not None):
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
            for k, spec in enumerate(base):  # first in the pool, and logged first (tags -1, -2, ...)
                self._submit_spec(pool, -1 - k, spec, [])
            for j in range(self.told, self.bred):
                self._submit(pool, j)
            if self.told > 0:  # resumed: breed what the checkpointed population may breed
                self._breed_more(pool)
            while base or self.told < self.bred:
                if base and all(self._complete(-1 - k) for k in range(len(base))):
                    self._tell_baselines(base)
                    base = []
                while not base and self.told < self.bred and self._complete(self.told):
                    self._tell(pool)
                if base or self.told < self.bred:
                    for (j, seed), res in pool.wait():
                        if j in self.results:  # not a genome dropped at the stop
                            self.results[j][seed] = res
            if self.told == 0:
                return "no_new_offspring"
            self.ended = True
            if self.gen_ids:  # else the last generation was recorded (and resampled) when its last result was told
                self._last_record(pool)
            else:
                r.state.steady = {"lag": self.lag, "queue": list(self.queue), "ended": True}
                r._checkpoint()
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
        """Log result `told` and tell pymoo (generation 0 as a whole), then breed."""
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
        if self.told < (self.cap or np.inf) and self.told % self.mu == 0:
            self._record(self.told // self.mu - 1, self._resample(pool, self.told // self.mu - 1))
        if self.stop is None and (stop := r._stop_reason()) is not None:
            self._drop(pool, stop)
        self._breed_more(pool)

    def _drop(self, pool: TaskPool, stop: str) -> None:
        """At a stop: breed no more, and cancel the genomes bred and not told (docs/search.md, Budget).

        A spent evaluations budget drops them all, whatever has completed, so that the log stops at the
        same genome whatever the completion order; at a wall-time stop the genomes whose seeds have all
        completed or are in flight are told, up to the first one with a seed no worker has started."""
        self.stop, self.breeding = stop, False
        cancelled = [tag[0] for tag in pool.cancel_queued() if isinstance(tag[0], int) and tag[0] >= self.told]
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

    def _resample(self, pool: TaskPool, gen: int) -> int:
        """A generation's resampling (resample.py) through the pool; the population's means refreshed."""
        r = self.run
        if not r.resampler.active:
            return 0
        r.ledger.flush()  # resampling logs its own rows, after these
        added = r.resampler.run(_PoolEngine(pool, self.results), gen)  # type: ignore[arg-type]
        r.state.n_resampled += added
        refresh_objectives(r.algo.pop, p := r._population_ids(), r.ledger, r.signs, r.focus.g(p))
        return added

    def _tell_pymoo(self, ids: list[int], inds: list[Individual]) -> None:
        r = self.run
        pop = Population.create(*inds)
        failed = np.array([not r.ledger.ok(i) for i in ids])
        F = np.array([r.ledger.objective_vector(i, r.signs) if r.ledger.ok(i) else np.zeros(len(r.names))
                      for i in ids])
        tell_objectives(r.algo, pop, F, failed, r.focus.g(ids))

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

    def _record(self, gen: int, resampled: int = 0) -> None:
        """Generation `gen`'s record, outputs and checkpoint (every mu results, and at the end)."""
        r = self.run
        r.ledger.flush()
        r.state.generation = gen
        record = r._record(gen, self.gen_ids, resampled)
        r.state.generations.append(record)
        r.state.population = r._population_ids()
        r.state.steady = {"lag": self.lag, "queue": list(self.queue), "ended": self.ended}
        r._write_outputs(final=False)
        r._checkpoint()
        r.progress.update(self.told, record)
        self.gen_ids = []

    def _last_record(self, pool: TaskPool) -> None:
        """The last generation's resampling and record."""
        r = self.run
        gen = (self.told - 1) // self.mu
        if r.resampler.active:
            r.progress.stage(f"generation {gen}: extra seeds near the front")
        self._record(gen, self._resample(pool, gen))


class _PoolEngine:
    """`Engine.evaluate` for resampling's batches, run through the steady run's task pool; the
    genomes' results that complete meanwhile are kept for their turn."""

    def __init__(self, pool: TaskPool, genome_results: dict[int, dict[int, SeedResult]]) -> None:
        self.pool, self.genome_results = pool, genome_results

    def evaluate(self, tasks: list[tuple[dict[str, Any], int]], on_done: Any = None) -> list[SeedResult]:
        for k in reversed(range(len(tasks))):  # each to the front: the search waits for these
            self.pool.submit(("resample", k), *tasks[k], first=True)
        out: dict[int, SeedResult] = {}
        while len(out) < len(tasks):
            for tag, res in self.pool.wait():
                if tag[0] == "resample":
                    out[tag[1]] = res
                elif tag[0] in self.genome_results:  # else a genome dropped at the stop
                    self.genome_results[tag[0]][tag[1]] = res
        return [out[k] for k in range(len(tasks))]
