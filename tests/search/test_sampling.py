"""Generation 0's covering design (search/sampling.py): what it covers, and that it is seeded."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
from pymoo.core.problem import Problem
from pymoo.core.variable import Binary, Choice, Integer, Real

from paretosched.search.sampling import CoveringSampling, covering_rows

from conftest import log_json, run_quiet, write_study


def _pairs(rows: np.ndarray, i: int, j: int) -> set[tuple[int, int]]:
    return {(int(a), int(b)) for a, b in rows[:, [i, j]]}


def test_the_whole_product_when_it_fits() -> None:
    rows = covering_rows([6, 6, 2], 80, np.random.default_rng(3))
    assert {tuple(r) for r in rows[:72]} == set(itertools.product(range(6), range(6), range(2)))


def test_every_value_evenly_and_every_pair_as_soon_as_the_sample_holds_them() -> None:
    levels = [6, 6, 2, 5, 4]  # the classic genome's policies, EASY, switch-off, bandwidth cap: 1,440 combinations
    for n in (20, 40):
        rows = covering_rows(levels, n, np.random.default_rng(n))
        for g, k in enumerate(levels):
            counts = np.bincount(rows[:, g], minlength=k)
            assert counts.max() - counts.min() <= 2, (n, g, counts)
        if n >= 36:
            assert len(_pairs(rows, 0, 1)) == 36  # every policy pair
        assert len({tuple(r) for r in rows}) == n  # no combination twice


def test_a_random_draw_covers_fewer_pairs() -> None:
    # 20 rows of two 6-valued genes: the design gives 20 distinct policy pairs; a uniform random
    # draw of 20 rows gives ~15.5 on average (36 * (1 - (35/36)**20))
    assert len(_pairs(covering_rows([6, 6], 20, np.random.default_rng(0)), 0, 1)) == 20


def test_numeric_genes_are_a_latin_hypercube_and_the_design_is_seeded() -> None:
    problem = Problem(vars={"a": Choice(options=[0, 1, 2]), "b": Binary(), "x": Real(bounds=(0.5, 1.0)),
                            "k": Integer(bounds=(1, 4))}, n_obj=2)
    X = CoveringSampling()._do(problem, 8, random_state=np.random.default_rng(7))
    again = CoveringSampling()._do(problem, 8, random_state=np.random.default_rng(7))
    assert X == again
    strata = sorted(int((x["x"] - 0.5) / 0.5 * 8) for x in X)
    assert strata == list(range(8))  # one sample per eighth of the range
    assert sorted(x["k"] for x in X) == [1, 1, 2, 2, 3, 3, 4, 4]
    assert {type(x["b"]) for x in X} == {bool} and {x["a"] for x in X} == {0, 1, 2}
    first = [{"a": 2, "b": True, "x": 0.75, "k": 3}]
    started = CoveringSampling(first)._do(problem, 8, random_state=np.random.default_rng(7))
    assert started[0] == first[0] and started[1:] == X[1:]


def test_generation_0_of_a_run_is_the_design(tmp_path: Path) -> None:
    study = write_study(tmp_path, budget={"generations": 1}, algorithm={"pop_size": 12})
    rows = [r for r in log_json(run_quiet(study, tmp_path / "run")) if r["kind"] == "search"]
    policies = [r["genome"]["scheduler.job_policy"] for r in rows]
    assert len(rows) == 12 and max(policies.count(p) for p in set(policies)) - min(
        policies.count(p) for p in set(policies)) <= 1
