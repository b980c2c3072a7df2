"""checkpoint.json (docs/rundir.md): what a session needs to continue a run exactly where the last
one stopped, as plain JSON.

This module is the only code that reads or writes it. The plain fields are validated by a strict
pydantic model made from the `Checkpoint` record's own types; the optimiser's state goes through
`algostate` (data only, set on an algorithm the study builds). A damaged file is a one-line error
saying how to recover: delete it, and the run restarts from its evaluation log (every logged
evaluation is replayed, none simulated again).

Runs from before this format kept a pickle, `checkpoint.pkl`. Unpickling runs whatever code the
file names, so it is never opened: a resume says once that it is ignored and rebuilds the run
from the log, as after deleting a checkpoint.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from paretosched.errors import UserError
from paretosched.search.algostate import Decoder, Encoder, StateError, capture, decode_state, restore
from paretosched.search.files import dumps, loads, atomic_write_text
from paretosched.search.ledger import Spec
from paretosched.search.runlog import Generation

CHECKPOINT = "checkpoint.json"
LEGACY = "checkpoint.pkl"  # pickled by paretosched before checkpoint.json: never opened


@dataclass
class Checkpoint:
    """The session state a resume restores (the plain fields, then `algorithm` and `steady`)."""

    FORMAT: ClassVar[int] = 3  # 1 and 2 were pickles (checkpoint.pkl)

    algorithm: Any  # the pymoo algorithm (live), or its saved state (algostate.decode_state) once loaded
    twin: str | None = None  # the twin version that started the run
    generation: int = -1
    n_told: int = 0
    next_eval_id: int = 0
    baselines_done: bool = False
    ref: list[float] | None = None  # reference point, minimisation form
    ref_source: str | None = None
    generations: list[Generation] = field(default_factory=list)
    elapsed_s: float = 0.0
    population: list[int] = field(default_factory=list)
    baseline_ids: dict[str, int] = field(default_factory=dict)
    stop_reason: str | None = None
    done: bool = False
    n_resampled: int = 0
    n_screened: int = 0  # screen rows (screening by prefix) logged so far
    recheck_ids: dict[str, int] = field(default_factory=dict)
    # schedule steady (steady.py): lag, the genomes bred but not yet told (pymoo individuals), whether
    # the search ended, the resampling round out ({gen, at, specs}) and speculation's counts
    steady: dict[str, Any] | None = None


_STRICT = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


def _model(record: type, replace: dict[str, Any] | None = None) -> type[BaseModel]:
    """A strict pydantic model of a dataclass's fields (its own types and defaults), to validate
    the JSON form of the record; `replace` gives some fields another type."""
    hints = typing.get_type_hints(record)
    spec: dict[str, Any] = {}
    for f in fields(record):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else ...)
        spec[f.name] = ((replace or {}).get(f.name, hints[f.name]), default)
    return create_model(f"{record.__name__}File", __config__=_STRICT, **spec)


_Generation = _model(Generation)
_Spec = _model(Spec)
_Round = create_model("RoundFile", __config__=_STRICT, gen=(int, ...), at=(int, ...), specs=(list[_Spec], ...))
_Steady = create_model("SteadyFile", __config__=_STRICT, lag=(int, ...), queue=(list[int], []), ended=(bool, False),
                       round=(_Round | None, None), speculation=(dict[str, Any] | None, None))
_File = _model(Checkpoint, {"algorithm": dict[str, Any], "generations": list[_Generation],
                            "steady": _Steady | None})
_File = create_model("CheckpointFile", __base__=_File, format=(int, ...), individuals=(list[Any], ...))


def to_json(state: Checkpoint) -> dict[str, Any]:
    enc = Encoder()
    algorithm = capture(state.algorithm, enc) if not isinstance(state.algorithm, dict) else \
        {k: enc.value(v) for k, v in state.algorithm.items()}
    out: dict[str, Any] = {"format": Checkpoint.FORMAT}
    for f in fields(state):
        out[f.name] = getattr(state, f.name)
    out["generations"] = [dataclasses.asdict(g) for g in state.generations]
    out["ref"] = None if state.ref is None else [float(v) for v in state.ref]
    if state.steady is not None:
        st = state.steady
        rnd = st.get("round")
        out["steady"] = {"lag": st["lag"], "queue": [enc.ind(i) for i in st.get("queue", [])],
                         "ended": bool(st.get("ended", False)),
                         "round": None if rnd is None else {"gen": rnd["gen"], "at": rnd["at"],
                                                            "specs": [dataclasses.asdict(s) for s in rnd["specs"]]},
                         "speculation": st.get("speculation")}
    out["algorithm"] = algorithm
    out["individuals"] = enc.individuals  # after everything that refers to them
    return out


def from_json(d: Any, where: Path) -> Checkpoint:
    """The record from the file's JSON; a one-line UserError when it is not what `to_json` writes."""
    fmt = d.get("format") if isinstance(d, dict) else None
    if fmt != Checkpoint.FORMAT:
        what = "has no format version" if fmt is None else f"has format {fmt!r}"
        raise damaged(where, f"{what}; this paretosched writes format {Checkpoint.FORMAT}")
    try:
        f = _File.model_validate(d)
        dec = Decoder(f.individuals)
        values = {k: getattr(f, k) for k in _File.model_fields if k not in ("format", "individuals")}
        values["algorithm"] = decode_state(f.algorithm, dec)
        values["generations"] = [Generation(**g.model_dump()) for g in f.generations]
        if f.steady is not None:
            st = f.steady
            values["steady"] = {"lag": st.lag, "queue": [dec.ind(k) for k in st.queue], "ended": st.ended,
                                "round": None if st.round is None else {
                                    "gen": st.round.gen, "at": st.round.at,
                                    "specs": [Spec(**s.model_dump()) for s in st.round.specs]},
                                "speculation": st.speculation}
    except ValidationError as exc:
        err = exc.errors()[0]
        raise damaged(where, f"{'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    except StateError as exc:
        raise damaged(where, str(exc)) from None
    return Checkpoint(**values)


def damaged(where: Path, why: str) -> UserError:
    """The one-line error of a checkpoint that cannot be used, with the way out."""
    return UserError(f"{where}: {why}; delete it and resume again: the run restarts from its evaluation log")


def save_checkpoint(run_dir: Path, state: Checkpoint) -> None:
    atomic_write_text(run_dir / CHECKPOINT, dumps(to_json(state), indent=None) + "\n", root=run_dir)


def load_checkpoint(run_dir: Path, notes: list[str] | None = None) -> Checkpoint | None:
    """The run's checkpoint, None without one. An old `checkpoint.pkl` is never opened: without a
    checkpoint.json the run restarts from its log, and `notes` gets a line saying so."""
    p = run_dir / CHECKPOINT
    if not p.is_file() and not p.is_symlink():
        if (run_dir / LEGACY).exists() and notes is not None:
            notes.append(f"{run_dir / LEGACY}: ignored (a pickle from an older paretosched; loading a pickle can "
                         "run code, so it is never opened): the run restarts from its evaluation log, simulating "
                         "nothing it logged")
        return None
    try:
        raw = loads(p.read_bytes())
    except (ValueError, RecursionError) as exc:  # truncated, garbled, NaN, not UTF-8
        raise damaged(p, f"unreadable ({str(exc)[:80]})") from None
    except OSError as exc:
        raise damaged(p, f"cannot be read ({exc.strerror})") from None
    state = from_json(raw, p)
    check_counts(state, run_dir)
    return state


def restore_into(state: Checkpoint, algo: Any, run_dir: Path) -> None:
    """Set the loaded state on `algo` (built from the study) and make it the state's algorithm."""
    try:
        restore(algo, state.algorithm)
    except StateError as exc:
        raise damaged(run_dir / CHECKPOINT, str(exc)) from None
    state.algorithm = algo


def check_counts(state: Checkpoint, run_dir: Path) -> None:
    """Refuse a checkpoint whose counts are negative (a hand-edited or damaged file that still parses)."""
    counts = {"generation": state.generation + 1, "n_told": state.n_told, "next_eval_id": state.next_eval_id,
              "n_resampled": state.n_resampled, "n_screened": state.n_screened, "elapsed_s": state.elapsed_s,
              "steady.lag": 1 if state.steady is None else state.steady["lag"] - 1}
    for k, v in counts.items():
        if v < 0:
            raise damaged(run_dir / CHECKPOINT, f"{k}: not a count")


def check_consistent(state: Checkpoint, rows: dict[int, Any], baselines: list[str], n_objectives: int,
                     run_dir: Path, population_ids: Callable[[], list[int]]) -> None:
    """Refuse a checkpoint that does not fit the run's log and study: every eval id it names is a
    logged row, the algorithm's population (`population_ids`, which decodes it) genomes of the log."""
    why = None
    ids = {"population": state.population, "baseline_ids": list(state.baseline_ids.values()),
           "recheck_ids": [*map(_int, state.recheck_ids), *state.recheck_ids.values()]}
    for key, values in ids.items():
        unknown = [i for i in values if i not in rows]
        if why is None and unknown:
            why = f"{key}: evaluation {unknown[0]} is not in the log"
    if why is None and state.baselines_done and sorted(state.baseline_ids) != sorted(baselines):
        why = f"baseline_ids: {sorted(state.baseline_ids)} are not the study's baselines {sorted(baselines)}"
    if why is None and state.ref is not None and len(state.ref) != n_objectives:
        why = f"ref: {len(state.ref)} values for {n_objectives} objectives"
    if why is None and state.generation >= 0:
        try:
            population_ids()
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            why = "its population holds genomes the log does not"
    if why is not None:
        raise damaged(run_dir / CHECKPOINT, why)


def _int(key: str) -> int | None:
    return int(key) if key.isdigit() else None
