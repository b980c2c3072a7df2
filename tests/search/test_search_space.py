"""Genome decoding: log genes, choices by index, bool values, every decoded config validates."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.config import config_from_dict
from paretosched.search.analytic import study_dict
from paretosched.search.problem import build_algorithm
from paretosched.search.space import SearchSpace
from paretosched.search.options import AlgorithmSpec
from paretosched.search.study import load_study

import yaml
import pytest


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory) -> SearchSpace:
    data = study_dict(search={
        "scheduler.freq": {"type": "float", "low": 0.1, "high": 1.0},
        "scheduler.power_off_idle_s": {"type": "float", "low": 1.0, "high": 10000.0, "log": True},
        "scheduler.min_nodes_on": {"type": "int", "low": 1, "high": 64, "log": True},
        "scheduler.boot_s": {"type": "int", "low": 0, "high": 300},
        "scheduler.job_policy": {"type": "choice", "values": ["first", "shortest"]},
        "scheduler.bw_cap": {"type": "choice", "values": [None, 0.8, 1]},
        "scheduler.backfilling": {"type": "bool", "values": ["none", "easy"]},
    })
    p = Path(tmp_path_factory.mktemp("space")) / "s.yaml"
    p.write_text(yaml.safe_dump(data))
    return SearchSpace(load_study(p))


def test_pymoo_variables_use_log_space_and_indices(space: SearchSpace) -> None:
    v = space.pymoo_vars()
    assert v["scheduler.power_off_idle_s"].bounds == (0.0, math.log(10000.0))
    assert v["scheduler.min_nodes_on"].bounds == (0.0, math.log(64))  # log int -> Real in log space
    assert type(v["scheduler.min_nodes_on"]).__name__ == "Real"
    assert type(v["scheduler.boot_s"]).__name__ == "Integer"
    assert v["scheduler.bw_cap"].options == [0, 1, 2]  # indices keep [None, 0.8, 1] exact


def test_decode_examples(space: SearchSpace) -> None:
    x = {"scheduler.freq": 0.5, "scheduler.power_off_idle_s": math.log(100.0),
         "scheduler.min_nodes_on": math.log(7.4), "scheduler.boot_s": np.int64(30),
         "scheduler.job_policy": 1, "scheduler.bw_cap": 0, "scheduler.backfilling": np.True_}
    g = space.decode(x)
    assert g == {"scheduler.freq": 0.5, "scheduler.power_off_idle_s": pytest.approx(100.0),
                 "scheduler.min_nodes_on": 7, "scheduler.boot_s": 30, "scheduler.job_policy": "shortest",
                 "scheduler.bw_cap": None, "scheduler.backfilling": "easy"}
    assert type(g["scheduler.min_nodes_on"]) is int and type(g["scheduler.boot_s"]) is int
    cfg = space.config(g)
    assert cfg["scheduler"]["bw_cap"] is None and cfg["scheduler"]["job_policy"] == "shortest"
    assert space.base["scheduler"]["job_policy"] == "first"  # base untouched
    raw = space.raw(x)
    assert raw["scheduler.backfilling"] is True and raw["scheduler.job_policy"] == 1


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_sampled_genomes_decode_within_bounds_and_validate(space: SearchSpace, seed: int) -> None:
    algo = build_algorithm(space, 2, AlgorithmSpec(pop_size=8), seed)
    for x in algo.ask().get("X"):
        g = space.decode(x)
        assert 0.1 <= g["scheduler.freq"] <= 1.0
        assert 1.0 <= g["scheduler.power_off_idle_s"] <= 10000.0
        assert 1 <= g["scheduler.min_nodes_on"] <= 64
        assert 0 <= g["scheduler.boot_s"] <= 300
        assert g["scheduler.bw_cap"] in (None, 0.8, 1)
        config_from_dict(space.config(g))


def test_log_gene_samples_spread_over_orders_of_magnitude(space: SearchSpace) -> None:
    algo = build_algorithm(space, 2, AlgorithmSpec(pop_size=200), 3)
    vals = np.array([space.decode(x)["scheduler.power_off_idle_s"] for x in algo.ask().get("X")])
    # uniform in log space: about a quarter of the samples per decade of [1, 1e4]
    per_decade = np.histogram(np.log10(vals), bins=[0, 1, 2, 3, 4])[0]
    assert per_decade.min() >= 25, per_decade
