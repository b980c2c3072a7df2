"""The Python API's arguments (issue 29, item 12): every public function refuses a wrong type or
an extreme value as one UserError line naming the argument, never a traceback nor a silent
coercion (seeds=[1.5, 2.9] used to run seeds 1 and 2); numpy integers are ints."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import paretosched as ps
from paretosched.errors import ArgumentError, UserError

# the smallest bundled set-up: a 240-core slice of Gaia and 20 jobs of the bundled trace
CONFIG: dict[str, Any] = {"platform": "gaia-mini",
                          "workload": {"path": "builtin:hpc2n-3k.swf.gz", "mode": "hdeeprm", "n_jobs": 20},
                          "scheduler": {"kind": "classic", "job_policy": "shortest", "backfilling": "easy"}}
STUDY: dict[str, Any] = {"name": "args", "base": CONFIG,
                         "search": {"scheduler.freq": {"type": "float", "low": 0.55, "high": 1.0}},
                         "seeds": 1, "seed": 1, "budget": {"generations": 1}, "algorithm": {"pop_size": 4},
                         "parallel": {"workers": 1}, "recheck": 0, "resampling": None, "cache": False}


@pytest.fixture(scope="module", autouse=True)
def in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Relative paths the fuzz generates land in a temporary folder."""
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(here)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("args") / "args"
    with contextlib.redirect_stderr(io.StringIO()):
        ps.optimise(STUDY, out=out, quiet=True)
    return out


@pytest.fixture(scope="module")
def run(run_dir: Path) -> ps.Run:
    return ps.load_run(run_dir)


def refused(call: Callable[[], Any], name: str) -> str:
    """The one-line UserError `call` raises, which names the argument `name`."""
    with pytest.raises(UserError) as info:
        call()
    msg = str(info.value)
    assert "\n" not in msg and name in msg, msg
    return msg


# ---------------------------------------------------------------------------------------------
# the audit's cases, one by one

@pytest.mark.parametrize("seeds", [[1.5, 2.9], [True, False], 3.7, [5, 5], [np.float64(1.0)], [2**64],
                                   float("nan"), [1, None]])
def test_simulate_refuses_seeds_it_used_to_coerce_or_trip_on(seeds: Any) -> None:
    msg = refused(lambda: ps.simulate(CONFIG, seeds=seeds), "seeds")
    assert msg.startswith("seeds")


@pytest.mark.parametrize("seeds", [[-1], 2**70, "3", 0])
def test_simulate_still_refuses_what_it_refused(seeds: Any) -> None:
    assert refused(lambda: ps.simulate(CONFIG, seeds=seeds), "seeds").startswith("seeds")


def test_numpy_integers_are_seeds_and_counts() -> None:
    assert ps.simulate(CONFIG, seeds=np.int64(2)).seeds == ps.simulate(CONFIG, seeds=2).seeds
    sim = ps.simulate(CONFIG, seeds=np.array([3, 4]))
    assert sim.seeds == [3, 4] and all(type(s) is int for s in sim.seeds)
    assert sim.per_seed["seed"].tolist() == [3, 4]
    assert ps.simulate(CONFIG, seeds=(4,)).metrics == sim.per_seed.iloc[1].drop("seed").to_dict()


def test_the_error_is_a_type_and_value_error_too() -> None:
    with pytest.raises(TypeError):
        ps.simulate(CONFIG, seeds=3.7)
    with pytest.raises(ValueError, match="seed 5 is listed twice"):
        ps.simulate(CONFIG, seeds=[5, 5])
    with pytest.raises(ArgumentError, match=r"^jobs: expected True or False, got 'yes'$"):
        ps.simulate(CONFIG, jobs="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("kw, name", [({"workers": "2"}, "workers"),
                                      ({"workers": 10**9}, "workers"), ({"workers": True}, "workers"),
                                      ({"resume": "no"}, "resume"), ({"quiet": 1}, "quiet"),
                                      ({"dask": 5}, "dask"), ({"out": 3.5}, "out")])
def test_optimise_refuses_bad_arguments_before_any_work(tmp_path: Path, kw: dict[str, Any], name: str) -> None:
    out = tmp_path / "never"
    refused(lambda: ps.optimise(STUDY, **{"out": out, **kw}), name)
    assert not out.exists()


def test_a_study_dict_may_hold_numpy_numbers(run_dir: Path, run: ps.Run) -> None:
    # what a notebook computes with numpy is the number it holds (not "expected an int")
    study = {**STUDY, "seed": np.int64(1), "algorithm": {"pop_size": np.int64(4)}}
    with contextlib.redirect_stderr(io.StringIO()):
        again = ps.optimise(study, out=run_dir, resume=True, quiet=True)
    assert again.evaluations.equals(run.evaluations)


@pytest.mark.parametrize("path", [None, 5, b"runs/x", "", "a\0b", "\n"])
def test_load_run_refuses_what_is_not_a_path(path: Any) -> None:
    refused(lambda: ps.load_run(path), "path")


@pytest.mark.parametrize("pick", [None, 3, "", ["knee"]])
def test_export_refuses_a_pick_that_is_not_an_expression(run: ps.Run, pick: Any) -> None:
    refused(lambda: run.export(pick=pick), "pick")
    refused(lambda: run.pick(pick), "expr")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_export_to_a_full_device_is_one_line_naming_it(run: ps.Run) -> None:
    msg = refused(lambda: run.export(path="/dev/full"), "/dev/full")
    assert msg.startswith("path /dev/full")


def test_export_to_a_folder_is_refused_and_a_file_is_written(run: ps.Run, tmp_path: Path) -> None:
    assert refused(lambda: run.export(path=tmp_path), str(tmp_path)) == f"path {tmp_path}: is a folder, expected a file name"
    doc = run.export(path=tmp_path / "best.yaml")
    assert ps.simulate(tmp_path / "best.yaml").config.scheduler == ps.simulate(doc).config.scheduler


# ---------------------------------------------------------------------------------------------
# fuzz: generated wrong-typed and extreme arguments for every public function

WEIRD = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**80), max_value=2**80), st.text(max_size=12),
    st.sampled_from([np.int64(2), np.int32(-1), np.float64(1.0), np.bool_(True), np.uint64(2**63), b"x",
                     {"a": 1}, object(), Path("."), np.array([[1, 2]])]),
)
ARGUMENT = st.one_of(WEIRD, st.lists(WEIRD, max_size=4), st.tuples(WEIRD, WEIRD))
FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def outcome(call: Callable[[], Any], name: str, value: Any) -> Any:
    """`call()`'s result, or None after checking its error: a UserError of one line naming the
    argument `name` (or, for a path given as text, that path). Any other exception fails."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return call()
    except UserError as exc:
        msg = str(exc)
        assert "\n" not in msg, msg
        named = name in msg or (isinstance(value, (str, os.PathLike)) and os.fspath(value) in msg)
        assert named, f"{name}={value!r}: {msg}"
        return None


@FUZZ
@given(seeds=ARGUMENT, jobs=WEIRD)
def test_fuzz_simulate(seeds: Any, jobs: Any) -> None:
    sim = outcome(lambda: ps.simulate(CONFIG, seeds=seeds, jobs=jobs), "s", seeds)  # seeds or jobs
    if sim is None:
        return
    # accepted: the seeds are distinct non-negative ints, and a list is run as given
    assert all(type(s) is int and s >= 0 for s in sim.seeds) and len(set(sim.seeds)) == len(sim.seeds)
    assert sim.per_seed["seed"].tolist() == sim.seeds
    if isinstance(seeds, (list, tuple)):
        assert sim.seeds == [int(s) for s in seeds]
    assert isinstance(jobs, (bool, np.bool_)) and (sim.jobs is not None) == bool(jobs)


@FUZZ
@given(value=ARGUMENT, which=st.sampled_from(["seeds", "jobs", "config"]))
def test_fuzz_simulate_names_the_argument(value: Any, which: str) -> None:
    kw = {"config": CONFIG, which: value}
    outcome(lambda: ps.simulate(**kw), which, value)


@FUZZ
@given(value=ARGUMENT, which=st.sampled_from(["workers", "resume", "quiet", "dask", "out", "study"]))
def test_fuzz_optimise(run_dir: Path, run: ps.Run, value: Any, which: str) -> None:
    if which == "dask" and isinstance(value, str):
        value = None  # a string is a valid address: connecting to it is not this test's business
    kw: dict[str, Any] = {"study": STUDY, "out": run_dir, "resume": True, "quiet": True, which: value}
    got = outcome(lambda: ps.optimise(**kw), which, value)
    if got is not None:  # resuming the finished run returns it as it is
        assert got.evaluations.equals(run.evaluations)


@FUZZ
@given(path=ARGUMENT)
def test_fuzz_load_run(path: Any) -> None:
    assert outcome(lambda: ps.load_run(path), "path", path) is None


@FUZZ
@given(pick=st.one_of(ARGUMENT, st.sampled_from(["balanced", "knee", "min:energy_kwh", "index:0", "eval:-1",
                                                 "weights:nan,1", "index:99999999999999999999"])),
       path=st.one_of(st.none(), WEIRD, st.sampled_from([".", "/dev/full", "sub/best.yaml"])))
def test_fuzz_run_export_and_pick(run: ps.Run, tmp_path_factory: pytest.TempPathFactory, pick: Any, path: Any) -> None:
    folder = tmp_path_factory.mktemp("export")
    inside = isinstance(path, str) and path and "\0" not in path and path != "/dev/full"
    target = folder / path.lstrip("/") if inside else path
    doc = outcome(lambda: run.export(pick=pick, path=target), "p", pick)  # pick or path
    if doc is not None:
        assert doc["provenance"]["eval_id"] == run.pick(pick).eval_id
        if target is not None:
            assert Path(target).is_file()
    outcome(lambda: run.pick(pick), "pick", pick)


def test_quiet_optimise_writes_no_progress_on_stderr(run_dir: Path, run: ps.Run) -> None:
    # (the study has `cache: false`: a cached re-run still says where its results came from,
    # tests/test_errors_name_the_way_out.py)
    for quiet in (True, False):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            again = ps.optimise(STUDY, out=run_dir, resume=True, quiet=quiet)
        assert again.evaluations.equals(run.evaluations)
        assert (err.getvalue() == "") == quiet, err.getvalue()


CALLS: dict[str, Callable[[ps.Run, Path, Any], Any]] = {
    "seeds": lambda run, d, v: ps.simulate(CONFIG, seeds=v),
    "jobs": lambda run, d, v: ps.simulate(CONFIG, seeds=[1], jobs=v),
    "config": lambda run, d, v: ps.simulate(v),
    "workers": lambda run, d, v: ps.optimise(STUDY, out=d, resume=True, quiet=True, workers=v),
    "resume": lambda run, d, v: ps.optimise(STUDY, out=d, resume=v, quiet=True),
    "quiet": lambda run, d, v: ps.optimise(STUDY, out=d, resume=True, quiet=v),
    "study": lambda run, d, v: ps.optimise(v, out=d, resume=True, quiet=True),
    "path": lambda run, d, v: ps.load_run(v),
    "pick": lambda run, d, v: run.export(pick=v),
}


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(which=st.sampled_from(sorted(CALLS)), value=ARGUMENT)
def test_fuzz_every_argument_many_examples(run_dir: Path, run: ps.Run, which: str, value: Any) -> None:
    outcome(lambda: CALLS[which](run, run_dir, value), which, value)
