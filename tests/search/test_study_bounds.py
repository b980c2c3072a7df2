"""Study shapes that used to crash a run or mislead (issue 29, items 4 and 8 and the smaller ones):
extreme gene bounds and reference points, genes on a section and its field, repeated re-check
seeds, and a `base` that is some other file. Each is refused at load, one line naming the key."""

from __future__ import annotations

import contextlib
import io
import math
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paretosched.config import config_from_dict
from paretosched.errors import UserError
from paretosched.search.analytic import study_dict
from paretosched.search.space import SearchSpace
from paretosched.search.study import Study, load_study
from paretosched.sim.engine.metrics import METRIC_NAMES
from test_search_study import _error, _write  # the study file helpers (tests/search is on sys.path)


# ---------------------------------------------------------------------------------------------
# gene bounds (item 4: a low bound of 1e-300 wrote inf to summary.json and crashed optimise)

@pytest.mark.parametrize("path, gene, words", [
    ("model.p1_speed", {"type": "float", "low": 1e-300, "high": 1.0, "log": True}, "low (1e-300)"),
    ("scheduler.bw_cap", {"type": "float", "low": 0.5, "high": 1e300}, "high (1e+300)"),
    ("scheduler.freq", {"type": "float", "low": -1e-200, "high": 1.0}, "low (-1e-200)"),
    ("model.p1_speed", {"type": "choice", "values": [0.75, 1e-300]}, "value (1e-300)"),
    ("scheduler.bw_cap", {"type": "bool", "values": [None, 1e300]}, "value (1e+300)"),
])
def test_gene_bounds_beyond_what_arithmetic_holds_are_refused(tmp_path: Path, path: str, gene: dict[str, Any],
                                                              words: str) -> None:
    msg = _error(tmp_path, study_dict(search={path: gene}))
    assert f"search.{path}" in msg and words in msg


FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.0, 1e-300, 1e300, 5e-324]))
FIELDS = ["scheduler.freq", "model.p1_speed", "scheduler.bw_cap", "scheduler.power_off_idle_s", "model.p2_power"]


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(FIELDS), low=FLOATS, high=FLOATS, log=st.booleans(), u=st.floats(0, 1))
def test_an_accepted_float_gene_only_proposes_values_the_config_accepts(tmp_path: Path, path: str, low: float,
                                                                       high: float, log: bool, u: float) -> None:
    data = study_dict(search={path: {"type": "float", "low": low, "high": high, "log": log}})
    try:
        study = load_study(_write(tmp_path, data))
    except UserError as exc:
        assert "\n" not in str(exc) and f"search.{path}" in str(exc)
        return
    space = SearchSpace(study)
    var = space.pymoo_vars()[path]
    lo, hi = var.bounds
    assert math.isfinite(hi - lo)
    value = space.decode({path: lo + u * (hi - lo)})[path]
    assert math.isfinite(value) and study.search[path].low <= value <= study.search[path].high
    assert value == 0 or 1e-12 <= abs(value) <= 1e15
    config_from_dict(space.config({path: value}))  # the schema takes every value the gene proposes


# ---------------------------------------------------------------------------------------------
# reference points (item 4: 1e308 overflowed the hypervolume to inf)

def test_a_reference_point_the_hypervolume_cannot_hold_is_refused(tmp_path: Path) -> None:
    msg = _error(tmp_path, study_dict(reference_point={"energy_kwh": 1e308, "mean_bsld": 2.0}))
    assert "reference_point" in msg and "energy_kwh" in msg and "1e+308" in msg
    assert load_study(_write(tmp_path, study_dict(reference_point={"energy_kwh": 1e12, "mean_bsld": -1e12})))
    # each value within bounds, but their product (one factor per objective) beyond a float
    names = list(METRIC_NAMES[:26])
    msg = _error(tmp_path, study_dict(objectives=names, reference_point={n: 1e12 for n in names}))
    assert "reference_point" in msg and "hypervolume" in msg


# ---------------------------------------------------------------------------------------------
# genes on a section and on its field (item 8: KeyError in _population_ids mid-run)

WORKLOADS = [{"jobs": [{"run_s": 10.0}]}, {"jobs": [{"run_s": 20.0}, {"run_s": 5.0}]}]


@pytest.mark.parametrize("outer, inner, genes", [
    ("workload", "workload.n_jobs", {"workload": {"type": "choice", "values": WORKLOADS},
                                     "workload.n_jobs": {"type": "int", "low": 1, "high": 2}}),
    ("scheduler", "scheduler.freq", {"scheduler.freq": {"type": "float", "low": 0.5, "high": 1.0},
                                     "scheduler": {"type": "choice", "values": [{"kind": "classic"},
                                                                                {"kind": "classic", "freq": 0.7}]}}),
])
def test_genes_on_a_section_and_its_field_are_refused(tmp_path: Path, outer: str, inner: str,
                                                      genes: dict[str, Any]) -> None:
    msg = _error(tmp_path, study_dict(search=genes))
    assert f"'{outer}'" in msg and f"'{inner}'" in msg and "search" in msg


def test_a_section_gene_alone_and_sibling_fields_still_load(tmp_path: Path) -> None:
    assert load_study(_write(tmp_path, study_dict(search={"workload": {"type": "choice", "values": WORKLOADS}})))
    # `scheduler.freq` and `scheduler.freq_by_type...`: a shared prefix, not a section and its field
    assert load_study(_write(tmp_path, study_dict(search={"scheduler.freq": {"type": "float", "low": 0.5, "high": 1.0},
                                                          "scheduler.freq_by_type": {"type": "choice",
                                                                                     "values": [{}]}})))


# ---------------------------------------------------------------------------------------------
# smaller ones

@pytest.mark.parametrize("key, value", [("recheck", [5, 5, 5]), ("seeds", [1, 2, 1])])
def test_a_seed_listed_twice_is_refused(tmp_path: Path, key: str, value: list[int]) -> None:
    msg = _error(tmp_path, study_dict(**{key: value}))
    assert f"{key}: seed {value[-1]} is listed twice" in msg


SHADOW = "root:$6$saltsalt$secrethash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"


@pytest.mark.parametrize("text", [SHADOW, "s3cr3t-t0ken-value\n", "- s3cr3t\n- other\n"])
def test_a_base_that_is_another_file_is_named_never_echoed(tmp_path: Path, text: str) -> None:
    other = tmp_path / "shadow"
    other.write_text(text)
    msg = _error(tmp_path, study_dict(base=str(other)))
    assert f"base: {other}" in msg
    msg = msg.replace(str(tmp_path), "")
    assert "secret" not in msg and "s3cr3t" not in msg and "root" not in msg and "daemon" not in msg


def test_a_mistyped_config_key_still_gets_its_suggestion(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("platfrom: homogeneous-2\n")
    msg = _error(tmp_path, study_dict(base=str(cfg)))
    assert "platfrom: unknown key (did you mean 'platform'?)" in msg



@pytest.mark.parametrize("name", [".cache", ".hidden"])
def test_a_study_name_that_would_hide_its_run_folder_is_refused_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    msg = _error(tmp_path, study_dict(name=name))
    assert "name: a study name names its run folder" in msg and "hidden" in msg
    # the command refuses it before making runs/ (a study named .cache left runs/.cache/.lock)
    from paretosched.cli import main

    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert main(["optimise", "s.yaml"]) == 2
    assert "name: a study name names its run folder" in err.getvalue()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


# ---------------------------------------------------------------------------------------------
# numeric extremes on every float of the study schema: refused in one line, or a run that ends

def _float_keys(model: Any, prefix: str = "") -> list[str]:
    """Dotted keys of every float field of `model` and of its sections."""
    from pydantic import BaseModel

    keys = []
    for name, f in model.model_fields.items():
        args = [a for a in (typing.get_args(f.annotation) or (f.annotation,)) if a is not type(None)]
        for a in args:
            if a is float:
                keys.append(prefix + name)
            elif isinstance(a, type) and issubclass(a, BaseModel):
                keys += _float_keys(a, f"{prefix}{name}.")
    return keys


STUDY_FLOATS = _float_keys(Study)
EXTREMES = [1e308, -1e308, 5e-324, 1e-300, -0.0, 2**64]


def _set(data: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    if key.startswith("constraints."):  # a list of limits: one limit with the value
        leaf = key.split(".")[1]
        data["constraints"] = [{"metric": "mean_bsld", leaf: value, **({"max_vs": "b"} if leaf == "factor" else {})}]
        data["baselines"] = {"b": {}}
        return data
    node = data
    *parents, leaf = key.split(".")
    for p in parents:
        if not isinstance(node.get(p), dict):
            node[p] = {}
        node = node[p]
    node[leaf] = value
    if key.startswith("screening.") and leaf != "prefix":
        node["by"] = "forest"
    elif key == "screening.prefix":
        node["by"] = "prefix"
        data["base"]["workload"] = {"jobs": [{"run_s": 10.0}, {"run_s": 20.0}], "n_jobs": 2}
    return data


def test_the_schema_walk_finds_the_study_floats() -> None:
    assert {"budget.wall_time_s", "algorithm.crossover.eta", "algorithm.mutation.eta",
            "resampling.tolerance", "screening.explore"} <= set(STUDY_FLOATS)


@pytest.mark.parametrize("key", STUDY_FLOATS)
@pytest.mark.parametrize("value", EXTREMES)
def test_every_study_float_at_an_extreme_loads_or_is_refused_naming_it(tmp_path: Path, key: str, value: Any) -> None:
    data = _set(study_dict(resampling={"max_seeds": 2}), key, value)
    try:
        load_study(_write(tmp_path, data))
    except UserError as exc:
        assert "\n" not in str(exc) and key.rsplit(".", 1)[-1] in str(exc), str(exc)


@pytest.mark.parametrize("value", [1e308, 5e-324])
def test_extreme_operator_indices_still_end_a_run_with_finite_results(tmp_path: Path, value: float) -> None:
    from conftest import log_json, run_quiet, summary, write_study

    study = write_study(tmp_path, algorithm={"pop_size": 4, "crossover": {"eta": value},
                                             "mutation": {"eta": value}}, budget={"generations": 2})
    out = run_quiet(study, tmp_path / "run")
    assert summary(out)["status"] == "done"
    assert all(math.isfinite(v) for r in log_json(out) for v in (r["objectives"] or {}).values())
