"""`paretosched optimise`: run (or resume) a study and leave a run directory (docs/rundir.md).

The loop is pymoo ask/tell so that we own evaluation (parallel, cached), logging,
checkpointing and resume. One generation is: ask -> evaluate the whole batch -> append its
rows in genome order -> tell -> write front/population/summary -> checkpoint. Nothing in
it depends on the order in which workers finish, so 1 or N workers, joblib or Dask, and
interrupted-then-resumed runs give the same log and the same front.
"""

from __future__ import annotations

import io
import shlex
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from pymoo.core.population import Population

from paretosched.errors import UserError
from paretosched.yamlio import dump_yaml
from paretosched.search.blocks import RecheckBlock
from paretosched.search.cache import Cache, twin_version
from paretosched.search.evaluate import Engine, require_backend
from paretosched.search.checkpoint import Checkpoint, check_consistent, load_checkpoint, restore_into, save_checkpoint
from paretosched.search.files import atomic_write_text, write_json
from paretosched.search.guards import announce, check_cache_dir, check_cost
from paretosched.search.ledger import Ledger, Spec
from paretosched.search.problem import build_algorithm
from paretosched.search.progress import Progress
from paretosched.search.rundir import (RunLock, cache_dir, check_same_twin, make_run_dir, open_run,
                                       record_fingerprint)
from paretosched.search.runlog import POPULATION, Front, Generation, repair_log, write_front
from paretosched.search.space import SearchSpace, starting_genomes
from paretosched.search.resample import Resampler
from paretosched.search.fidelity import make_screener
from paretosched.search.focus import Focus, baseline_specs
from paretosched.search.screening import room, widened
from paretosched.search.steady import SteadyLoop
from paretosched.search.constraints import Limits, front_pool, violation
from paretosched.search.study import STUDY_FILE, Study, algorithm_seed, extra_seeds, reference_baseline
from paretosched.search.summary import Summary, mark_interrupted, summary_of, versions, write_summary
from paretosched.search.verdict import overfit_line, recheck_block
from paretosched.search import pareto


def optimise(study_path: str, out: str | None = None, resume: bool = False, workers: int | None = None,
             dask: str | None = None, quiet: bool = False, local: bool = False, silent: bool = False) -> Path:
    """Run the study at `study_path` (or resume the run directory given there); returns the run dir.

    `local` evaluates on this machine even when the study (or the run's saved copy) says Dask. `quiet`:
    log lines instead of a progress bar; `silent`: nothing on stderr (the Python API's quiet=True).
    """
    if local and dask is not None:
        raise UserError("--local and --dask: choose one")
    study, run_dir, note = open_run(Path(study_path), out, resume)
    par = study.parallel
    if workers is not None:
        if workers < 1:
            raise UserError(f"--workers: must be >= 1 (got {workers})")
        par = par.model_copy(update={"workers": workers})
    if dask is not None:
        par = par.model_copy(update={"backend": "dask", "address": dask})
    if local:
        par = par.model_copy(update={"backend": "local", "address": None})
    study = study.model_copy(update={"parallel": par})
    require_backend(par.backend)  # before the run directory exists: no stray one left behind
    notes = [note] if note else []
    cost = check_cost(study, study_path)
    if not silent:
        announce(f"{study.name}: {cost}")
    if study.evaluator is None:  # the twin: parse its inputs once, here, so bad ones fail fast
        from paretosched.search.twin import check_inputs

        try:
            window = check_inputs(study.base)  # type: ignore[arg-type]
        except UserError as exc:
            raise UserError(f"{study_path}: base: {exc}") from None
        notes += [window] if window else []

    check_cache_dir(cache_dir(study, run_dir) if study.cache else None, study_path)
    cache = Cache(cache_dir(study, run_dir) if study.cache else None)
    # connect first: a Dask scheduler out of reach must not leave a run dir holding only .lock
    with Engine(study.evaluator, par.workers, par.backend, par.address, cache) as engine:
        make_run_dir(run_dir)
        try:
            with RunLock(run_dir):
                open_run(Path(study_path), out, resume)  # again, now that no other session can change the directory
                _session(study, run_dir, engine, quiet, notes, io.StringIO() if silent else None)
        except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM: the CLI says how to continue (cli.py)
            exc.resume_command = f"paretosched optimise {shlex.quote(str(run_dir))} --resume"  # type: ignore[attr-defined]
            raise
    return run_dir


def _session(study: Study, run_dir: Path, engine: Engine, quiet: bool, notes: list[str],
             stream: TextIO | None = None) -> None:
    """One session in a locked run directory: record the study, search, say if it stopped early."""
    try:
        record_fingerprint(run_dir, study)  # before the study's copy: a resume compares with what the run began with
        atomic_write_text(run_dir / STUDY_FILE, dump_yaml(study.model_dump(mode="json"), sort_keys=False), root=run_dir)
        SearchRun(study, run_dir, engine, quiet, notes, stream).execute()
    except BaseException:  # Ctrl-C, SIGTERM, a lost Dask cluster, a bug...: the summary must not say running
        mark_interrupted(run_dir, Summary(study=study.name, status="running", versions=versions()))
        raise


class SearchRun:
    """One session of a run: restores the checkpoint if any, then searches and re-checks."""

    def __init__(self, study: Study, run_dir: Path, engine: Engine, quiet: bool, notes: list[str] | None = None,
                 stream: TextIO | None = None) -> None:
        self.study, self.run_dir, self.engine = study, run_dir, engine
        self.space = SearchSpace(study)
        self.signs = study.signs
        self.names = study.objective_names
        self.seeds: list[int] = list(study.seeds)  # type: ignore[arg-type]
        self.t0 = time.monotonic()
        repair_log(run_dir)
        self.start_notes: list[str] = []
        state = load_checkpoint(run_dir, self.start_notes)
        restored = state is not None
        if state is None:
            # no checkpoint (deleted to recover, or killed before the first): the log may still
            # hold another twin's rows, which the summary written with them names
            check_same_twin(run_dir, None, twin_version())
            state = self._new_state()
        else:
            if not state.done:  # a finished run is only read, never extended
                check_same_twin(run_dir, state.twin, twin_version())
            restore_into(state, self._algorithm([]), run_dir)
        self.state: Checkpoint = state
        self.algo = state.algorithm
        self.ledger = Ledger(run_dir, self.names, state.next_eval_id, Limits(study.constraints))
        self.reference = reference_baseline(study)
        if restored:
            check_consistent(state, self.ledger.rows, list(study.baselines), len(self.names), run_dir,
                             self._population_ids)
        self.resampler = Resampler(self.ledger, self.signs, self.seeds, extra_seeds(study), study.resampling)
        off = study.algorithm.n_offsprings or study.algorithm.pop_size
        self.screener = None if study.screening is None else \
            make_screener(study.screening, self.space, self.seeds, self.signs, off, algorithm_seed(study))
        b = study.budget
        total = b.evaluations
        if total is None and b.generations is not None:
            total = study.algorithm.pop_size + (b.generations - 1) * off
        # a finished run only prints a message; a resumed one starts the bar where it stopped
        self.progress = Progress(study.name, total, quiet or state.done, stream, initial=state.n_told)
        self._hv_said = False
        self.focus = Focus(study.focus, self.ledger, self.signs, state, self.progress.message)
        for note in [*(notes or []), *self.start_notes]:
            self.progress.message(note)

    def _new_state(self) -> Checkpoint:
        ref = None
        if self.study.reference_point is not None:
            ref = list(self.signs * np.array([self.study.reference_point[o] for o in self.names]))
        return Checkpoint(twin=twin_version(), algorithm=self._algorithm(self.start_notes), ref=ref,
                          ref_source="study" if ref is not None else None)

    def _algorithm(self, notes: list[str]) -> Any:
        """The study's algorithm before generation 0 (a resume then sets its saved state)."""
        return build_algorithm(self.space, len(self.names), widened(self.study.algorithm, self.study.screening),
                               algorithm_seed(self.study), starting_genomes(self.space, self.study, notes),
                               focus=self.study.focus is not None)

    # ----------------------------------------------------------------------------------------
    def execute(self) -> None:
        try:
            if self.state.done:
                self.progress.message("run already finished; nothing to resume")
                self._require_a_success()
                return
            self.progress.message(f"run directory: {self.run_dir}")
            if self.ledger.pending or self.state.generation >= 0:
                self.progress.message(f"resuming after generation {self.state.generation}")
            # steady: baselines and search in one pool, without generation barriers (steady.py)
            reason = SteadyLoop(self).search() if self.study.algorithm.schedule == "steady" else None
            if not self.state.baselines_done:
                self._baselines()
            while reason is None and (reason := self._stop_reason()) is None:
                if not self._generation():
                    reason = "no_new_offspring"
            self.state.stop_reason = reason
            self._finish()
        finally:
            self.progress.close()

    def _elapsed(self) -> float:
        return self.state.elapsed_s + (time.monotonic() - self.t0)

    def _stop_reason(self) -> str | None:
        b, s = self.study.budget, self.state
        if b.generations is not None and s.generation + 1 >= b.generations:
            return "generations"
        if b.evaluations is not None and self._spent() >= b.evaluations:
            return "evaluations"
        # wall time is checked between generations, and never before generation 0 has run
        if b.wall_time_s is not None and s.generation >= 0 and self._elapsed() >= b.wall_time_s:
            return "wall_time_s"
        return None

    def _spent(self) -> float:
        """Evaluations spent: genomes told, plus resampling's seeds (one evaluation = `seeds` seeds),
        plus prefix screening's runs (each its share of an evaluation)."""
        share = self.study.screening.budget_share if self.study.screening else 0.0
        return self.state.n_told + self.state.n_resampled / len(self.seeds) + self.state.n_screened * share

    def _checkpoint(self) -> None:
        self.state.next_eval_id = self.ledger.next_id
        self.state.algorithm = self.algo
        saved = self.state.elapsed_s
        self.state.elapsed_s = self._elapsed()
        save_checkpoint(self.run_dir, self.state)
        self.state.elapsed_s = saved

    # ----------------------------------------------------------------------------------------
    def _baselines(self) -> None:
        specs = baseline_specs(self.study, self.seeds, self.resampler.order)
        if specs:
            self.progress.stage(f"{len(specs)} baselines")
        ids = self.ledger.submit(specs, self.engine, -1)
        self.state.baseline_ids = dict(zip(self.study.baselines, ids))
        self.state.baselines_done = True
        self._checkpoint()

    def _generation(self) -> bool:
        """One generation; False when the algorithm has no new genome to offer."""
        pop = self.algo.ask()
        if pop is None or len(pop) == 0:
            return False
        gen = self.state.generation + 1
        if self.screener is not None and gen > 0:
            pop = self._screen(pop, gen)
        b = self.study.budget
        left = None if b.evaluations is None else max(1, int(b.evaluations - self._spent()))
        if left is not None and len(pop) > left:
            pop = pop[:left]  # spend the budget exactly (resampling may then take it over, see docs/search.md)
        specs = []
        for x in pop.get("X"):
            genome = self.space.decode(x)
            specs.append(Spec("search", self.space.config(genome), self.seeds, genome=genome, x=self.space.raw(x)))
        if gen == 0:
            self.progress.stage("generation 0")
        self.ledger.submit(specs, self.engine, gen, on_done=self.progress.advance)
        # resampled before survival, so NSGA-II ranks parents and offspring on their new means
        if self.resampler.active:
            self.progress.stage(f"generation {gen}: extra seeds near the front")
        # never cut by the budget (checked between generations): a near-front genome left on its few
        # first seeds could be a lucky one reported on them
        added = self.resampler.run(self.engine, gen)
        self.state.n_resampled = self.state.n_resampled + added
        ids = [self.ledger.current(self.ledger.by_key[s.key()]) for s in specs]
        if self.resampler.active and gen > 0:
            self.focus.refresh(self.algo.pop, self._population_ids())
        self.focus.tell(self.algo, pop, ids)
        self.state.n_told += len(pop)
        self.state.generation = gen
        if self.state.ref is None:
            self._fix_reference(ids)
        self.state.population = self._population_ids()
        record = self._record(gen, ids, added)
        self.state.generations.append(record)
        self._write_outputs(final=False)
        self._checkpoint()
        self.progress.update(self.state.n_told, record)
        return True

    def _screen(self, pop: Population, gen: int) -> Population:
        """The offspring pre-screening keeps (screening.py, fidelity.py), as many as the budget holds."""
        scr, b = self.study.screening, self.study.budget
        assert self.screener is not None and scr is not None
        keep = room(scr, self.study.algorithm.n_offsprings or self.study.algorithm.pop_size,
                    None if b.evaluations is None else b.evaluations - self._spent())
        if keep < 1:
            return pop  # the last evaluations, unscreened (the generation's cut takes them)
        if (stage := self.screener.stage(gen, scr.factor * keep)) is not None:
            self.progress.stage(stage)
        # the first factor x keep candidates: i.i.d. offspring, so a fair draw
        pop, screened, note = self.screener.screen(pop[:scr.factor * keep], keep, self.ledger, self._search_ids(),
                                                   self.engine, gen)
        self.state.n_screened += screened
        if note:
            self.progress.message(note)
        return pop

    def _fix_reference(self, gen0_ids: list[int]) -> None:
        """Reference point fixed for the rest of the run: the reference baseline's values (the
        hypervolume then measures what beats it), else from generation 0 and the baselines."""
        bid = self.state.baseline_ids.get(self.reference) if self.reference else None
        if bid is not None and self.ledger.ok(bid):
            self.state.ref = [float(v) for v in self.ledger.objective_vector(bid, self.signs)]
            self.state.ref_source = f"baseline {self.reference}"
            return
        ids = [i for i in [*gen0_ids, *self.state.baseline_ids.values()] if self.ledger.ok(i)]
        if ids:
            F = np.array([self.ledger.objective_vector(i, self.signs) for i in ids])
            self.state.ref = [float(v) for v in pareto.reference_from(F)]
            self.state.ref_source = f"generation {self.state.generation}"

    def _population_ids(self) -> list[int]:
        out = []
        for x in self.algo.pop.get("X"):
            genome = self.space.decode(x)
            out.append(self.ledger.current(self.ledger.by_key[Spec("search", {}, self.seeds, genome=genome).key()]))
        return out

    # ----------------------------------------------------------------------------------------
    def _search_ids(self) -> list[int]:
        """Current search rows: one per genome (its latest, when resampled)."""
        return sorted(i for i, r in self.ledger.rows.items() if r.kind == "search" and i not in self.ledger.successor)

    def _front_ids(self) -> list[int]:
        ok = [i for i in self._search_ids() if self.ledger.ok(i)]
        # pymoo's constraint domination: the feasible genomes, or the least infeasible when none is
        ok = [ok[k] for k in front_pool([violation(self.ledger.rows[i].constraints) for i in ok])]
        if not ok:
            return []
        F = np.array([self.ledger.objective_vector(i, self.signs) for i in ok])
        return [ok[k] for k in pareto.front(F)]

    def _hv(self, ids: list[int]) -> float | None:
        if self.state.ref is None or not ids:
            return None if self.state.ref is None else 0.0
        F = np.array([self.ledger.objective_vector(i, self.signs) for i in ids])
        hv = pareto.hypervolume(F, np.array(self.state.ref))
        if not np.isfinite(hv) and not self._hv_said:  # e.g. reference_point 1e308: beyond a float
            self._hv_said = True
            self.progress.message(f"hypervolume for the reference point {self.state.ref}: beyond a float, recorded as null")
        return hv if np.isfinite(hv) else None

    def _record(self, gen: int, ids: list[int], resampled: int) -> Generation:
        front = self._front_ids()
        search = self._search_ids()
        best = {}
        # over the front: the same values as over every success (each objective's best is on the
        # front), but only the feasible ones when the study has constraints
        for k, o in enumerate(self.names):
            vals = [self.ledger.rows[i].objective_values([o])[0] for i in front]
            if vals:
                best[o] = float(min(vals) if self.signs[k] > 0 else max(vals))
        point = None
        if front:  # one front point's own values, for the progress line (bests above come from different points)
            F = np.array([self.ledger.objective_vector(i, self.signs) for i in front])
            eid = front[pareto.balanced(F)]
            point = {"eval_id": eid, **{o: float(v) for o, v in zip(self.names, self.ledger.rows[eid].objective_values(self.names))},
                     **({"feasible": self.ledger.rows[eid].feasible} if self.study.constraints else {})}
        known_before = self.state.generations[-1].n_rows if self.state.generations else 0
        return Generation(generation=gen, evaluations=self.state.n_told,
                          new_evaluations=len(set(ids) - set(range(known_before))),
                          failures=sum(1 for i in set(ids) if not self.ledger.ok(i) and i >= known_before),
                          hv=self._hv(front), front_size=len(front), best=best, resampled=resampled, point=point,
                          failures_total=sum(1 for i in search if not self.ledger.ok(i)), n_rows=self.ledger.next_id)

    # ----------------------------------------------------------------------------------------
    def _finish(self) -> None:
        self.ledger.adopt_pending()
        front = self._front_ids()
        recheck_ids = self._recheck(front)
        self.state.recheck_ids = {str(k): v for k, v in recheck_ids.items()}
        self.state.done = True
        self._write_outputs(final=True, recheck=recheck_ids)
        self._checkpoint()
        self.progress.close()  # before the last line, so the bar is not redrawn under it
        msg = f"done ({self.state.stop_reason}): {len(front)} front points"
        self.progress.message(msg + f" -> {self.run_dir}")
        overfit = overfit_line(self._recheck_summary(front, recheck_ids))
        if overfit:
            self.progress.message(f"overfit (median |re-check - search| / search over the front): {overfit}")
        self._require_a_success()

    def _recheck(self, front: list[int]) -> dict[int, int]:
        """Front points and baselines re-run on the fresh seeds, in one batch: {eval id: re-check id}."""
        seeds = list(self.study.recheck or [])  # type: ignore[arg-type]
        rows = self.ledger.rows
        if not seeds or not front:
            return {}
        todo = [*front, *(b for b in self.state.baseline_ids.values() if self.ledger.ok(b))]
        specs = [Spec("recheck", rows[i].config, seeds, genome=rows[i].genome, x=rows[i].x,
                      name=rows[i].name, recheck_of=i) for i in todo]
        self.progress.stage(f"re-check on {len(seeds)} fresh seeds")
        return dict(zip(todo, self.ledger.submit(specs, self.engine, self.state.generation)))

    def _recheck_summary(self, front: list[int], recheck_ids: dict[int, int]) -> RecheckBlock:
        # until the re-check has run there is no fresh-seed verdict to claim: the block then falls
        # back to the search values and says so (verdicts_on), as with `recheck: 0`
        seeds = list(self.study.recheck or []) if recheck_ids else []  # type: ignore[arg-type]
        return recheck_block(self.ledger.rows, self.names, self.signs, seeds, front, self.state.baseline_ids,
                             recheck_ids, limited=bool(self.study.constraints), reference=self.reference)

    def _require_a_success(self) -> None:
        """A run whose every evaluation failed is an error (exit 2), however often it is resumed."""
        search = self._search_ids()
        if search and not any(self.ledger.ok(i) for i in search):
            first = self.ledger.rows[search[0]]
            raise UserError(f"{self.run_dir}: every evaluation failed; the first (eval {first.eval_id}): "
                            f"{first.error}")

    def _write_outputs(self, final: bool, recheck: dict[int, int] | None = None) -> None:
        front = self._front_ids()
        block = self._recheck_summary(front, recheck or {})
        checked = {p.eval_id: p for p in block.front or [] if p.eval_id is not None}
        write_front(self.run_dir, Front([self.ledger.rows[i] for i in front], checked),
                    self.space.paths, self.names)
        pop_ids = self.state.population
        pop_ranks: list[int | None] = [None] * len(pop_ids)
        ok_pos = [k for k, i in enumerate(pop_ids) if self.ledger.ok(i)]
        if ok_pos:
            F = np.array([self.ledger.objective_vector(pop_ids[k], self.signs) for k in ok_pos])
            for k, r in zip(ok_pos, pareto.ranks(F)):
                pop_ranks[k] = int(r)
        write_json(self.run_dir / POPULATION, {"generation": self.state.generation, "final": final,
                                               "eval_ids": pop_ids, "rank": pop_ranks}, root=self.run_dir)
        write_summary(self.run_dir, summary_of(self, front, final, block))
