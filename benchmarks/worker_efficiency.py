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
- `lag`: `algorithm.schedule: steady` as built (paretosched/search/steady.py): one pool, FIFO. The
  baselines' simulations first, then the genomes in index order, genome j >= mu + L queued once
  result j-L-1 is told (results told in index order; L = `--lag`, default 2 x workers; mu the run's
  pop_size; genomes before mu + L are random draws, queued at once). Generation g's resampling is
  queued when result (g+1) mu - 1 is told, and nothing more is told or bred until it is done; the
  re-check is a batch at the end. On a generational log the same replay takes its genomes in log
  order: what the run would have cost under the steady schedule with the same genomes.

Efficiency = busy worker-time / (N x makespan). Durations are `wall_s` (each simulation's own
wall time in its worker), or with `--cpu` the `cpu_s` metric the search_quality benchmark logs.

    python benchmarks/worker_efficiency.py RUN_DIR_OR_LOG [...] [--workers 2,8,32,128] [--master-s 0.002]

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


def parts(log: Path, cpu: bool = False) -> tuple[Batch, list[Batch], dict[int, Batch], Batch]:
    """(the baselines' simulations, each genome's in index order, resampling's by generation, the re-check's)."""
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    by_id = {r["eval_id"]: r for r in rows}
    dur = lambda s: float((s["metrics"] or {}).get("cpu_s", s["wall_s"]) if cpu else s["wall_s"])  # noqa: E731
    base: Batch = []
    genomes: list[Batch] = []
    rounds: dict[int, Batch] = {}
    recheck: Batch = []
    for r in rows:
        prev = by_id.get(r["supersedes"]) if r.get("supersedes") is not None else None
        copied = set(prev["seeds"]) if prev else set()
        sims = [dur(s) for s in r["per_seed"] if not s["cached"] and s["seed"] not in copied]
        if prev is not None:
            rounds.setdefault(r["generation"], []).extend(sims)
        elif r["kind"] == "search":
            genomes.append(sims)
        else:
            (base if r["kind"] == "baseline" else recheck).extend(sims)
    return base, genomes, rounds, recheck


def lagged(base: Batch, genomes: list[Batch], rounds: dict[int, Batch], recheck: Batch, n: int, lag: int,
           mu: int) -> float:
    """Makespan of the lag schedule (see the module doc), by discrete events: a free worker takes
    the pool's next task; results are told in index order; telling result j-L-1 queues genome j;
    once result (g+1) mu - 1 is told, generation g's resampling goes to the front of the queue and
    nothing more is told (or bred) until it is done."""
    queue: deque[tuple[str, int, float]] = deque(("base", 0, d) for d in base)
    left = {("base", 0): len(base)}  # tasks still out per item
    for j in range(min(len(genomes), mu + lag)):
        queue.extend(("genome", j, d) for d in genomes[j])
        left[("genome", j)] = len(genomes[j])
    events: list[tuple[float, int, str, int]] = []  # (finish time, tiebreak, kind, index)
    idle, t, seq, told, bred, blocked = n, 0.0, 0, 0, min(len(genomes), mu + lag), None
    base_told = not base
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
        if kind == "round" and left[(kind, k)] == 0:
            blocked = None
        base_told = base_told or left[("base", 0)] == 0
        while base_told and blocked is None and told < len(genomes) and left[("genome", told)] == 0:
            told += 1
            g = told // mu - 1
            if told % mu == 0 and rounds.get(g):
                queue.extendleft(("round", g, d) for d in reversed(rounds[g]))
                left[("round", g)], blocked = len(rounds[g]), g
            while bred < len(genomes) and bred - lag <= told and told >= min(mu, len(genomes)):
                queue.extend(("genome", bred, d) for d in genomes[bred])
                left[("genome", bred)] = len(genomes[bred])
                bred += 1
        if not events and not queue:
            break
    g_last = (len(genomes) - 1) // mu
    if g_last in rounds and (g_last + 1) * mu > len(genomes):  # the last, partial generation's round
        t = list_schedule(rounds[g_last], n, t)
    return list_schedule(recheck, n, t)


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


def _pop_size(log: Path, given: int | None) -> int:
    """mu: given, else the run directory's study.yaml, else pymoo's NSGA-II default of 40."""
    if given is not None:
        return given
    study = log.parent / "study.yaml"
    if study.is_file():
        return int((yaml.safe_load(study.read_text()).get("algorithm") or {}).get("pop_size", 40))
    return 40


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
    ap.add_argument("--lag", type=int, help="the lag schedule's L (default 2 x workers)")
    ap.add_argument("--pop-size", type=int, help="mu for the lag schedule (default: the run's study.yaml)")
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
        base, genomes, rounds, recheck = parts(log, args.cpu)
        mu = _pop_size(log, args.pop_size)
        print(f"{'workers':>8} | {'barrier':>8} | {'steady':>8} | {'lag':>8}   (lag: L = {args.lag or '2 x workers'}, "
              f"mu = {mu})")
        for n in ns:
            span = lagged(base, genomes, rounds, recheck, n, args.lag or 2 * n, mu)
            print(f"{n:>8} | {efficiency(bs, n, barrier(bs, n)):>8.3f} | "
                  f"{efficiency(bs, n, steady(bs, n, args.master_s)):>8.3f} | {efficiency(bs, n, span):>8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
