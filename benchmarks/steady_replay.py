"""The replay of a steady run (`algorithm.schedule: steady`) on N simulated workers, exactly as the
search schedules it (paretosched/search/steady.py; benchmarks/worker_efficiency.py's `lag` column;
docs/search.md), with the run's own lag L (from its checkpoint: the log depends on L, so a run made with
L = 2 x 32 on this machine is the run 32 workers would make) and mu. One pool, FIFO, the freed
worker served before the search sees the result (engine TaskPool). The baselines' simulations
first, then the genomes in index order; genome j >= mu + L queued once result j-L-1 is told
(results told in index order; genomes before mu + L are random draws, queued at once). Generation
g's resampling round goes to the front of the queue when result (g+1) mu - 1 is told, and is
folded in once result (g+1) mu + min(L, mu) - 1 is told: the telling (and breeding) waits there
for its seeds. At the search's end the round out is waited for, then resampling runs round after
round (each a batch that waits for the one before), then the re-check is a batch. Column
`lag, search`: the same without the re-check. Genomes bred and dropped at an evaluations
budget's stop are not in the log, so not replayed (at most L + 1, never told); a genome bred
again is told from its earlier row without a row of its own, so its place in the sequence is
inferred from the rounds' places, within a generation (makespan within 2% in
tests/search/test_steady_replay.py, exact otherwise). Speculation (parallel.speculate, TaskPool):
when the search waits, idle workers with nothing queued take the candidates the round last decided
gave (the run's own resampler asked on the log as it was then: `Resampler.ahead`); a task later
submitted completes at once from one done, or joins one running; those still running when the
resampling at the end is done are stopped. A candidate the log never simulated lasts the mean of
its config's logged simulations. Efficiency counts useful worker-time only (the log's
simulations); `unused s` is the worker-time of speculations never used; `bound` replays perfect
speculation (`oracle`: a reference, not a strict bound); idle worker-time is broken down by phase of the search.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
import heapq
import json
from pathlib import Path
from typing import Any, Callable, Hashable, NamedTuple

import yaml

from paretosched.search.space import canonical

Batch = list[float]


def list_schedule(tasks: Batch, n: int, start: float = 0.0) -> float:
    """Finish time of `tasks` given in order to the first free of n workers, all free at `start`."""
    free = [start] * n
    end = start
    for d in tasks:
        t = heapq.heappop(free) + d
        end = max(end, t)
        heapq.heappush(free, t)
    return end


Task = tuple[tuple[str, int], float]  # ((config, seed), duration): what the pool keys a simulation by


@dataclass
class Round:
    """A resampling round: its simulations, and the candidates it gives the pool to speculate."""

    tasks: list[Task]
    ahead: list[Task]


@dataclass
class SteadyLog:
    """A steady run's simulations as its schedule submitted them (`parts`)."""

    base: list[Task]  # the baselines', first in the pool
    genomes: list[list[Task]]  # each genome's, in index order
    rounds: dict[int, Round]  # generation g's resampling round, started when result (g+1) mu - 1 is told
    tail: list[Round]  # resampling at the search's end, round after round
    recheck: Batch
    mu: int
    lag: int
    told: int  # genomes told (the checkpoint's count; `genomes` holds one entry for each)


def parts(run_dir: Path, cpu: bool = False, duration: Callable[[dict, int], float] | None = None) -> SteadyLog:
    """Read a steady run (`algorithm.schedule: steady`): its log, lag and mu (docs/search.md).

    Generation g's round (rows of generation g that supersede a row) is folded in after result
    (g+1) mu + min(L, mu) - 1, or at the search's end: checked against where its rows are logged. The
    rows of the last generation's rounds logged after the last genome are resampling at the end, whose
    rounds (each waits for the one before) are told apart by asking the run's own resampler which rows
    it adds on the log up to each round (`_decided`). Each round's speculation candidates are the
    resampler's own (`Resampler.ahead`) on the log as it was when the round was decided; a candidate
    the log never simulated lasts `duration(config, seed)`, by default the mean of that config's
    logged simulations."""
    from paretosched.search.checkpoint import load_checkpoint

    log = run_dir / "evaluations.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    state = load_checkpoint(run_dir)
    study = yaml.safe_load((run_dir / "study.yaml").read_text())
    if state is None or state.steady is None:
        raise ValueError(f"{run_dir}: not a run of algorithm.schedule: steady")
    mu, lag = int(study["algorithm"]["pop_size"]), int(state.steady["lag"])
    by_id = {r["eval_id"]: r for r in rows}
    dur = lambda s: float((s["metrics"] or {}).get("cpu_s", s["wall_s"]) if cpu else s["wall_s"])  # noqa: E731
    known: dict[tuple[str, int], float] = {}
    per_config: dict[str, list[float]] = {}

    def sims(r: dict) -> list[Task]:
        prev = by_id.get(r["supersedes"]) if r.get("supersedes") is not None else None
        copied = set(prev["seeds"]) if prev else set()
        c = canonical(r["config"])
        return [((c, s["seed"]), dur(s)) for s in r["per_seed"] if not s["cached"] and s["seed"] not in copied]

    for r in rows:
        for (c, seed), d in sims(r):
            known[(c, seed)] = d
            per_config.setdefault(c, []).append(d)
    mean = sum(known.values()) / max(1, len(known))

    def task(cfg: dict, seed: int) -> Task:
        c = canonical(cfg)
        if (c, seed) in known:
            return (c, seed), known[(c, seed)]
        ds = per_config.get(c, [mean])
        return (c, seed), duration(cfg, seed) if duration is not None else sum(ds) / len(ds)

    out = SteadyLog([], [], {}, [], [], mu, lag, int(state.n_told))
    n_genomes = sum(1 for r in rows if r["kind"] == "search" and r.get("supersedes") is None)
    last = (out.told - 1) // mu
    where: dict[int, int] = {}  # a round's first row: genomes logged before it
    round_rows: dict[int, list[dict]] = {}
    tail_rows: list[dict] = []
    ids: list[int | None] = []  # each genome's row (None: told from an earlier row)
    for r in rows:
        if r.get("supersedes") is not None and r["generation"] < last:
            round_rows.setdefault(r["generation"], []).append(r)
            where.setdefault(r["generation"], len(out.genomes))
        elif r.get("supersedes") is not None:
            tail_rows.append(r)
        elif r["kind"] == "search":
            out.genomes.append(sims(r))
            ids.append(r["eval_id"])
        else:
            (out.base if r["kind"] == "baseline" else out.recheck).extend(sims(r))
    out.recheck = [d for _, d in out.recheck]  # type: ignore[misc]  # a batch of its own, never speculated
    # a genome bred again after an earlier one was told is told from that row: no row, no simulation.
    # Its place is not logged; each round's place bounds it: placed just before the first round
    # logged early (the lag's dependencies then shift by under a generation), the rest at the end
    delay, placed = min(lag, mu), 0
    for g in sorted(where):
        expect = min((g + 1) * mu + delay, out.told)
        dups = expect - where[g]
        if dups < placed or dups > out.told - n_genomes:
            raise ValueError(f"{log}: generation {g}'s round is logged after {where[g]} genomes, not after "
                             f"{expect}: not the steady schedule this replay models")
        out.genomes[where[g] + placed:where[g] + placed] = [[] for _ in range(dups - placed)]
        ids[where[g] + placed:where[g] + placed] = [None] * (dups - placed)
        placed = dups
    out.genomes += [[] for _ in range(out.told - n_genomes - placed)]
    ids += [None] * (out.told - n_genomes - placed)
    for g, rs in round_rows.items():
        # decided when result (g+1) mu - 1 was told: the log then ends before the next genome's row
        after = [i for i in ids[(g + 1) * mu:] if i is not None][:1]
        _, ahead = _decided(run_dir, min([rs[0]["eval_id"], *after]), rs, check=out.told == n_genomes)
        out.rounds[g] = Round([t for r in rs for t in sims(r)], [task(c, seed) for c, seed in ahead])
    start = 0
    while start < len(tail_rows):
        size, ahead = _decided(run_dir, tail_rows[start]["eval_id"], tail_rows[start:])
        out.tail.append(Round([t for r in tail_rows[start:start + size] for t in sims(r)],
                              [task(c, seed) for c, seed in ahead]))
        start += size
    return out


def _decided(run_dir: Path, upto: int, logged: list[dict], check: bool = True) -> tuple[int, list[tuple[dict, int]]]:
    """A round the run's own resampler decides on the log before eval id `upto`: its size in rows (checked
    against the rows `logged` from there) and its speculation candidates (Resampler.ahead). Without
    `check` the round is the rows `logged` (a round during the search, whose place `upto` is guessed
    when genomes were told from earlier rows: then its candidates may differ a little)."""
    from paretosched.search.ledger import Ledger, Spec
    from paretosched.search.resample import Resampler
    from paretosched.search.study import extra_seeds, load_study

    study = _STUDIES.get(run_dir) or _STUDIES.setdefault(run_dir, load_study(run_dir / "study.yaml"))
    resampler = Resampler(Ledger(run_dir, study.objective_names, upto), study.signs, list(study.seeds),  # type: ignore[arg-type]
                          extra_seeds(study), study.resampling)
    specs = resampler.round_specs() if check else \
        [Spec("search", r["config"], r["seeds"], supersedes=r["supersedes"]) for r in logged]
    got = [(r["supersedes"], r["seeds"]) for r in logged[:len(specs)]]
    if not specs or got != [(s.supersedes, s.seeds) for s in specs]:
        raise ValueError(f"{run_dir}: the resampling rounds logged are not the rounds the resampler gives")
    return len(specs), resampler.ahead(specs)


_STUDIES: dict[Path, Any] = {}


def oracle(run: SteadyLog) -> SteadyLog:
    """The run with perfect speculation's candidates: each round's are the tasks of every later round,
    in order (what speculation would do knowing the future; not a strict upper bound: list scheduling
    is not monotone, so the run's own candidates, in another order, can come out a little above it)."""
    seq = [run.rounds[g] for g in sorted(run.rounds)] + run.tail
    later = [[t for r in seq[k + 1:] for t in r.tasks] for k in range(len(seq))]
    rounds = {g: Round(run.rounds[g].tasks, later[k]) for k, g in enumerate(sorted(run.rounds))}
    tail = [Round(r.tasks, later[len(rounds) + k]) for k, r in enumerate(run.tail)]
    return replace(run, rounds=rounds, tail=tail)


class _Pool:
    """The engine's TaskPool on n virtual workers: a FIFO queue (a round's tasks at its front), a freed
    worker served before the search sees the result, and speculation (TaskPool.speculate): when the
    search is about to wait and nothing is queued, idle workers take the candidates not yet seen;
    a task submitted later completes at once from a speculation done, or joins one running."""

    def __init__(self, n: int, speculate: bool) -> None:
        self.idle, self.t, self.seq, self.speculate = n, 0.0, 0, speculate
        self.queue: deque[tuple[Hashable, tuple[str, int], float]] = deque()
        self.events: list[tuple[float, int]] = []
        self.running: dict[int, list] = {}  # seq -> [item (None: a speculation), key, start]
        self.left: dict[Hashable, int] = {}
        self.ahead: deque[Task] = deque()
        self.seen: set[tuple[str, int]] = set()
        self.spec: dict[tuple[str, int], int] = {}  # speculations running: key -> seq
        self.kept: dict[tuple[str, int], float] = {}  # and done, not yet used: key -> duration
        self.unused_s = 0.0
        self.idle_s: dict[str, float] = {}

    def submit(self, item: Hashable, tasks: list[Task], first: bool = False) -> None:
        self.left.setdefault(item, 0)
        queued = []
        for key, d in tasks:
            self.seen.add(key)
            if key in self.kept:
                del self.kept[key]
            elif key in self.spec:
                self.running[self.spec.pop(key)][0] = item
                self.left[item] += 1
            else:
                queued.append((item, key, d))
                self.left[item] += 1
        if first:
            self.queue.extendleft(reversed(queued))
        else:
            self.queue.extend(queued)
        self.feed()

    def _start(self, item: Hashable, key: tuple[str, int], d: float) -> None:
        heapq.heappush(self.events, (self.t + d, self.seq))
        self.running[self.seq] = [item, key, self.t, d]
        self.seq, self.idle = self.seq + 1, self.idle - 1

    def feed(self) -> None:
        while self.idle and self.queue:
            self._start(*self.queue.popleft())

    def step(self, phase: str) -> Hashable:
        """The search waits: speculate, then the next completion (its item; None: a speculation's)."""
        while self.speculate and self.ahead and not self.queue and self.idle:
            key, d = self.ahead.popleft()
            if key not in self.seen:
                self.seen.add(key)
                self.spec[key] = self.seq
                self._start(None, key, d)
        if not self.events:
            raise RuntimeError("the replay stalled")  # a bug of this model, never a property of the run
        t, seq = heapq.heappop(self.events)
        self.idle_s[phase] = self.idle_s.get(phase, 0.0) + self.idle * (t - self.t)
        self.t = t
        item, key, _, d = self.running.pop(seq)
        self.idle += 1
        if item is None:
            del self.spec[key]
            self.kept[key] = d
        else:
            self.left[item] -= 1
        self.feed()
        return item

    def close(self) -> None:
        """The pool closes: speculations running are stopped, those never used are waste."""
        self.unused_s += sum(self.kept.values()) + sum(self.t - self.running[seq][2] for seq in self.spec.values())


class Replay(NamedTuple):
    told_at: float  # the last result told and the round out folded in
    search_end: float  # the resampling at the end done
    makespan: float  # the re-check done
    unused_s: float  # worker-time of speculations never used (up to the pool's close)
    idle_s: dict[str, float]  # idle worker-time by phase of the search (re-check: `recheck`)


def lagged(run: SteadyLog, n: int, speculate: bool = True) -> Replay:
    """The steady schedule on n workers, by discrete events (see the module doc): a free worker
    takes the pool's next task; results are told in index order; after result t-1 is told, the round
    due is folded in (waiting for its seeds), then at t = (g+1) mu generation g's round goes to the
    front of the pool (its candidates to speculation), then the genomes up to t + L are bred and
    queued; at the search's end resampling runs round after round, then the re-check is a batch."""
    mu, lag, genomes = run.mu, run.lag, run.genomes
    G = len(genomes)
    delay = min(lag, mu)
    pool = _Pool(n, speculate)
    pool.submit("base", run.base)
    bred = min(G, mu + lag)
    for j in range(bred):
        pool.submit(j, genomes[j])
    told = 0
    out: tuple[int, int] | None = None  # the round out: (generation, results told at its fold-in)
    due = False  # result `told` - 1 was told and what follows it (fold-in, round, breeding) is not done
    phase = "start"

    def advance() -> None:
        nonlocal told, bred, out, due, phase
        while pool.left["base"] == 0:
            if due:
                if out is not None and told >= out[1]:
                    if pool.left[("round", out[0])]:
                        phase = "fold-in"
                        return  # the fold-in waits for the round's seeds
                    out = None
                g = told // mu - 1
                if told % mu == 0 and told < G and g in run.rounds:
                    pool.submit(("round", g), run.rounds[g].tasks, first=True)
                    pool.ahead = deque(run.rounds[g].ahead)
                    out = (g, min(told + delay, G))
                while told >= min(mu, G) and bred < G and bred - lag <= told:
                    pool.submit(bred, genomes[bred])
                    bred += 1
                due = False
            phase = "start" if told < mu else "search"
            if told == G or pool.left[told]:
                return
            told, due = told + 1, True

    advance()
    while not (told == G and out is None and not due):
        if pool.step(phase) is not None:
            advance()
    told_at = pool.t
    for k, r in enumerate(run.tail):  # each round waits for the one before
        pool.submit(("tail", k), r.tasks, first=True)
        pool.ahead = deque(r.ahead)
        while pool.left[("tail", k)]:
            pool.step("end")
    pool.close()
    search_end = pool.t
    span = list_schedule(run.recheck, n, search_end)
    idle = dict(pool.idle_s, recheck=n * (span - search_end) - sum(run.recheck))
    return Replay(told_at, search_end, span, pool.unused_s, idle)


def steady_busy(run: SteadyLog) -> float:
    """Worker-time of every simulation the run logged (speculations used included, unused ones not)."""
    tasks = [*run.base, *(t for g in run.genomes for t in g), *(t for r in [*run.rounds.values(), *run.tail]
                                                                for t in r.tasks)]
    return sum(d for _, d in tasks) + sum(run.recheck)
