"""Search quality and parallel efficiency on the twin (prints ratios; never asserts).

NSGA-II (paretosched optimise) vs random search vs grid search, and Optuna's NSGA-II and
TPE samplers when optuna is installed, on the gaia platform with a 1000-job window of a
real trace, at the same evaluation budget, each repeated with 3 seeds. Every method's
front is scored by hypervolume against ONE reference point (worst pooled value of each
objective over all methods' evaluations + 10% of the range), so the numbers compare.
Then the parallel efficiency: evaluations per second with 2 workers over 1.

    python benchmarks/search_quality.py --budget 200            # quick look
    python benchmarks/search_quality.py --budget 1000 --reps 3  # the real comparison (long)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from paretosched.errors import UserError
from paretosched.search import pareto
from paretosched.search.cache import Cache
from paretosched.search.evaluate import Engine
from paretosched.search.genes import BoolGene, ChoiceGene, FloatGene, IntGene
from paretosched.search.optimise import optimise
from paretosched.search.runlog import read_evaluations
from paretosched.search.space import SearchSpace
from paretosched.search.study import Study, load_study

DEFAULT_TRACE = "/work/shared/workloads/HPC2N-2002-2.2-cln.swf.gz"


def gaia_study(trace: str, first_job: int, n_jobs: int, budget: int, pop: int, seed: int) -> dict[str, Any]:
    return {
        "name": f"gaia-quality-{seed}",
        "base": {"platform": "gaia", "workload": {"path": trace, "mode": "hdeeprm", "first_job": first_job, "n_jobs": n_jobs}},
        "search": {
            "scheduler.job_policy": {"type": "choice", "values": ["random", "first", "shortest", "smallest", "low_mem", "low_mem_bw"]},
            "scheduler.resource_policy": {"type": "choice", "values": ["random", "high_gflops", "high_cores", "high_mem", "high_mem_bw", "low_power"]},
            "scheduler.backfilling": {"type": "bool", "values": ["none", "easy"]},
            "scheduler.power_off_idle_s": {"type": "float", "low": 30.0, "high": 7200.0, "log": True},
            "scheduler.freq": {"type": "float", "low": 0.5, "high": 1.0},
        },
        "objectives": ["energy_kwh", "mean_bsld"],
        "seeds": 1, "seed": seed, "recheck": 0,
        "budget": {"evaluations": budget},
        "algorithm": {"pop_size": pop},
    }


# ---------------------------------------------------------------------------------------------
# methods: each returns the minimisation-form objective vectors of its evaluations

def _objectives(study: Study, results: list[list[Any]]) -> np.ndarray:
    out = []
    for per_seed in results:
        if all(r.status == "ok" for r in per_seed):
            out.append([np.mean([r.metrics[o] for r in per_seed]) for o in study.objective_names])
    return study.signs * np.array(out, dtype=float) if out else np.empty((0, len(study.signs)))


def _evaluate_genomes(study: Study, space: SearchSpace, engine: Engine, genomes: list[dict[str, Any]]) -> np.ndarray:
    seeds = list(study.seeds)  # type: ignore[arg-type]
    tasks = [(space.config(g), s) for g in genomes for s in seeds]
    flat = engine.evaluate(tasks)
    return _objectives(study, [flat[i * len(seeds):(i + 1) * len(seeds)] for i in range(len(genomes))])


def run_nsga2(study_file: Path, out: Path, workers: int) -> np.ndarray:
    with contextlib.redirect_stderr(io.StringIO()):
        # an earlier run of the benchmark in the same --out is resumed (a finished one is just read)
        try:
            run = optimise(str(study_file), out=str(out), workers=workers, quiet=True, resume=out.exists())
        except UserError as exc:
            if "every evaluation failed" not in str(exc):
                raise
            run = out  # scored like the other methods: no successful point
    study = load_study(run)
    rows = [r for r in read_evaluations(run) if r.kind == "search" and r.ok]
    return study.signs * np.array([r.objective_values(study.objective_names) for r in rows])


def run_random(study: Study, engine: Engine, budget: int, rep: int) -> np.ndarray:
    from pymoo.core.mixed import MixedVariableSampling
    from pymoo.core.problem import Problem

    space = SearchSpace(study)
    problem = Problem(vars=space.pymoo_vars(), n_obj=2)
    X = MixedVariableSampling()(problem, budget, random_state=np.random.default_rng(1000 + rep)).get("X")
    return _evaluate_genomes(study, space, engine, [space.decode(x) for x in X])


def run_grid(study: Study, engine: Engine, budget: int, rep: int) -> np.ndarray:
    """Full factorial over choices, k levels per numeric gene (k as large as the budget allows);
    when even k=2 overflows the budget, a seeded subsample of the grid."""
    space = SearchSpace(study)
    discrete = [len(g.values) if isinstance(g, ChoiceGene) else 2 for g in space.genes.values()
                if isinstance(g, (ChoiceGene, BoolGene))]
    n_num = sum(isinstance(g, (FloatGene, IntGene)) for g in space.genes.values())
    k = max(2, int((budget / max(1, math.prod(discrete))) ** (1 / max(1, n_num)))) if n_num else 1
    axes = []
    for g in space.genes.values():
        if isinstance(g, (FloatGene, IntGene)):
            lo, hi = (math.log(g.low), math.log(g.high)) if g.log else (g.low, g.high)
            axes.append(list(np.linspace(lo, hi, k)))
        elif isinstance(g, BoolGene):
            axes.append([False, True])
        else:
            axes.append(list(range(len(g.values))))
    grid = [dict(zip(space.paths, combo)) for combo in itertools.product(*axes)]
    if len(grid) > budget:
        pick = np.random.default_rng(2000 + rep).choice(len(grid), size=budget, replace=False)
        grid = [grid[i] for i in sorted(pick)]
    return _evaluate_genomes(study, space, engine, [space.decode(x) for x in grid])


def run_optuna(study: Study, engine: Engine, budget: int, rep: int, sampler_name: str, batch: int) -> np.ndarray:
    import optuna  # type: ignore[import-not-found]

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = (optuna.samplers.NSGAIISampler(seed=rep, population_size=batch) if sampler_name == "nsga2"
               else optuna.samplers.TPESampler(seed=rep))
    ost = optuna.create_study(directions=["minimize"] * len(study.signs), sampler=sampler)
    space = SearchSpace(study)
    done: list[np.ndarray] = []
    while sum(len(d) for d in done) < budget:
        n = min(batch, budget - sum(len(d) for d in done))
        trials = [ost.ask() for _ in range(n)]
        genomes = [{p: _suggest(t, p, g) for p, g in space.genes.items()} for t in trials]
        seeds = list(study.seeds)  # type: ignore[arg-type]
        flat = engine.evaluate([(space.config(g), s) for g in genomes for s in seeds])
        for i, t in enumerate(trials):
            per = flat[i * len(seeds):(i + 1) * len(seeds)]
            F = _objectives(study, [per])
            if len(F):
                ost.tell(t, list(F[0]))
                done.append(F)
            else:
                ost.tell(t, state=optuna.trial.TrialState.FAIL)
                done.append(np.empty((1, 0)))
    good = [d for d in done if d.shape[1]]
    return np.vstack(good) if good else np.empty((0, len(study.signs)))


def _suggest(trial: Any, path: str, g: Any) -> Any:
    if isinstance(g, FloatGene):
        return trial.suggest_float(path, g.low, g.high, log=g.log)
    if isinstance(g, IntGene):
        return trial.suggest_int(path, g.low, g.high, log=g.log)
    if isinstance(g, BoolGene):
        vals = g.values if g.values is not None else [False, True]
        return trial.suggest_categorical(path, vals)
    return trial.suggest_categorical(path, g.values)


def front_nadir_scores(points: dict[str, list[np.ndarray]]) -> dict[str, list[float]]:
    """Per repetition: HV against the nadir of the pooled front of all methods (+ 10% of its
    range), over the volume of the box from the pooled ideal point to that reference. Unlike the
    pooled-worst reference, this weighs the whole front rather than mostly its lowest-energy end."""
    out: dict[str, list[float]] = {m: [] for m in points}
    for rep in range(max(len(fs) for fs in points.values())):
        Fs = {m: fs[rep] for m, fs in points.items() if len(fs[rep])}
        if not Fs:  # no method has a successful evaluation in this repetition
            for m in points:
                out[m].append(0.0)
            continue
        pooled = np.vstack(list(Fs.values()))
        front = pooled[pareto.front_indices(pooled)]
        ideal, nadir = front.min(axis=0), front.max(axis=0)
        ref = nadir + pareto.REF_MARGIN * np.where(nadir > ideal, nadir - ideal, 1.0)
        box = float(np.prod(ref - ideal))
        for m in points:
            F = Fs.get(m)
            out[m].append(pareto.hypervolume(F[pareto.front_indices(F)], ref) / box if F is not None else 0.0)
    return out


# ---------------------------------------------------------------------------------------------

def parallel_efficiency(study: Study, n: int) -> float:
    """Evaluations/s with 2 workers over 1, on the same n uncached random genomes."""
    rates = []
    for workers in (1, 2):
        with Engine(study.evaluator, workers, cache=Cache(None)) as engine:
            run_random(study, engine, workers, rep=98)  # warm-up: start the pool, load inputs per worker
            t0 = time.perf_counter()
            run_random(study, engine, n, rep=99)
            rates.append(n / (time.perf_counter() - t0))
    print(f"parallel: {rates[0]:.2f} evals/s with 1 worker, {rates[1]:.2f} with 2 -> speed-up {rates[1] / rates[0]:.2f}x "
          f"(efficiency {rates[1] / rates[0] / 2:.0%})")
    return rates[1] / rates[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", default=DEFAULT_TRACE, help="SWF trace (default: HPC2N of /work/shared/workloads)")
    ap.add_argument("--first-job", type=int, default=10000)
    ap.add_argument("--n-jobs", type=int, default=1000)
    ap.add_argument("--budget", type=int, default=200, help="evaluations per method and repetition")
    ap.add_argument("--pop", type=int, default=20, help="NSGA-II population (and Optuna batch)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--methods", default="nsga2,random,grid,optuna-nsga2,optuna-tpe")
    ap.add_argument("--parallel-n", type=int, default=16, help="genomes for the parallel-efficiency probe (0 = skip)")
    ap.add_argument("--out", help="work folder (default: a temporary one); the shared cache lives there")
    args = ap.parse_args(argv)
    # the study file lives in the work folder and resolves relative paths against itself
    trace = args.trace if args.trace.startswith("builtin:") else str(Path(args.trace).resolve())

    methods = args.methods.split(",")
    try:
        import optuna  # noqa: F401  # type: ignore[import-not-found]
    except ImportError:
        skipped = [m for m in methods if m.startswith("optuna")]
        methods = [m for m in methods if not m.startswith("optuna")]
        if skipped:
            print(f"optuna not installed: skipping {', '.join(skipped)}")

    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="search-quality-"))
    work.mkdir(parents=True, exist_ok=True)
    points: dict[str, list[np.ndarray]] = {m: [] for m in methods}
    secs: dict[str, float] = {m: 0.0 for m in methods}
    study = None
    for rep in range(args.reps):
        sfile = work / f"study-{rep}.yaml"
        sfile.write_text(yaml.safe_dump(gaia_study(trace, args.first_job, args.n_jobs, args.budget, args.pop, rep)))
        study = load_study(sfile)
        cache = Cache(work / ".cache")  # shared: a config any method already ran is not re-simulated
        with Engine(study.evaluator, args.workers, cache=cache) as engine:
            for m in methods:
                t0 = time.perf_counter()
                if m == "nsga2":
                    F = run_nsga2(sfile, work / f"nsga2-{rep}", args.workers)
                elif m == "random":
                    F = run_random(study, engine, args.budget, rep)
                elif m == "grid":
                    F = run_grid(study, engine, args.budget, rep)
                else:
                    F = run_optuna(study, engine, args.budget, rep, m.split("-")[1], args.pop)
                secs[m] += time.perf_counter() - t0
                points[m].append(F)
                print(f"rep {rep} {m}: {len(F)} successful evaluations", file=sys.stderr)

    pooled = np.vstack([F for fs in points.values() for F in fs if len(F)])
    ref = pareto.reference_from(pooled)
    hv = {m: [pareto.hypervolume(F[pareto.front_indices(F)], ref) if len(F) else 0.0 for F in fs]
          for m, fs in points.items()}
    print(f"\nbudget {args.budget} evaluations x {args.reps} reps; reference point (energy_kwh, mean_bsld) = "
          f"{[round(float(v), 3) for v in ref]}")
    # the target is on the median over repetitions (robust to one lucky or unlucky seed)
    base = float(np.median(hv["nsga2"])) if "nsga2" in hv else None
    for m in methods:
        med, mean, sd = float(np.median(hv[m])), float(np.mean(hv[m])), float(np.std(hv[m]))
        ratio = f"  median HV / NSGA-II's = {med / base:.3f}" if base else ""
        reps = ", ".join(f"{v:.4g}" for v in hv[m])
        print(f"{m:>13}: median HV {med:.4g} (reps {reps}; mean {mean:.4g} +- {sd:.2g}){ratio}   ({secs[m]:.0f} s)")
    front_hv = front_nadir_scores(points)
    print("sensitivity (not the target): one reference per repetition at the nadir of that repetition's pooled "
          "front + 10% of its range, HV normalised by the box from its ideal point")
    for m in methods:
        print(f"{m:>13}: median {float(np.median(front_hv[m])):.3f} (reps {', '.join(f'{v:.3f}' for v in front_hv[m])})")
    if args.parallel_n and study is not None:
        parallel_efficiency(study, args.parallel_n)
    (work / "search_quality.json").write_text(json.dumps({"ref": ref.tolist(), "hv": hv, "front_nadir_hv": front_hv}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
