"""Worker efficiency beyond this machine, by replay: logged simulation durations on N simulated workers.

Reads the `evaluations.jsonl` of real runs and replays every simulation they ran (one (config,
seed) task each, as the engine dispatches them; cache hits and the seeds a resampled row copies
from its predecessor are not simulations) on N workers, under two schedules:

- `barrier`: the search as it runs today. Each batch the log shows (baselines, a generation's
  offspring, that generation's resampling, the final re-check) is list-scheduled in log order on
  the N workers (each task goes to the first free worker, as joblib and Dask do), and the next
  batch starts only when the whole batch has finished.
- `steady`: asynchronous steady-state: the same tasks in the same order, and a worker that
  finishes takes the next one at once (the search tells each result and asks one new genome).
  `--master-s` adds the search's own serial cost per told result (ask/tell/log), which caps the
  rate at which one master can feed workers.
- `lag`: `algorithm.schedule: steady` as built (paretosched/search/steady.py), for a steady run
  only, with the run's own lag L (from its checkpoint: the log depends on L, so a run made with
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
  tests/search/test_steady_replay.py, exact otherwise).

Efficiency = busy worker-time / (N x makespan). Durations are `wall_s` (each simulation's own
wall time in its worker), or with `--cpu` the `cpu_s` metric the search_quality benchmark logs.

    python benchmarks/worker_efficiency.py RUN_DIR [...] [--workers 2,8,32,128] [--master-s 0.002]

Two measurements feed it: `--overhead N` times the search's own CPU (ask/tell, survival,
resampling, log, cache, checkpoints, outputs) over N evaluations of the analytic problem, whose
simulations cost microseconds, with the default algorithm and resampling and the quickstart's
2 seeds; `--dask N` times N no-op tasks through a 2-worker Dask LocalCluster (the engine's own
path) against the same tasks run in-process, i.e. the scheduler's per-task overhead.

    python benchmarks/worker_efficiency.py --overhead 1000
    python benchmarks/worker_efficiency.py --dask 400
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass
import heapq
from collections import deque
import io
import json
import tempfile
import time
from pathlib import Path

import yaml

Batch = list[float]


def batches(log: Path, cpu: bool = False) -> list[Batch]:
    """The simulations of a run, as the batches its search submitted (in log order)."""
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    by_id = {r["eval_id"]: r for r in rows}
    groups: dict[tuple[int, str], Batch] = {}
    for r in rows:
        prev = by_id.get(r["supersedes"]) if r.get("supersedes") is not None else None
        copied = set(prev["seeds"]) if prev else set()
        kind = "resample" if prev else r["kind"]
        for s in r["per_seed"]:
            if s["cached"] or s["seed"] in copied:
                continue
            d = (s["metrics"] or {}).get("cpu_s", s["wall_s"]) if cpu else s["wall_s"]
            groups.setdefault((r["generation"], kind), []).append(float(d))
    order = {"baseline": 0, "screen": 1, "search": 2, "resample": 3, "recheck": 4}  # a generation screens first
    return [groups[k] for k in sorted(groups, key=lambda k: (k[0], order.get(k[1], 9)))]


def list_schedule(tasks: Batch, n: int, start: float = 0.0) -> float:
    """Finish time of `tasks` given in order to the first free of n workers, all free at `start`."""
    free = [start] * n
    end = start
    for d in tasks:
        t = heapq.heappop(free) + d
        end = max(end, t)
        heapq.heappush(free, t)
    return end


def barrier(bs: list[Batch], n: int) -> float:
    """Makespan when each batch waits for the previous one to finish."""
    t = 0.0
    for b in bs:
        t = list_schedule(b, n, t)
    return t


def steady(bs: list[Batch], n: int, master_s: float = 0.0) -> float:
    """Makespan of the steady-state schedule: no barrier; one master spends `master_s` per result
    (serially) before the freed worker gets its next task."""
    tasks = [d for b in bs for d in b]
    free = [0.0] * n
    master = 0.0
    end = 0.0
    for d in tasks:
        ready = heapq.heappop(free)
        master = max(master, ready) + master_s  # the master tells the result and asks the next genome
        t = master + d
        end = max(end, t)
        heapq.heappush(free, t)
    return end


@dataclass
class SteadyLog:
    """A steady run's simulations as its schedule submitted them (`parts`)."""

    base: Batch  # the baselines', first in the pool
    genomes: list[Batch]  # each genome's, in index order
    rounds: dict[int, Batch]  # generation g's resampling round, started when result (g+1) mu - 1 is told
    tail: list[Batch]  # resampling at the search's end, round after round
    recheck: Batch
    mu: int
    lag: int
    told: int  # genomes told (the checkpoint's count; `genomes` holds one entry for each)


def parts(run_dir: Path, cpu: bool = False) -> SteadyLog:
    """Read a steady run (`algorithm.schedule: steady`): its log, lag and mu (docs/search.md).

    Generation g's round (rows of generation g that supersede a row) is folded in after result
    (g+1) mu + min(L, mu) - 1, or at the search's end: checked against where its rows are logged. The
    rows of the last generation's rounds logged after the last genome are resampling at the end, whose
    rounds (each waits for the one before) are told apart by asking the run's own resampler which rows
    it adds on the log up to each round (`_tail_rounds`)."""
    from paretosched.search.runlog import load_checkpoint

    log = run_dir / "evaluations.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    state = load_checkpoint(run_dir)
    study = yaml.safe_load((run_dir / "study.yaml").read_text())
    if state is None or state.steady is None:
        raise ValueError(f"{run_dir}: not a run of algorithm.schedule: steady")
    mu, lag = int(study["algorithm"]["pop_size"]), int(state.steady["lag"])
    by_id = {r["eval_id"]: r for r in rows}
    dur = lambda s: float((s["metrics"] or {}).get("cpu_s", s["wall_s"]) if cpu else s["wall_s"])  # noqa: E731
    out = SteadyLog([], [], {}, [], [], mu, lag, int(state.n_told))
    n_genomes = sum(1 for r in rows if r["kind"] == "search" and r.get("supersedes") is None)
    last = (out.told - 1) // mu
    where: dict[int, int] = {}  # a round's first row: genomes logged before it
    tail_rows: list[dict] = []
    for r in rows:
        prev = by_id.get(r["supersedes"]) if r.get("supersedes") is not None else None
        copied = set(prev["seeds"]) if prev else set()
        sims = [dur(s) for s in r["per_seed"] if not s["cached"] and s["seed"] not in copied]
        if prev is not None and r["generation"] < last:
            out.rounds.setdefault(r["generation"], []).extend(sims)
            where.setdefault(r["generation"], len(out.genomes))
        elif prev is not None:
            tail_rows.append(r)
        elif r["kind"] == "search":
            out.genomes.append(sims)
        else:
            (out.base if r["kind"] == "baseline" else out.recheck).extend(sims)
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
        placed = dups
    out.genomes += [[] for _ in range(out.told - n_genomes - placed)]
    start = 0
    for size in _tail_rounds(run_dir, tail_rows):
        out.tail.append([dur(s) for r in tail_rows[start:start + size] for s in r["per_seed"]
                         if not s["cached"] and s["seed"] not in set(by_id[r["supersedes"]]["seeds"])])
        start += size
    return out


def _tail_rounds(run_dir: Path, tail_rows: list[dict]) -> list[int]:
    """Sizes of the rounds of resampling at a run's end, in rows: the run's own resampler, on the log
    up to each round, gives that round's rows (checked against the log)."""
    from paretosched.search.ledger import Ledger
    from paretosched.search.resample import Resampler
    from paretosched.search.study import extra_seeds, load_study

    study = load_study(run_dir / "study.yaml")
    sizes: list[int] = []
    done = 0
    while done < len(tail_rows):
        ledger = Ledger(run_dir, study.objective_names, tail_rows[done]["eval_id"])
        specs = Resampler(ledger, study.signs, list(study.seeds), extra_seeds(study),  # type: ignore[arg-type]
                          study.resampling).round_specs()
        got = [(r["supersedes"], r["seeds"]) for r in tail_rows[done:done + len(specs)]]
        if not specs or got != [(s.supersedes, s.seeds) for s in specs]:
            raise ValueError(f"{run_dir}: the resampling logged at the end is not the rounds the resampler gives")
        sizes.append(len(specs))
        done += len(specs)
    return sizes


def lagged(run: SteadyLog, n: int) -> tuple[float, float, float]:
    """(last result told and the round out folded in, end of the search, makespan with the re-check)
    of the steady schedule on n workers, by
    discrete events (see the module doc): a free worker takes the pool's next task; results are told
    in index order; after result t-1 is told, the round due is folded in (waiting for its seeds), then
    at t = (g+1) mu generation g's round goes to the front of the pool, then the genomes up to t + L
    are bred and queued."""
    mu, lag, genomes = run.mu, run.lag, run.genomes
    G = len(genomes)
    delay = min(lag, mu)
    queue: deque[tuple[str, int, float]] = deque(("base", 0, d) for d in run.base)
    left = {("base", 0): len(run.base)}  # tasks still out per item
    bred = min(G, mu + lag)
    for j in range(bred):
        queue.extend(("genome", j, d) for d in genomes[j])
        left[("genome", j)] = len(genomes[j])
    events: list[tuple[float, int, str, int]] = []  # (finish time, tiebreak, kind, index)
    idle, t, seq, told = n, 0.0, 0, 0
    out: tuple[int, int] | None = None  # the round out: (generation, results told at its fold-in)
    due = False  # result `told` - 1 was told and what follows it (fold-in, round, breeding) is not done

    def advance() -> None:
        nonlocal told, bred, out, due
        while left[("base", 0)] == 0:
            if due:
                if out is not None and told >= out[1]:
                    if left[("round", out[0])]:
                        return  # the fold-in waits for the round's seeds
                    out = None
                g = told // mu - 1
                if told % mu == 0 and told < G and run.rounds.get(g):
                    queue.extendleft(("round", g, d) for d in reversed(run.rounds[g]))
                    left[("round", g)] = len(run.rounds[g])
                    out = (g, min(told + delay, G))
                while told >= min(mu, G) and bred < G and bred - lag <= told:
                    queue.extend(("genome", bred, d) for d in genomes[bred])
                    left[("genome", bred)] = len(genomes[bred])
                    bred += 1
                due = False
            if told == G or left[("genome", told)]:
                return
            told, due = told + 1, True

    advance()
    while True:
        while idle and queue:
            kind, k, d = queue.popleft()
            heapq.heappush(events, (t + d, seq, kind, k))
            seq, idle = seq + 1, idle - 1
        if not events:
            break
        t, _, kind, k = heapq.heappop(events)
        idle += 1
        left[(kind, k)] -= 1
        while idle and queue:  # the pool hands the freed worker its next task before the search sees the result
            kind, k, d = queue.popleft()
            heapq.heappush(events, (t + d, seq, kind, k))
            seq, idle = seq + 1, idle - 1
        advance()
    if told < G or out is not None and left[("round", out[0])]:
        raise RuntimeError("the replay stalled")  # a bug of this model, never a property of the run
    told_at = t
    for batch in run.tail:  # each round waits for the one before
        t = list_schedule(batch, n, t)
    return told_at, t, list_schedule(run.recheck, n, t)


def steady_busy(run: SteadyLog) -> float:
    return sum(map(sum, [run.base, *run.genomes, *run.rounds.values(), *run.tail, run.recheck]))


def efficiency(bs: list[Batch], n: int, makespan: float) -> float:
    busy = sum(sum(b) for b in bs)
    return busy / (n * makespan) if makespan > 0 else 1.0


def search_overhead(n: int, schedule: str = "generational") -> float:
    """CPU seconds per evaluation of the search itself (see the module doc)."""
    from paretosched.search.analytic import study_dict
    from paretosched.search.optimise import optimise

    with tempfile.TemporaryDirectory() as tmp:
        study = study_dict(budget={"evaluations": n}, seeds=2)
        for key in ("algorithm", "resampling"):  # the defaults, as a user's study has them
            study.pop(key, None)
        if schedule != "generational":
            study["algorithm"] = {"schedule": schedule}
        path = Path(tmp) / "study.yaml"
        path.write_text(yaml.safe_dump(study))
        t0, w0 = time.process_time(), time.perf_counter()
        with contextlib.redirect_stderr(io.StringIO()):
            run = optimise(str(path), out=str(Path(tmp) / "run"), quiet=True)
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
        s = json.loads((run / "summary.json").read_text())
    told = s["n_told"]
    print(f"search overhead ({schedule}): {cpu:.2f} CPU s ({wall:.2f} s wall: fsyncs) for a budget of {n} evaluations "
          f"({told} genomes + {s['n_resampled']} resampled seeds, {len(s['generations'])} generations) = "
          f"{1000 * cpu / n:.2f} ms CPU, {1000 * wall / n:.2f} ms wall per evaluation (analytic problem: simulations ~0)")
    return cpu / n


def dask_overhead(n: int) -> float:
    """Wall seconds per task through a 2-worker LocalCluster, minus the same tasks in-process."""
    from paretosched.search.cache import Cache
    from paretosched.search.evaluate import Engine

    cfg = {"scheduler": {"freq": 0.5, "power_off_idle_s": 100, "job_policy": "shortest", "backfilling": "easy"}}
    tasks = [(cfg, s) for s in range(n)]
    fn = "paretosched.search.analytic:evaluate"
    with Engine(fn, 1, cache=Cache(None)) as local:
        t0 = time.perf_counter()
        local.evaluate(tasks)
        t_local = time.perf_counter() - t0
    with Engine(fn, 2, "dask", cache=Cache(None)) as engine:
        engine.evaluate(tasks[:20])  # start-up: workers import paretosched
        t0 = time.perf_counter()
        engine.evaluate(tasks)
        t_dask = time.perf_counter() - t0
    per = (t_dask - t_local) / n
    print(f"dask LocalCluster (2 workers): {n} tasks in {t_dask:.2f} s vs {t_local:.3f} s in-process = "
          f"{1000 * per:.2f} ms overhead per task")
    return per


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--overhead", type=int, metavar="N", help="time the search's own CPU over N evaluations")
    ap.add_argument("--schedule", default="generational", choices=["generational", "steady"],
                    help="--overhead: the study's algorithm.schedule")
    ap.add_argument("--dask", type=int, metavar="N", help="time N no-op tasks through a Dask LocalCluster")
    ap.add_argument("logs", nargs="*", help="run directories or evaluations.jsonl files")
    ap.add_argument("--workers", default="2,8,32,128")
    ap.add_argument("--master-s", type=float, default=0.0, help="search CPU per told result (steady schedule)")
    ap.add_argument("--cpu", action="store_true", help="replay the cpu_s metric instead of wall_s")
    args = ap.parse_args(argv)
    ns = [int(n) for n in args.workers.split(",")]
    if args.overhead:
        search_overhead(args.overhead, args.schedule)
    if args.dask:
        dask_overhead(args.dask)
    for item in args.logs:
        log = Path(item) / "evaluations.jsonl" if Path(item).is_dir() else Path(item)
        bs = batches(log, args.cpu)
        tasks = [d for b in bs for d in b]
        sizes = sorted(len(b) for b in bs)
        print(f"{log}: {len(tasks)} simulations in {len(bs)} batches (median batch {sizes[len(sizes) // 2]}), "
              f"duration {min(tasks):.3f}-{max(tasks):.3f} s (mean {sum(tasks) / len(tasks):.3f})")
        run = None
        try:
            run = parts(log.parent, args.cpu)
        except (ValueError, OSError) as exc:  # a generational run, or a log without its run directory
            print(f"  lag: - ({exc})")
        if run is not None:
            print(f"  steady run: lag L = {run.lag}, mu = {run.mu}, {len(run.genomes)} genomes, {len(run.rounds)} "
                  f"rounds during the search, {len(run.tail)} at its end (told {run.told})")
        print(f"{'workers':>8} | {'barrier':>8} | {'steady':>8} | {'lag':>8} | {'lag, search':>11} | "
              f"makespan: search, resampling at its end, re-check (s)")
        for n in ns:
            line = f"{n:>8} | {efficiency(bs, n, barrier(bs, n)):>8.3f} | " \
                   f"{efficiency(bs, n, steady(bs, n, args.master_s)):>8.3f}"
            if run is not None:
                told_at, search_end, span = lagged(run, n)
                busy = steady_busy(run)
                line += f" | {busy / (n * span):>8.3f} | {(busy - sum(run.recheck)) / (n * search_end):>11.3f} | " \
                        f"{told_at:.2f}, {search_end - told_at:.2f}, {span - search_end:.2f}"
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
