"""Run one search method under a budget and get its history and front (search_quality.py's peers).

Each method (random search, pymoo's mixed-variable GA, Optuna's samplers, paretosched's default)
is charged in a `Ledger`: a (config, seed) costs the first time that method runs it, either one
evaluation (1 / the number of search seeds: deterministic, whatever the machine's load) or its
CPU seconds (`cpu=True`: what a user pays, but it drifts with load). `cut` stops a history where its cumulative cost would pass the budget, `front_configs` takes
the non-dominated configs of what is left, and `recheck_F` re-simulates them on the study's fresh
seeds. Used by benchmarks/search_quality.py, which holds the problems and the command line.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from paretosched.search import pareto
from paretosched.search.evaluate import Engine
from paretosched.search.genes import BoolGene, FloatGene, IntGene
from paretosched.search.optimise import SearchRun
from paretosched.search.runlog import read_evaluations
from paretosched.search.space import SearchSpace, canonical
from paretosched.search.study import STUDY_FILE, Study


# ---------------------------------------------------------------------------------------------
# a method's history: every evaluation in order, with what it cost this method

@dataclass
class Event:
    key: str                 # canonical config
    config: dict[str, Any]
    F: np.ndarray | None     # minimisation-form mean objectives so far (None: failed)
    cost: float              # budget units of the simulations this event added
    cpu: float = 0.0         # their CPU seconds (reported whatever the unit)


class Ledger:
    """Per-method accounting: a (config, seed) costs the first time this method runs it."""

    def __init__(self, study: Study, cpu: bool = False) -> None:
        self.study, self.seen, self.events = study, set(), []  # type: ignore[var-annotated]
        self.cpu_cost = cpu
        self.per_sim = 1.0 / max(1, len(list(study.seeds)))  # type: ignore[arg-type]

    @property
    def spent(self) -> float:
        return sum(e.cost for e in self.events)

    def add(self, config: dict[str, Any], per_seed: list[tuple[int, dict[str, float] | None, float]]) -> Event:
        key, cost, cpu = canonical(config), 0.0, 0.0
        for seed, metrics, wall in per_seed:
            if (key, seed) not in self.seen:
                self.seen.add((key, seed))
                sim_cpu = metrics["cpu_s"] if metrics else wall
                cpu += sim_cpu
                cost += sim_cpu if self.cpu_cost else self.per_sim
        ok = [m for _, m, _ in per_seed if m is not None]
        F = (self.study.signs * np.array([np.mean([m[o] for m in ok]) for o in self.study.objective_names])
             if ok and len(ok) == len(per_seed) else None)
        self.events.append(Event(key, config, F, cost, cpu))
        return self.events[-1]


def evaluate_genomes(led: Ledger, space: SearchSpace, engine: Engine, genomes: list[dict[str, Any]]) -> list[Event]:
    seeds = list(led.study.seeds)  # type: ignore[arg-type]
    configs = [space.config(g) for g in genomes]
    flat = engine.evaluate([(c, s) for c in configs for s in seeds])
    out = []
    for i, c in enumerate(configs):
        rs = flat[i * len(seeds):(i + 1) * len(seeds)]
        out.append(led.add(c, [(r.seed, r.metrics if r.status == "ok" else None, r.wall_s) for r in rs]))
    return out


def run_random(study: Study, engine: Engine, budget: float, rep: int, cpu: bool = False) -> Ledger:
    from pymoo.core.mixed import MixedVariableSampling
    from pymoo.core.problem import Problem

    space, led = SearchSpace(study), Ledger(study, cpu)
    problem, rng = Problem(vars=space.pymoo_vars(), n_obj=2), np.random.default_rng(1000 + rep)
    while led.spent < budget:
        X = MixedVariableSampling()(problem, 10, random_state=rng).get("X")
        evaluate_genomes(led, space, engine, [space.decode(x) for x in X])
    return led


def run_pymoo_ga(study: Study, engine: Engine, budget: float, rep: int, cpu: bool = False) -> Ledger:
    """pymoo's mixed-variable GA with NSGA-II's survival, ask/tell, pymoo's defaults otherwise."""
    from pymoo.core.mixed import MixedVariableGA
    from pymoo.core.problem import Problem
    from pymoo.core.termination import NoTermination
    from pymoo.operators.survival.rank_and_crowding import RankAndCrowding

    space, led = SearchSpace(study), Ledger(study, cpu)
    algo = MixedVariableGA(pop_size=study.algorithm.pop_size, survival=RankAndCrowding(), seed=2000 + rep)
    algo.setup(Problem(vars=space.pymoo_vars(), n_obj=2), termination=NoTermination())
    while led.spent < budget:
        pop = algo.ask()
        evs = evaluate_genomes(led, space, engine, [space.decode(x) for x in pop.get("X")])
        pop.set("F", np.array([e.F if e.F is not None else np.full(2, 1e30) for e in evs]))
        algo.tell(infills=pop)
    return led


def run_optuna(study: Study, engine: Engine, budget: float, rep: int, sampler_name: str, cpu: bool = False) -> Ledger:
    import optuna  # type: ignore[import-not-found]

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = (optuna.samplers.NSGAIISampler(seed=3000 + rep) if sampler_name == "nsga2"
               else optuna.samplers.TPESampler(seed=4000 + rep, multivariate=True))
    ost = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    space, led = SearchSpace(study), Ledger(study, cpu)
    while led.spent < budget:
        trial = ost.ask()
        ev = evaluate_genomes(led, space, engine, [{p: _suggest(trial, p, g) for p, g in space.genes.items()}])[0]
        if ev.F is None:
            ost.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            ost.tell(trial, list(ev.F))
    return led


def _suggest(trial: Any, path: str, g: Any) -> Any:
    if isinstance(g, FloatGene):
        return trial.suggest_float(path, g.low, g.high, log=g.log)
    if isinstance(g, IntGene):
        return trial.suggest_int(path, g.low, g.high, log=g.log)
    if isinstance(g, BoolGene):  # the genome holds a bool gene's value ('none'/'easy'), as space.decode
        return trial.suggest_categorical(path, g.values if g.values is not None else [False, True])
    # optuna's categorical takes None but not mixed lists well in its distance: index, then decode
    return g.values[trial.suggest_categorical(path, list(range(len(g.values))))]


class _BoundRun(SearchRun):
    """paretosched's own search loop, stopped (between generations, as every budget) once the
    simulations it logged cost `cost_budget` units (set after construction)."""

    cost_budget = 0.0
    cpu_cost = False

    def _stop_reason(self) -> str | None:
        if (reason := super()._stop_reason()) is not None:
            return reason
        return "budget" if log_ledger(self.study, self.run_dir, self.cpu_cost).spent >= self.cost_budget else None


def log_ledger(study: Study, run_dir: Path, cpu: bool = False) -> Ledger:
    """A run's search rows as a method history (a resampled genome's later rows carry its new mean)."""
    led = Ledger(study, cpu)
    for row in read_evaluations(run_dir):
        # baselines and prefix-screening runs cost their simulations too
        if row.kind in ("search", "baseline", "screen"):
            ev = led.add(row.config, [(s.seed, s.metrics if s.status == "ok" else None, s.wall_s) for s in row.per_seed])
            if row.kind != "search":
                ev.F = None  # not one of the search's trade-offs (a screen row ran a prefix of the window)
    return led


def run_paretosched(study: Study, engine: Engine, budget: float, out: Path, cpu: bool = False) -> Ledger:
    from paretosched.yamlio import dump_yaml

    # the re-check is the benchmark's, the same for every method; the search is the default
    run_study = study.model_copy(update={"recheck": []})
    out.mkdir(parents=True, exist_ok=True)
    (out / STUDY_FILE).write_text(dump_yaml(run_study.model_dump(mode="json"), sort_keys=False))
    runner = _BoundRun(run_study, out, engine, True)
    runner.cost_budget, runner.cpu_cost = budget, cpu
    with contextlib.redirect_stderr(io.StringIO()):
        runner.execute()
    return log_ledger(study, out, cpu)


# ---------------------------------------------------------------------------------------------
# a method's front, cut at the budget and re-checked on fresh seeds

def cut(led: Ledger, budget: float) -> tuple[list[Event], float]:
    """The history up to the last event whose cumulative cost stays within the budget, and the
    CPU seconds of that history."""
    spent, cpu, out = 0.0, 0.0, []
    for e in led.events:
        if spent + e.cost > budget + 1e-9:  # evaluation units are sums of 1/n: no float miss at the edge
            break
        spent += e.cost
        cpu += e.cpu
        out.append(e)
    return out, cpu


def front_configs(events: list[Event]) -> list[dict[str, Any]]:
    latest: dict[str, Event] = {}
    for e in events:
        latest[e.key] = e
    ok = [e for e in latest.values() if e.F is not None]
    if not ok:
        return []
    F = np.array([e.F for e in ok])
    return [ok[i].config for i in pareto.front_indices(F)]


def recheck_F(study: Study, engine: Engine, configs: list[dict[str, Any]]) -> np.ndarray:
    """Mean minimisation-form objectives of each config on the study's fresh seeds (failures dropped)."""
    seeds = list(study.recheck or [])  # type: ignore[arg-type]
    flat = engine.evaluate([(c, s) for c in configs for s in seeds])
    out = []
    for i in range(len(configs)):
        rs = flat[i * len(seeds):(i + 1) * len(seeds)]
        if all(r.status == "ok" for r in rs):
            out.append(study.signs * np.array([np.mean([r.metrics[o] for r in rs]) for o in study.objective_names]))
    return np.array(out).reshape(-1, len(study.signs))
