"""Study files: resolution, seeds, and one-line UserErrors that name the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from paretosched.errors import UserError
from paretosched.search.analytic import study_dict
from paretosched.search.study import algorithm_seed, load_study


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def _error(tmp_path: Path, data: dict[str, Any]) -> str:
    with pytest.raises(UserError) as info:
        load_study(_write(tmp_path, data))
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(str(tmp_path / "s.yaml"))
    return msg


def _search(**genes: Any) -> dict[str, Any]:
    return {k.replace("__", "."): v for k, v in genes.items()}


def test_resolves_seeds_base_and_defaults(tmp_path: Path) -> None:
    data = study_dict(seeds=3, recheck=None, seed=7)
    study = load_study(_write(tmp_path, data))
    assert isinstance(study.seeds, list) and len(study.seeds) == 3 and len(set(study.seeds)) == 3
    # recheck defaults to max(3, number of seeds) fresh seeds, never reusing one
    assert isinstance(study.recheck, list) and len(study.recheck) == 3
    assert not set(study.recheck) & set(study.seeds)
    assert len(load_study(_write(tmp_path, dict(data, seeds=1))).recheck) == 3
    assert len(load_study(_write(tmp_path, dict(data, seeds=5))).recheck) == 5
    assert study.base["scheduler"]["kind"] == "classic" and study.base["model"]["interference"] == "thesis"
    assert study.objective_names == ["energy_kwh", "mean_bsld"]
    # deterministic from the study seed, different for another seed
    again = load_study(_write(tmp_path, data))
    assert again.seeds == study.seeds and again.recheck == study.recheck
    other = load_study(_write(tmp_path, dict(data, seed=8)))
    assert other.seeds != study.seeds and algorithm_seed(other) != algorithm_seed(study)


def test_base_from_file_and_max_objective(tmp_path: Path) -> None:
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.swf").write_text("1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump({"platform": "homogeneous-2", "workload": {"path": "traces/t.swf"}}))
    data = study_dict(base="cfg.yaml", objectives=["energy_kwh", {"max": "utilisation"}], seeds=[5, 6],
                      reference_point=None)
    study = load_study(_write(tmp_path, data))
    assert study.base["workload"]["path"] == str((tmp_path / "traces" / "t.swf").resolve())
    assert [o.sense for o in study.objectives] == ["min", "max"] and list(study.signs) == [1.0, -1.0]
    assert study.seeds == [5, 6]


def test_resolved_study_round_trips_through_a_run_dir(tmp_path: Path) -> None:
    study = load_study(_write(tmp_path, study_dict(seeds=2)))
    run = tmp_path / "run"
    run.mkdir()
    (run / "study.yaml").write_text(yaml.safe_dump(study.model_dump(mode="json")))
    assert load_study(run) == study


@pytest.mark.parametrize(
    "patch, key, words",
    [
        ({"budjet": {"generations": 2}}, "budjet", "unknown key"),
        ({"seed": "abc"}, "seed", "integer"),
        ({"search": _search(scheduler__job_policy={"type": "choice", "values": []})},
         "search.scheduler.job_policy.values", "at least one"),
        ({"search": _search(scheduler__freq={"type": "float", "low": 0.9, "high": 0.2})},
         "search.scheduler.freq", "low (0.9) > high (0.2)"),
        ({"search": _search(scheduler__min_nodes_on={"type": "int", "low": 5, "high": 1})},
         "search.scheduler.min_nodes_on", "low (5) > high (1)"),
        ({"search": _search(scheduler__power_off_idle_s={"type": "float", "low": 0, "high": 10, "log": True})},
         "search.scheduler.power_off_idle_s", "low > 0"),
        ({"search": _search(scheduler__freq={"type": "gaussian"})}, "search.scheduler.freq", "gene type"),
        ({"objectives": ["energy_kwh", "happiness"]}, "objectives.1", "unknown metric 'happiness'"),
        ({"objectives": ["energy_kwh"]}, "objectives", "at least 2"),
        ({"search": _search(scheduler__warp_drive={"type": "bool"})}, "search.scheduler.warp_drive", "unknown config path"),
        ({"search": _search(schedular__freq={"type": "float", "low": 0.1, "high": 1})}, "search.schedular.freq", "unknown config path"),
        ({"search": _search(scheduler__freq={"type": "float", "low": 0.5, "high": 2.0})},
         "search.scheduler.freq", "value 2.0 does not fit"),
        ({"search": _search(scheduler__job_policy={"type": "choice", "values": ["first", "fastest"]})},
         "search.scheduler.job_policy", "'fastest' does not fit"),
        ({"budget": {}}, "budget", "at least one of"),
        ({"seeds": 0}, "seeds", ">= 1"),
        ({"baselines": {"fcfs": {"scheduler": {"job_policy": "lifo"}}}}, "baselines.fcfs.scheduler.job_policy", "Input should be"),
        ({"evaluator": "no.such.module:fn"}, "evaluator", "not a known evaluator"),
        ({"evaluator": "conftest:no_such_fn"}, "evaluator", "cannot import"),
        ({"reference_point": {"energy_kwh": 1.0}}, "reference_point", "one value per objective"),
    ],
)
def test_bad_study_names_the_key(tmp_path: Path, patch: dict[str, Any], key: str, words: str) -> None:
    msg = _error(tmp_path, study_dict(**patch))
    assert f": {key}" in msg, msg
    assert words in msg, msg


def test_missing_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="file not found"):
        load_study(tmp_path / "nope.yaml")
    p = tmp_path / "bad.yaml"
    p.write_text("name: [unclosed\n")
    with pytest.raises(UserError, match="invalid YAML"):
        load_study(p)
    with pytest.raises(UserError, match="not a study file nor a run directory"):
        load_study(tmp_path)


@pytest.mark.parametrize(
    "patch, expected",
    [
        # no silent coercion: a string or a bool where a number is expected, a string for a bool
        ({"budget": {"generations": "2"}}, "budget.generations: Input should be a valid integer (got '2')"),
        ({"parallel": {"workers": True}}, "parallel.workers: Input should be a valid integer (got True)"),
        ({"algorithm": {"pop_size": True}}, "algorithm.pop_size: Input should be a valid integer (got True)"),
        ({"seeds": True}, "seeds: expected a number of seeds or a list of seeds (got True)"),
        ({"seeds": "3"}, "seeds: expected a number of seeds or a list of seeds (got '3')"),
        ({"seeds": [1, "2"]}, "seeds.1: Input should be a valid integer (got '2')"),
        ({"recheck": True},
         "recheck: expected a number of fresh seeds (0 = no re-check), a list of seeds, or null (got True)"),
        ({"cache": "no"}, "cache: Input should be a valid boolean (got 'no')"),
        ({"seed": True}, "seed: Input should be a valid integer (got True)"),
        ({"reference_point": {"energy_kwh": True, "mean_bsld": 1}},
         "reference_point.energy_kwh: Input should be a valid number (got True)"),
        ({"search": _search(scheduler__freq={"type": "float", "low": "0.2", "high": 1})},
         "search.scheduler.freq.low: Input should be a valid number (got '0.2')"),
        ({"search": _search(scheduler__power_off_idle_s={"type": "float", "low": 1, "high": 9, "log": "yes"})},
         "search.scheduler.power_off_idle_s.log: Input should be a valid boolean (got 'yes')"),
        # shapes: a section or a field of the wrong kind is described without internal class names
        ({"budget": 5}, "budget: expected a mapping of keys (evaluations, generations, wall_time_s), got a number (5)"),
        ({"algorithm": {"crossover": 0.9}}, "algorithm.crossover: expected a mapping of keys (prob, eta), got a number (0.9)"),
        ({"base": 5}, "base: expected a scheduler config (a mapping) or the path of a config file (got 5)"),
        # objectives: the key the user wrote, and the accepted forms
        ({"objectives": ["energy_kwh", {"maximise": "utilisation"}]},
         "objectives.1: unknown key 'maximise' (an objective is a metric name, {min: <metric>} or {max: <metric>})"),
        ({"objectives": ["energy_kwh", {"max": "utilisation", "sense": "min"}]},
         "objectives.1: an objective is a metric name, {min: <metric>} or {max: <metric>}, one key only (got max, sense)"),
        ({"objectives": ["energy_kwh", {"max": 5}]}, "objectives.1: max: expected a metric name (got 5)"),
        ({"objectives": ["energy_kwh", 5]},
         "objectives.1: expected a metric name, {min: <metric>} or {max: <metric>} (got 5)"),
        # an error found while deriving seeds names the file too
        ({"seeds": [5, 6], "recheck": [6, 7]},
         "recheck: seeds [6] are also replication seeds (re-check seeds must be fresh)"),
    ],
)
def test_bad_study_exact_message(tmp_path: Path, patch: dict[str, Any], expected: str) -> None:
    assert _error(tmp_path, study_dict(**patch)) == f"{tmp_path / 's.yaml'}: {expected}"


def test_ints_are_still_accepted_where_a_float_is_expected(tmp_path: Path) -> None:
    data = study_dict(search=_search(scheduler__power_off_idle_s={"type": "float", "low": 30, "high": 7200, "log": True}),
                      budget={"wall_time_s": 60}, reference_point={"energy_kwh": 2, "mean_bsld": 3})
    study = load_study(_write(tmp_path, data))
    gene = study.search["scheduler.power_off_idle_s"]
    assert (gene.low, gene.high) == (30.0, 7200.0) and isinstance(gene.low, float)
    assert study.budget.wall_time_s == 60.0 and study.reference_point == {"energy_kwh": 2.0, "mean_bsld": 3.0}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("- name: a\n- seeds: 2\n", "expected a mapping of keys (name, base, search, ...), got a list"),
        # a whole document that is a string may be any file (a token, a password): never echoed
        ("just a string\n", "expected a mapping of keys (name, base, search, ...), got a string"),
    ],
)
def test_study_that_is_not_a_mapping(tmp_path: Path, text: str, expected: str) -> None:
    p = tmp_path / "study.yaml"
    p.write_text(text)
    with pytest.raises(UserError) as info:
        load_study(p)
    assert str(info.value) == f"{p}: {expected}"


@pytest.mark.parametrize(
    "base, expected",
    [
        ("nonexist_cfg.yaml", "base: {dir}/nonexist_cfg.yaml: file not found"),
        (".", "base: {dir}: is a directory, expected a YAML file"),
    ],
)
def test_missing_base_file_names_the_study_and_the_key(tmp_path: Path, base: str, expected: str) -> None:
    msg = _error(tmp_path, study_dict(base=base))
    assert msg == f"{tmp_path / 's.yaml'}: " + expected.format(dir=tmp_path)


def _study_text() -> str:
    return yaml.safe_dump(study_dict(), sort_keys=False, default_flow_style=None, width=200)


def test_duplicate_key_in_a_study_names_the_line(tmp_path: Path) -> None:
    lines = _study_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("seed: "))
    lines.insert(at + 1, "seed: 2")
    p = tmp_path / "study.yaml"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError) as info:
        load_study(p)
    assert str(info.value) == f"{p}:{at + 2}: duplicate key 'seed' (first on line {at + 1})"


def test_unclosed_bracket_in_a_study_names_the_line_where_it_opened(tmp_path: Path) -> None:
    lines = _study_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("objectives: "))
    assert lines[at] == "objectives: [energy_kwh, mean_bsld]"
    lines[at] = "objectives: [energy_kwh, mean_bsld"
    p = tmp_path / "study.yaml"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError) as info:
        load_study(p)
    assert str(info.value).startswith(f"{p}:{at + 1}-{at + 2}: invalid YAML: while parsing a flow sequence (line {at + 1}):")


def test_exponent_notation_is_a_number_in_a_study(tmp_path: Path) -> None:
    text = _study_text()
    assert "budget: {generations: 10}\n" in text
    p = tmp_path / "study.yaml"
    p.write_text(text.replace("budget: {generations: 10}\n", "budget: {wall_time_s: 1e4}\n"))
    assert load_study(p).budget.wall_time_s == 10000.0
