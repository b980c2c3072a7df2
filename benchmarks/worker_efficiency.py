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
- `lag`: `algorithm.schedule: steady` as built, for a steady run only (benchmarks/steady_replay.py:
  the run's own lag and resampling rounds, and speculation, checked against the real search on
  virtual workers).

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
import heapq
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from steady_replay import Batch, Replay, SteadyLog, lagged, list_schedule, oracle, parts, steady_busy  # noqa: E402


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
    ap.add_argument("--ahead", type=int, help="what if: speculation's cap (resample.AHEAD, genomes beyond a round "
                    "per genome of the round)")
    args = ap.parse_args(argv)
    ns = [int(n) for n in args.workers.split(",")]
    if args.ahead is not None:
        from paretosched.search import resample

        resample.AHEAD = args.ahead
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
        replays = {}
        for n in ns:
            line = f"{n:>8} | {efficiency(bs, n, barrier(bs, n)):>8.3f} | " \
                   f"{efficiency(bs, n, steady(bs, n, args.master_s)):>8.3f}"
            if run is not None:
                replays[n] = r = lagged(run, n, speculate=False), lagged(run, n), lagged(oracle(run), n)
                busy = steady_busy(run)
                line += f" | {busy / (n * r[0].makespan):>8.3f} | {(busy - sum(run.recheck)) / (n * r[0].search_end):>11.3f}" \
                        f" | {r[0].told_at:.2f}, {r[0].search_end - r[0].told_at:.2f}, {r[0].makespan - r[0].search_end:.2f}"
            print(line)
        if run is not None:
            _report_speculation(run, replays)
    return 0


def _report_speculation(run: SteadyLog, replays: dict[int, tuple[Replay, Replay, Replay]]) -> None:
    """Where the idle worker-time goes, and what speculation (TaskPool.speculate) does to it."""
    busy = steady_busy(run)
    phases = ["start", "search", "fold-in", "end", "recheck"]
    print(f"  idle worker-time by phase (s; start: before generation 0 is told, fold-in: the telling waits for a "
          f"round, end: resampling at the search's end), without / with speculation; `bound`: the efficiency "
          f"with perfect speculation (every later round's seeds its candidates)")
    print(f"{'workers':>8} | {'lag':>6} | {'speculate':>9} | {'unused s':>8} | {'bound':>6} | makespan (s) | "
          + " | ".join(f"{p:>13}" for p in phases))
    for n, (plain, spec, best) in replays.items():
        bound = busy / (n * best.makespan)
        print(f"{n:>8} | {busy / (n * plain.makespan):>6.3f} | {busy / (n * spec.makespan):>9.3f} | "
              f"{spec.unused_s:>8.2f} | {bound:>6.3f} | {plain.makespan:.2f} / {spec.makespan:.2f} | "
              + " | ".join(f"{plain.idle_s.get(p, 0):>6.2f}/{spec.idle_s.get(p, 0):<6.2f}" for p in phases))


    return 0


if __name__ == "__main__":
    raise SystemExit(main())
