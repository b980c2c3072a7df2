"""The run directory's typed records (search/runlog.py, search/summary.py): a log row is an
`Evaluation` that round-trips to the same JSON; checkpoints and summaries are versioned: what
main wrote still loads and resumes, an unversioned checkpoint is a one-line error that says what
to do, a summary of a later format is refused."""

from __future__ import annotations

import json
import pickle
from dataclasses import fields
from pathlib import Path

import pytest
from conftest import run_quiet, stable_rows, summary, write_study

import paretosched as ps
from paretosched.errors import UserError
from paretosched.search.runlog import CHECKPOINT, Checkpoint, Evaluation, load_checkpoint, read_evaluations
from paretosched.search.summary import Summary, read_summary

SMALL = dict(budget={"generations": 3}, algorithm={"pop_size": 8}, seeds=2, recheck=2,
             baselines={"fcfs": {"scheduler": {"job_policy": "first", "backfilling": "none"}}})

# the keys of the checkpoint dict paretosched wrote before the Checkpoint record (format 1)
MAIN_KEYS = ("format", "twin", "algorithm", "generation", "n_told", "next_eval_id", "baselines_done", "ref",
             "ref_source", "generations", "elapsed_s", "population", "baseline_ids", "stop_reason", "done",
             "n_resampled")


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return run_quiet(write_study(tmp_path, **SMALL), tmp_path / "run")


def _as_main_wrote(run: Path, **changes: object) -> None:
    """Rewrite the checkpoint as the format-1 dict of paretosched before this record."""
    d = pickle.loads((run / CHECKPOINT).read_bytes())
    old = {k: d[k] for k in MAIN_KEYS if k in d} | {"format": 1, "recheck_ids": d["recheck_ids"]} | changes
    (run / CHECKPOINT).write_bytes(pickle.dumps({k: v for k, v in old.items() if v is not _DROP}))


_DROP = object()


def test_every_log_row_round_trips_through_its_record(run: Path) -> None:
    lines = (run / "evaluations.jsonl").read_text().splitlines()
    rows = read_evaluations(run)
    assert len(rows) == len(lines) and {r.kind for r in rows} == {"baseline", "search", "recheck"}
    for line, row in zip(lines, rows):
        assert json.dumps(row.to_json(), separators=(",", ":")) == line  # same keys, order and floats
        assert Evaluation.from_json(json.loads(line)) == row
        assert row.ok and row.objective_values(["energy_kwh", "mean_bsld"]) == [
            row.objectives["energy_kwh"], row.objectives["mean_bsld"]]


def test_a_row_of_an_unknown_format_or_shape_is_refused(run: Path) -> None:
    row = json.loads((run / "evaluations.jsonl").read_text().splitlines()[0])
    for bad, why in ((row | {"format": 2}, "row format 2"), (row | {"seeds": "12"}, "seeds: expected list"),
                     (row | {"per_seed": [{"seed": "1"}]}, "per_seed")):
        with pytest.raises(ValueError, match=why):
            Evaluation.from_json(bad)


def test_a_checkpoint_main_wrote_resumes_and_loads(run: Path) -> None:
    before = stable_rows(run)
    _as_main_wrote(run, done=False)  # killed before its re-check, by the paretosched of main
    state = load_checkpoint(run)
    assert isinstance(state, Checkpoint) and state.resampling and not state.done
    assert run_quiet(run, run, resume=True) == run
    assert stable_rows(run) == before and summary(run)["status"] == "done"
    assert load_checkpoint(run).done  # saved again, in the current format
    assert pickle.loads((run / CHECKPOINT).read_bytes())["format"] == Checkpoint.FORMAT
    assert ps.load_run(run).front["eval_id"].tolist() == summary(run)["front"]


def test_a_format_1_checkpoint_from_before_resampling_continues_without_it(run: Path) -> None:
    _as_main_wrote(run, n_resampled=_DROP)
    state = load_checkpoint(run)
    assert state is not None and not state.resampling and state.n_resampled == 0


def test_an_unversioned_checkpoint_is_a_one_line_error_that_says_what_to_do(run: Path) -> None:
    before = stable_rows(run)
    _as_main_wrote(run, format=_DROP, done=False)
    with pytest.raises(UserError) as err:
        run_quiet(run, run, resume=True)
    assert "\n" not in str(err.value)
    assert str(err.value) == (f"{run / CHECKPOINT}: has no format version (another paretosched wrote it); "
                              "delete it and resume again: the run restarts from its evaluation log")
    (run / CHECKPOINT).unlink()  # what the message says: the log alone finishes the run
    assert run_quiet(run, run, resume=True) == run
    assert stable_rows(run) == before


def test_the_summary_record_reads_what_main_wrote_and_refuses_a_later_format(run: Path) -> None:
    raw = json.loads((run / "summary.json").read_text())
    assert raw["format"] == Summary.FORMAT and list(raw) == [f.name for f in fields(Summary)]
    s = read_summary(run)
    assert s is not None and s.to_json() == raw and s.front == raw["front"] and s.twin == raw["versions"]["twin"]
    del raw["format"]  # as main wrote it
    (run / "summary.json").write_text(json.dumps(raw | {"recheck": "junk", "n_told": True}))
    old = read_summary(run)
    assert old is not None and old.front == s.front and old.recheck == {} and old.n_told == 0  # junk reads as absent
    (run / "summary.json").write_text(json.dumps(raw | {"format": 2}))
    with pytest.raises(UserError, match=r"summary.json: format 2; this paretosched reads summary format 1"):
        ps.load_run(run)
