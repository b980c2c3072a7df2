"""Search quality at equal simulation cost (issues 17, 31): what users get from each method.

Quality = hypervolume of the *re-checked* front: each method's front (on the search seeds) is
re-simulated on fresh seeds, and its hypervolume is taken with the reference point at the
re-checked objectives of the production baseline (FCFS + EASY), so only trade-offs that beat
today's scheduler on both objectives count. Cost = simulation CPU seconds (time.process_time
around each simulation, logged as an extra metric `cpu_s`, and reported) and the budget:
`--cost evaluations` (the default) charges each new (config, seed) simulation one evaluation
(1 / the number of search seeds), the budget a user sets (`budget: {evaluations: N}`); it is
deterministic whatever the machine's load, so repetitions are exactly reproducible. `--cost cpu`
charges CPU seconds instead: the budget is N evaluation-equivalents, N x the CPU seconds of one
evaluation measured once up front (a method with cheaper genomes then gets more of them; the
figures drift with load). Every method's history is cut where its cumulative cost would pass
the budget, so no method gains from the overshoot of its last batch; a (config, seed) a method
already simulated costs it nothing again (paretosched's log serves repeats the same way).

Peers, each `--reps` times (repetition r = study seed r: same search and fresh seeds for all):
random search, Optuna's TPE (multi-objective) and NSGA-II samplers (optional: `pip install
'paretosched[bench]'`), pymoo's MixedVariableGA with rank-and-crowding survival (random parent
selection, pymoo's defaults), and paretosched's default (`optimise` on the study with no search
option set). The comparison is paired (sq_stats.py): per repetition the default's re-checked
HV and its ratio to each peer's, the wins (>=) out of the repetitions, an exact one-sided sign
test and a Wilcoxon signed-rank test.

Problems: `classic` (gaia; SDSC-BLUE job lines 10,000-10,999; policies, EASY, switch-off, DVFS,
bandwidth cap), `rl` (gaia-mini, HPC2N job lines 2,400-2,999; 16 genes: learner, learning rate,
discount, width, depth, episodes, observation, reward weight and timing, action subset, EASY, levers)
and `slurm` (gaia; SDSC-BLUE job lines 10,000-10,499; the slurm quickstart's 10 slurm.conf genes:
priority weights, backfill test list and interval, node order, power saving, CpuFreqDef; against
Slurm's defaults).

    python benchmarks/search_quality.py --problem classic --budget 200 --reps 10 --json out.json
    python benchmarks/search_quality.py --problem rl --budget 200 --reps 3
    python benchmarks/search_quality.py --merge r0.json r1.json lever=lever.json   # pool finished runs
    python benchmarks/search_quality.py --problem classic --prefix-correlation 0.1,0.25,0.5 --unit-cpu 1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml

from paretosched.search import pareto
from paretosched.search.cache import Cache
from paretosched.search.evaluate import Engine
from paretosched.search.fidelity import prefix_config
from paretosched.search.space import SearchSpace
from paretosched.search.study import Study, baseline_config, load_study

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the evaluator reference imports this file as `search_quality`
from snapshot import shared_workloads  # noqa: E402  (benchmarks/snapshot.py)
# a method's run and its ledger (sq_peers.py), the scoring and the table (sq_stats.py): imported
# here so `search_quality.<name>` keeps working for tests and callers
from sq_peers import (  # noqa: E402,F401
    Event, Ledger, cut, evaluate_genomes, front_configs, log_ledger, recheck_F, run_optuna, run_paretosched,
    run_pymoo_ga, run_random,
)
from sq_stats import all_paired, merge, paired, rechecked_hv, report, write_json  # noqa: E402,F401

SHARED = shared_workloads()
EVALUATOR = "search_quality:timed_evaluate"
METHODS = ("paretosched", "random", "pymoo-ga", "optuna-tpe", "optuna-nsga2")

CLASSIC_GENES = {
    "scheduler.job_policy": {"type": "choice", "values": ["random", "first", "shortest", "smallest", "low_mem", "low_mem_bw"]},
    "scheduler.resource_policy": {"type": "choice", "values": ["random", "high_gflops", "high_cores", "high_mem", "high_mem_bw", "low_power"]},
    "scheduler.backfilling": {"type": "bool", "values": ["none", "easy"]},
    "scheduler.power_off_idle_s": {"type": "choice", "values": [None, 60, 600, 3600, 14400]},
    "scheduler.freq": {"type": "float", "low": 0.5, "high": 1.0},
    "scheduler.bw_cap": {"type": "choice", "values": [None, 0.75, 1.0, 1.5]},
}
RL_GENES = {
    "scheduler.agent": {"type": "choice", "values": ["reinforce", "actor_critic", "tabular"]},
    "scheduler.learning_rate": {"type": "float", "low": 0.0001, "high": 0.1, "log": True},
    "scheduler.gamma": {"type": "float", "low": 0.0, "high": 1.0},
    "scheduler.hidden_units": {"type": "int", "low": 4, "high": 128, "log": True},
    "scheduler.hidden_layers": {"type": "int", "low": 0, "high": 3},
    "scheduler.episodes": {"type": "int", "low": 1, "high": 6},
    "scheduler.observation": {"type": "choice", "values": ["minimal", "small", "normal"]},
    "scheduler.reward_weight": {"type": "float", "low": 0.0, "high": 1.0},
    "scheduler.reward_timing": {"type": "choice", "values": ["job", "interval", "instant"]},
    "scheduler.allow_job_random": {"type": "bool"},
    "scheduler.allow_job_shortest": {"type": "bool"},
    "scheduler.allow_res_random": {"type": "bool"},
    "scheduler.allow_res_low_power": {"type": "bool"},
    "scheduler.backfilling": {"type": "bool", "values": ["none", "easy"]},
    "scheduler.power_off_idle_s": {"type": "choice", "values": [None, 60.0, 600.0, 3600.0, 14400.0]},
    "scheduler.freq": {"type": "float", "low": 0.5, "high": 1.0},
}
# the slurm quickstart's genome (studies/slurm-quickstart.yaml): every gene a slurm.conf parameter
SLURM_GENES = {
    "scheduler.priority_weight_age": {"type": "choice", "values": [0, 1000, 10000]},
    "scheduler.priority_weight_job_size": {"type": "choice", "values": [0, 1000, 10000]},
    "scheduler.priority_favor_small": {"type": "bool"},
    "scheduler.priority_weight_fairshare": {"type": "choice", "values": [0, 1000, 10000]},
    "scheduler.bf_max_job_test": {"type": "choice", "values": [10, 50, 100]},
    "scheduler.bf_interval_s": {"type": "choice", "values": [10, 30, 120]},
    "scheduler.node_order": {"type": "choice", "values": ["platform", "fastest_first", "lowest_power_first", "efficiency_first"]},
    "scheduler.suspend_time_s": {"type": "choice", "values": [None, 120, 600, 1800]},
    "scheduler.suspend_rate": {"type": "choice", "values": [0, 5, 60]},
    "scheduler.cpu_freq_def": {"type": "choice", "values": ["Performance", "PowerSave"]},
}
PROBLEMS: dict[str, dict[str, Any]] = {
    "classic": {"trace": str(SHARED / "SDSC-BLUE-2000-4.2-cln.swf.gz"), "first_job": 10000, "n_jobs": 1000,
                "platform": "gaia", "mode": "hdeeprm", "genes": CLASSIC_GENES, "recheck": 4,
                "scheduler": {"kind": "classic", "job_policy": "first", "resource_policy": "high_gflops", "backfilling": "easy"},
                "production": {"scheduler": {"job_policy": "first", "resource_policy": "high_gflops", "backfilling": "easy"}}},
    # the default evaluation trains 3 episodes: the middle of the searched 1-6, so N evaluation-
    # equivalents buy about N genomes (the RL default of 20 episodes would make the unit 5x a genome)
    "rl": {"trace": "builtin:hpc2n-3k.swf.gz", "first_job": 2400, "n_jobs": 600, "platform": "gaia-mini",
           "mode": "trace", "genes": RL_GENES, "recheck": 4,
           "scheduler": {"kind": "rl", "reward": "energy_slowdown", "train_window_count": 3, "episodes": 3},
           "production": {"scheduler": {"actions": ["first-high_gflops"], "backfilling": "easy", "episodes": 0}}},
    # the classic problem's platform and first half-window, the Slurm genome; production = Slurm's
    # own defaults (multifactor weights 0, i.e. submit order, sched/backfill), what a site runs
    # before tuning. gaia's blades boot in 150 s, past Slurm's default ResumeTimeout of 60 s.
    "slurm": {"trace": str(SHARED / "SDSC-BLUE-2000-4.2-cln.swf.gz"), "first_job": 10000, "n_jobs": 500,
              "platform": "gaia", "mode": "hdeeprm", "genes": SLURM_GENES, "recheck": 4,
              "scheduler": {"kind": "slurm", "resume_timeout_s": 300},
              "production": {"scheduler": {"kind": "slurm", "resume_timeout_s": 300}}},
}


def timed_evaluate(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """The twin's metrics plus `cpu_s`, the simulation's CPU seconds (this process, all threads)."""
    from paretosched.search.twin import evaluate

    t0 = time.process_time()
    metrics = evaluate(cfg, seed)
    return {**metrics, "cpu_s": time.process_time() - t0}


def study_dict(problem: str, trace: str, first_job: int, n_jobs: int, rep: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The benchmark's study for one repetition: nothing set that a user would not set."""
    p = PROBLEMS[problem]
    return {
        "name": f"quality-{problem}-{rep}",
        "base": {"platform": p["platform"], "model": {"interference": "thesis"}, "scheduler": p["scheduler"],
                 "workload": {"path": trace, "mode": p["mode"], "first_job": first_job, "n_jobs": n_jobs}},
        "search": p["genes"], "objectives": ["energy_kwh", "mean_bsld"], "seeds": 1, "seed": rep,
        "recheck": p["recheck"], "budget": {"evaluations": 10**6}, "evaluator": EVALUATOR, **(extra or {}),
    }


def unit_cpu(study: Study, fn: Callable[..., dict[str, float]], how: str) -> float:
    """CPU seconds of one evaluation-equivalent, on the first search seed, after a warm-up that
    parses the inputs (paid once per worker, not per evaluation). `default`: the base config;
    `sample`: the mean of 8 seeded random genomes (the base config is 2-4x cheaper than a typical
    genome on both problems, so its cost would make "200 evaluations" buy 50-100)."""
    seed = list(study.seeds)[0]  # type: ignore[arg-type]
    fn(study.base, seed)
    if how == "default":
        return float(fn(study.base, seed)["cpu_s"])
    from pymoo.core.mixed import MixedVariableSampling
    from pymoo.core.problem import Problem

    space = SearchSpace(study)
    X = MixedVariableSampling()(Problem(vars=space.pymoo_vars(), n_obj=2), 8, random_state=np.random.default_rng(0)).get("X")
    costs = []
    for x in X:
        try:
            costs.append(float(fn(space.config(space.decode(x)), seed)["cpu_s"]))
        except Exception:  # noqa: BLE001 - a failing genome is not a unit of cost
            continue
    return float(np.mean(costs))


def prefix_correlation(study: Study, engine: Engine, fractions: list[float], n: int) -> None:
    """How well a genome set's ranking on the first k% of the window predicts its ranking on the
    whole window (lever 1's premise): Spearman and Kendall per objective, and of the
    non-dominated sorting rank, over n seeded random genomes on the first search seed."""
    from pymoo.core.mixed import MixedVariableSampling
    from pymoo.core.problem import Problem
    from scipy.stats import kendalltau, spearmanr

    space, seed = SearchSpace(study), list(study.seeds)[0]  # type: ignore[arg-type]
    X = MixedVariableSampling()(Problem(vars=space.pymoo_vars(), n_obj=2), n, random_state=np.random.default_rng(5)).get("X")
    configs = [space.config(space.decode(x)) for x in X]

    def objectives(frac: float) -> tuple[np.ndarray, float]:
        cs = configs if frac == 1.0 else [prefix_config(c, frac) for c in configs]  # what screening runs
        rs = engine.evaluate([(c, seed) for c in cs])
        F = np.array([[r.metrics[o] if r.status == "ok" else np.nan for o in study.objective_names] for r in rs])
        return F, sum(r.metrics["cpu_s"] for r in rs if r.status == "ok")

    full, full_cpu = objectives(1.0)
    for frac in fractions:
        F, cpu = objectives(frac)
        ok = ~(np.isnan(F).any(axis=1) | np.isnan(full).any(axis=1))
        cells = []
        for k, o in enumerate(study.objective_names):
            cells.append(f"{o} rho {spearmanr(F[ok, k], full[ok, k])[0]:.2f} tau {kendalltau(F[ok, k], full[ok, k])[0]:.2f}")
        ranks = [pareto.ranks(study.signs * G[ok]) for G in (F, full)]
        cells.append(f"front rank rho {spearmanr(*ranks)[0]:.2f} tau {kendalltau(*ranks)[0]:.2f}")
        print(f"prefix {frac:.0%} ({cpu / full_cpu:.0%} of the CPU), {ok.sum()} genomes: " + "; ".join(cells))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", choices=sorted(PROBLEMS), default="classic")
    ap.add_argument("--trace", help="SWF trace (default: the problem's)")
    ap.add_argument("--first-job", type=int)
    ap.add_argument("--n-jobs", type=int)
    ap.add_argument("--budget", type=int, default=200, help="evaluation-equivalents per method and repetition")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--first-rep", type=int, default=0, help="repetitions run are first-rep .. first-rep + reps - 1")
    ap.add_argument("--cost", choices=["evaluations", "cpu"], default="evaluations",
                    help="what the budget counts: new simulations (deterministic) or CPU seconds")
    ap.add_argument("--unit", choices=["sample", "default"], default="sample",
                    help="with --cost cpu: what one evaluation-equivalent is (see unit_cpu)")
    ap.add_argument("--unit-cpu", type=float, help="CPU seconds of one evaluation-equivalent (skip the measurement: "
                    "to compare with an earlier run, give the value it printed)")
    ap.add_argument("--recheck", type=int, help="fresh seeds of the re-check (default: the problem's)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--study-extra", default="{}", help="JSON merged into paretosched's study (a lever to try)")
    ap.add_argument("--prefix-correlation", metavar="FRACTIONS",
                    help="instead of the comparison: rank correlation prefix vs full window, e.g. 0.1,0.25,0.5")
    ap.add_argument("--genomes", type=int, default=40, help="genomes for --prefix-correlation")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="instead of running: pool the repetitions of finished runs' --json files and print the table")
    ap.add_argument("--out", help="work folder (default: a temporary one); the shared cache lives there")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.json)
    p = PROBLEMS[args.problem]
    trace = args.trace or p["trace"]
    trace = trace if trace.startswith("builtin:") else str(Path(trace).resolve())
    first_job = p["first_job"] if args.first_job is None else args.first_job
    n_jobs = p["n_jobs"] if args.n_jobs is None else args.n_jobs
    methods = args.methods.split(",")
    if any(m.startswith("optuna") for m in methods):
        try:
            import optuna  # noqa: F401  # type: ignore[import-not-found]
        except ImportError:
            print("optuna not installed (pip install 'paretosched[bench]'): skipping its samplers", file=sys.stderr)
            methods = [m for m in methods if not m.startswith("optuna")]
    os.environ["PARETOSCHED_EVALUATORS"] = ",".join(filter(None, [os.environ.get("PARETOSCHED_EVALUATORS"), EVALUATOR]))
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="search-quality-"))
    work.mkdir(parents=True, exist_ok=True)
    extra = json.loads(args.study_extra)

    hv: dict[str, list[float]] = {m: [] for m in methods}
    cpu: dict[str, list[float]] = {m: [] for m in methods}
    use_cpu = args.cost == "cpu"
    unit = args.unit_cpu if use_cpu else 1.0
    reps = list(range(args.first_rep, args.first_rep + args.reps))
    for rep in range(args.first_rep, args.first_rep + args.reps):
        sd = study_dict(args.problem, trace, first_job, n_jobs, rep)
        if args.recheck is not None:
            sd["recheck"] = args.recheck
        sfile = work / f"study-{rep}.yaml"
        sfile.write_text(yaml.safe_dump(sd))
        study = load_study(sfile)
        from search_quality import timed_evaluate as fn  # type: ignore[import-not-found]  # the engine's copy

        if unit is None:  # measured once, on the first repetition's seed
            unit = unit_cpu(study, fn, args.unit)
            print(f"{args.problem}: one evaluation-equivalent ({args.unit}) = {unit:.3f} CPU s; budget {args.budget} x that = "
                  f"{args.budget * unit:.1f} CPU s per method and repetition", file=sys.stderr)
        budget = args.budget * unit
        if args.prefix_correlation:
            with Engine(EVALUATOR, 1, cache=Cache(work / ".cache")) as engine:
                prefix_correlation(study, engine, [float(f) for f in args.prefix_correlation.split(",")], args.genomes)
            return 0
        with Engine(EVALUATOR, 1, cache=Cache(work / ".cache")) as engine:
            ref = recheck_F(study, engine, [baseline_config(study.base, p["production"])])  # type: ignore[arg-type]
            if not len(ref):
                raise SystemExit(f"the production baseline failed on the re-check seeds of repetition {rep}")
            for m in methods:
                t0 = time.perf_counter()
                if m == "paretosched":
                    pstudy = load_study_with(sfile, extra) if extra else study
                    led = run_paretosched(pstudy, engine, budget, work / f"paretosched-{rep}", use_cpu)
                elif m == "random":
                    led = run_random(study, engine, budget, rep, use_cpu)
                elif m == "pymoo-ga":
                    led = run_pymoo_ga(study, engine, budget, rep, use_cpu)
                else:
                    led = run_optuna(study, engine, budget, rep, m.split("-")[1], use_cpu)
                events, spent = cut(led, budget)
                F = recheck_F(study, engine, front_configs(events))
                hv[m].append(rechecked_hv(F, ref[0]))
                cpu[m].append(round(spent, 3))
                print(f"rep {rep} {m}: {len(events)} evaluations, {spent:.1f} CPU s, re-checked HV {hv[m][-1]:.6g} "
                      f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
        if args.json:  # the repetitions finished so far, so a long invocation stopped midway loses none
            write_json(args.problem, args.budget, hv, cpu, args.json, reps[:len(hv[methods[0]])])

    cost = f"{args.budget * (unit or 0):.1f} CPU s" if use_cpu else "new simulations"
    print(f"\n{args.problem}, budget {args.budget} ({cost}), repetitions {reps[0]}-{reps[-1]}")
    report(args.problem, args.budget, hv, cpu, args.json, reps)
    return 0


def load_study_with(sfile: Path, extra: dict[str, Any]) -> Study:
    """The repetition's study with `extra` merged in (the lever under test), as its own file."""
    d = yaml.safe_load(sfile.read_text())
    d.update(extra)
    lever = sfile.with_name(sfile.stem + "-lever.yaml")
    lever.write_text(yaml.safe_dump(d))
    return load_study(lever)


if __name__ == "__main__":
    raise SystemExit(main())
