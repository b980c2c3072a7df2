"""The run directory's typed records (search/runlog.py, search/summary.py): a log row is an
`Evaluation` that round-trips to the same JSON; checkpoints (plain JSON) and summaries are versioned:
an unversioned checkpoint is a one-line error that says what to do, a summary of a later format is
refused."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
from conftest import run_quiet, stable_rows, summary, write_study

import paretosched as ps
from paretosched.errors import UserError
from paretosched.search.blocks import (BaselineCheck, BaselineResult, FrontCheck, RecheckBlock, Resampling,
                                       SeedValues)
from paretosched.search.checkpoint import CHECKPOINT, Checkpoint, load_checkpoint
from paretosched.search.runlog import Evaluation, Generation, read_evaluations
from paretosched.search.summary import Summary, read_summary

SMALL = dict(budget={"generations": 3}, algorithm={"pop_size": 8}, seeds=2, recheck=2,
             baselines={"fcfs": {"scheduler": {"job_policy": "first", "backfilling": "none"}}})


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return run_quiet(write_study(tmp_path, **SMALL), tmp_path / "run")


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


def test_a_checkpoint_is_plain_json_that_loads_and_resumes(run: Path) -> None:
    before = stable_rows(run)
    raw = json.loads((run / CHECKPOINT).read_text())
    assert raw["format"] == Checkpoint.FORMAT and raw["done"] and isinstance(raw["algorithm"]["pop"], dict)
    (run / CHECKPOINT).write_text(json.dumps(raw | {"done": False}))  # killed before its re-check
    state = load_checkpoint(run)
    assert isinstance(state, Checkpoint) and not state.done and [type(g) for g in state.generations] == [Generation] * 3
    assert run_quiet(run, run, resume=True) == run
    assert stable_rows(run) == before and summary(run)["status"] == "done"
    assert load_checkpoint(run).done  # saved again
    assert ps.load_run(run).front["eval_id"].tolist() == summary(run)["front"]


def test_an_unversioned_checkpoint_is_a_one_line_error_that_says_what_to_do(run: Path) -> None:
    before = stable_rows(run)
    raw = json.loads((run / CHECKPOINT).read_text())
    del raw["format"]
    (run / CHECKPOINT).write_text(json.dumps(raw | {"done": False}))
    with pytest.raises(UserError) as err:
        run_quiet(run, run, resume=True)
    assert str(err.value) == (f"{run / CHECKPOINT}: has no format version; this paretosched writes format "
                              f"{Checkpoint.FORMAT}; delete it and resume again: the run restarts from its "
                              "evaluation log")
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
    assert old is not None and old.front == s.front and old.n_told == 0
    assert old.recheck == RecheckBlock()  # junk reads as absent
    (run / "summary.json").write_text(json.dumps(raw | {"format": 2}))
    with pytest.raises(UserError, match=r"summary.json: format 2; this paretosched reads summary format 1"):
        ps.load_run(run)


def test_the_summary_blocks_are_typed_records_written_back_key_for_key(run: Path) -> None:
    raw = json.loads((run / "summary.json").read_text())
    s = read_summary(run)
    assert s is not None and s.to_json() == raw
    assert [type(g) for g in s.generations] == [Generation] * 3 and s.generations[-1].hv == raw["generations"][-1]["hv"]
    fcfs = s.baselines["fcfs"]
    assert isinstance(fcfs, BaselineResult) and fcfs.eval_id == raw["baselines"]["fcfs"]["eval_id"]
    rc, said = s.recheck, raw["recheck"]
    assert rc.seeds == said["seeds"] and len(rc.seeds) == 2 and rc.dominated_baselines == said["dominated_baselines"]
    assert rc.front is not None and [type(p) for p in rc.front] == [FrontCheck] * len(said["front"])
    assert [p.eval_id for p in rc.front] == s.front and isinstance(rc.baselines["fcfs"], BaselineCheck)
    first = rc.front[0]
    assert isinstance(first.per_seed[0], SeedValues) and [q.seed for q in first.per_seed] == rc.seeds
    assert first.objectives == said["front"][0]["objectives"] and first.std == said["front"][0]["std"]
    assert s.resampling is None and raw["resampling"] is None  # SMALL runs without resampling
    on = {"max_seeds": 6, "step": 2, "tolerance": 0.05}
    assert Resampling.from_json(on) == Resampling(6, 2, 0.05) and Resampling(6, 2, 0.05).to_json() == on


def test_older_summary_blocks_read_as_recorded_and_keep_their_shape() -> None:
    old = {"recheck": {"seeds": [7, 8], "eval_ids": {"0": 6}},  # before the re-check block had verdicts
           "baselines": {"fcfs": {"eval_id": 0, "dominated": True}, "bad": "junk"},  # before `_on_search_seeds`
           "generations": [{"generation": 0, "hv": 1.5, "front_size": 2}, {"hv": 2.0}, "junk"],
           "resampling": {"max_seeds": 6}}
    s = Summary.from_json(old, Path("summary.json"))
    assert s.recheck.seeds == [7, 8] and s.recheck.front is None and s.recheck.dominated_baselines is None
    assert s.recheck.to_json() == old["recheck"]  # written back without the keys it never had
    assert list(s.baselines) == ["fcfs"] and s.baselines["fcfs"].dominated_on_search_seeds is True
    assert [(g.generation, g.hv, g.front_size, g.resampled) for g in s.generations] == [(0, 1.5, 2, 0)]
    assert s.resampling is None  # incomplete: not recorded
