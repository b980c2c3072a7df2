"""The ledger: every evaluation of a run, its identity, and exactly-once logging across resumes.

An evaluation is identified by what it computes (kind + genome or config + seeds), not by
when it happened, and gets the next `eval_id` the first time it is seen. Resume works
because ids are assigned deterministically: the checkpoint records `next_eval_id`; rows
the log holds beyond it were written by the interrupted session for the generation being
redone, so they are *replayed* (same id, same identity, already logged, not simulated)
instead of being simulated and logged again.

Resampling (docs/search.md) gives a genome more seeds with a new `search` row whose `seeds`
extend the earlier row's and whose `supersedes` names it; the seeds already run are copied
from that row, not simulated again. `current(eid)` follows these links to a genome's latest
row, whose means are the genome's values; `runlog.current_rows` does the same for readers of a log.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from paretosched.errors import UserError
from paretosched.search.constraints import Limits
from paretosched.search.evaluate import Engine
from paretosched.search.runlog import LOG, Evaluation, SeedResult, append_rows, read_evaluations
from paretosched.search.space import canonical
from paretosched.sim.engine.metrics import mean_metrics


@dataclass
class Spec:
    """What to evaluate: a genome (search), a named config (baseline) or a re-check."""

    kind: str  # search | baseline | recheck | screen (a candidate on a prefix of the window, fidelity.py)
    config: dict[str, Any]
    seeds: list[int]
    genome: dict[str, Any] = field(default_factory=dict)
    x: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    recheck_of: int | None = None
    supersedes: int | None = None  # search rows of resampling: the genome's previous row

    def key(self) -> str:
        ident: dict[str, Any] = {"kind": self.kind, "seeds": self.seeds}
        if self.kind in ("search", "screen"):
            ident["genome"] = self.genome
        elif self.kind == "baseline":
            ident["name"], ident["config"] = self.name, self.config
        else:
            ident["recheck_of"] = self.recheck_of
        return canonical(ident)


def row_key(row: Evaluation) -> str:
    return Spec(kind=row.kind, config=row.config, seeds=list(row.seeds), genome=row.genome,
                name=row.name, recheck_of=row.recheck_of).key()


class Ledger:
    """Rows by eval id, identities, and the replay of rows logged by an interrupted session."""

    def __init__(self, run_dir: Path, objectives: list[str], next_eval_id: int = 0, limits: Limits | None = None) -> None:
        self.run_dir = run_dir
        self.objectives = objectives
        self.limits = limits  # the study's constraints: their values go into each new row
        self.rows: dict[int, Evaluation] = {}
        self.pending: dict[int, Evaluation] = {}
        self.by_key: dict[str, int] = {}
        for row in read_evaluations(run_dir, objectives):
            if row.eval_id < next_eval_id:
                self.rows[row.eval_id] = row
                self.by_key[row_key(row)] = row.eval_id
            else:
                self.pending[row.eval_id] = row
        missing = set(range(next_eval_id)) - set(self.rows)
        if missing:
            raise UserError(f"{run_dir / LOG}: lacks evaluations {sorted(missing)[:5]} that checkpoint.json counts "
                            "(was the log edited or replaced?); restore it, or delete checkpoint.json to "
                            "resume from what the log holds")
        self.next_id = next_eval_id
        self.successor: dict[int, int] = {}
        self._pending_keys: set[str] | None = None
        self._unlogged: list[Evaluation] = []  # rows `record` made, for `flush` to log
        for eid in sorted(self.rows):
            self._link(self.rows[eid])

    def _link(self, row: Evaluation) -> None:
        if row.supersedes is not None:
            self.successor[row.supersedes] = row.eval_id

    def current(self, eid: int) -> int:
        """The latest row of the genome `eid` belongs to (itself unless it was resampled)."""
        while eid in self.successor:
            eid = self.successor[eid]
        return eid

    def submit(self, specs: list[Spec], engine: Engine, generation: int,
               on_done: Callable[[float], None] | None = None) -> list[int]:
        """Eval ids of `specs`, evaluating and logging only what was never evaluated;
        `on_done(k)` hears of progress in evaluations (fractions while seeds complete)."""
        ids: list[int] = []
        fresh: list[tuple[int, Spec]] = []
        for spec in specs:
            key = spec.key()
            if key in self.by_key:  # seen before (earlier generation or earlier in this batch)
                ids.append(self.by_key[key])
                continue
            eid = self.next_id
            self.next_id += 1
            self.by_key[key] = eid
            ids.append(eid)
            if eid in self.pending:
                row = self.pending.pop(eid)
                if row_key(row) != key:
                    raise UserError(f"{self.run_dir / LOG}: logged evaluation {eid} is not the genome this session "
                                    "proposes (another paretosched or pymoo version?); finish the run with the "
                                    "versions that started it, or start a new run (another --out)")
                self.rows[eid] = row
                self._link(row)
            else:
                fresh.append((eid, spec))

        known = {eid: self._known_seeds(spec) for eid, spec in fresh}
        tasks = [(spec.config, seed) for eid, spec in fresh for seed in spec.seeds if seed not in known[eid]]
        n_seeds = max(1, len(fresh[0][1].seeds)) if fresh else 1
        results = iter(engine.evaluate(tasks, None if on_done is None else (lambda n: on_done(n / n_seeds))))
        new_rows: list[Evaluation] = []
        for eid, spec in fresh:
            per_seed = [known[eid][s] if s in known[eid] else next(results) for s in spec.seeds]
            row = make_row(eid, spec, generation, per_seed, self.objectives)
            self.rows[eid] = row
            self._link(row)
            new_rows.append(row)
        # after the whole batch: a re-check's `max_vs` reads its baseline's re-check of the same batch
        new_rows = [self._judged(r) for r in new_rows]
        append_rows(self.run_dir, new_rows)  # one generation at a time, in eval id order
        return ids

    def record(self, spec: Spec, generation: int, results: dict[int, SeedResult]) -> int:
        """Eval id of one `spec` told in index order (steady.py): a genome seen before keeps its
        id, a row an interrupted session logged under the next id is replayed, otherwise a row is
        made from `results` (seed -> result), logged by the next `flush`."""
        key = spec.key()
        if key in self.by_key:
            return self.by_key[key]
        eid = self.next_id
        if eid in self.pending:
            if row_key(self.pending[eid]) != key:
                raise UserError(f"{self.run_dir / LOG}: logged evaluation {eid} is not the genome this session "
                                "proposes (another paretosched or pymoo version?); finish the run with the "
                                "versions that started it, or start a new run (another --out)")
            row = self.pending.pop(eid)
        else:
            row = make_row(eid, spec, generation, [results[s] for s in spec.seeds], self.objectives)
            self.rows[eid] = row  # the baselines are told first, so a `max_vs` finds its baseline's row
            row = self._judged(row)
            self._unlogged.append(row)
        self.next_id += 1
        self.by_key[key] = eid
        self.rows[eid] = row
        self._link(row)
        return eid

    def _judged(self, row: Evaluation) -> Evaluation:
        """The row with its constraint values (constraints.py), kept in `rows`."""
        if self.limits:
            row = replace(row, constraints=self.limits.values(row, self.rows))
            self.rows[row.eval_id] = row
        return row

    def flush(self) -> None:
        """Log the rows `record` made, in one write and fsync (an fsync per row costs the search
        milliseconds per result); rows a crash loses before it are simulated again, or served by
        the cache, on resume."""
        append_rows(self.run_dir, self._unlogged)
        self._unlogged = []

    def replayable(self, spec: Spec) -> bool:
        """True when `spec` needs no simulation: told before, or logged by an interrupted session."""
        if self._pending_keys is None:  # pending only shrinks, into by_key
            self._pending_keys = {row_key(r) for r in self.pending.values()}
        key = spec.key()
        return key in self.by_key or key in self._pending_keys

    def _known_seeds(self, spec: Spec) -> dict[int, SeedResult]:
        """Per-seed results a resampled genome already has (from the row it supersedes)."""
        if spec.supersedes is None:
            return {}
        out = {}
        for d in self.rows[spec.supersedes].per_seed:
            # JSON null for a non-finite metric: leave the key out, as make_row does for the mean
            metrics = None if d.metrics is None else {k: v for k, v in d.metrics.items() if v is not None}
            out[d.seed] = SeedResult(d.seed, d.status, metrics, d.error, 0.0, True)
        return out

    def adopt_pending(self) -> None:
        """Keep rows an interrupted session logged beyond where this one stopped (wall-time
        budgets may stop a resumed run earlier), so later ids never collide with them."""
        for eid in sorted(self.pending):
            row = self.pending.pop(eid)
            self.rows[eid] = row
            self._link(row)
            self.by_key.setdefault(row_key(row), eid)
            self.next_id = max(self.next_id, eid + 1)

    def ok(self, eid: int) -> bool:
        return self.rows[eid].ok

    def objective_vector(self, eid: int, signs: np.ndarray) -> np.ndarray:
        """Minimisation-form objectives of a successful row."""
        return signs * np.array(self.rows[eid].objective_values(self.objectives), dtype=float)


def make_row(eid: int, spec: Spec, generation: int, per_seed: list[SeedResult],
             objectives: list[str]) -> Evaluation:
    """One log row (docs/rundir.md): per-seed results, means, objectives, status."""
    error = next((r.error for r in per_seed if r.status != "ok"), None)
    metrics: dict[str, float] | None = None
    objs: dict[str, float] | None = None
    if error is None:
        common = [k for k in per_seed[0].metrics or {} if all(k in (r.metrics or {}) for r in per_seed)]
        # the twin's rule (sum in seed order / n), so `simulate` on these seeds reports the same means
        metrics = mean_metrics([{k: (r.metrics or {})[k] for k in common} for r in per_seed]) if common else {}
        absent = [o for o in objectives if o not in metrics]
        if absent:
            error = f"KeyError: the evaluation did not produce objective metric(s) {', '.join(absent)}"
            metrics = None
        else:
            if not all(np.isfinite(metrics[o]) for o in objectives):
                error = "ValueError: non-finite objective value"
                metrics = None
            else:
                objs = {o: metrics[o] for o in objectives}
    if metrics is not None and not all(np.isfinite(v) for v in metrics.values()):
        metrics = {k: v for k, v in metrics.items() if np.isfinite(v)}  # JSON has no inf/nan
    return Evaluation(eval_id=eid, kind=spec.kind, generation=generation, name=spec.name,
                      recheck_of=spec.recheck_of, supersedes=spec.supersedes, genome=spec.genome, x=spec.x,
                      config=spec.config, seeds=list(spec.seeds), per_seed=[_json_safe(r) for r in per_seed],
                      metrics=metrics, objectives=objs, status="ok" if error is None else "failed", error=error,
                      wall_s=float(sum(r.wall_s for r in per_seed)))


def _json_safe(r: SeedResult) -> SeedResult:
    """JSON has no inf/nan: a non-finite per-seed metric is logged (and kept) as null."""
    if r.metrics is None:
        return r
    return replace(r, metrics={k: (v if v is not None and np.isfinite(v) else None) for k, v in r.metrics.items()})
