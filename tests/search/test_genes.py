"""Each gene class owns its representations: pymoo variable, raw value, decoding, extremes, analysis columns."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError
from pymoo.core.variable import Binary, Choice, Integer, Real

from paretosched.search.genes import BoolGene, ChoiceGene, FloatGene, IntGene, StudyGenes, same_value


def test_float_gene_in_log_space_decodes_by_exp_and_stays_within_its_bounds() -> None:
    g = FloatGene(low=1.0, high=1000.0, log=True)
    var = g.pymoo_var()
    assert isinstance(var, Real) and var.bounds == (0.0, math.log(1000.0))
    assert g.decode(math.log(10.0)) == pytest.approx(10.0)
    assert g.decode(math.log(1000.0) + 1e-12) == 1000.0  # exp(ln(high)) may overshoot: clamped
    assert g.raw(np.float64(2.5)) == 2.5 and type(g.raw(np.float64(2.5))) is float
    assert g.extremes() == [1.0, 1000.0] and g.numeric


def test_int_gene_rounds_and_a_log_int_gene_keeps_its_raw_value_real() -> None:
    lin, log = IntGene(low=0, high=300), IntGene(low=1, high=64, log=True)
    assert isinstance(lin.pymoo_var(), Integer) and lin.pymoo_var().bounds == (0, 300)
    assert isinstance(log.pymoo_var(), Real) and log.pymoo_var().bounds == (0.0, math.log(64))
    assert lin.raw(np.float64(41.6)) == 42 and type(lin.raw(41.6)) is int
    assert log.raw(np.float64(1.5)) == 1.5 and type(log.raw(1.5)) is float
    assert lin.decode(41.6) == 42 and log.decode(math.log(8.2)) == 8 and log.decode(math.log(64) + 1) == 64


def test_bool_and_choice_genes_decode_to_the_values_the_study_wrote() -> None:
    b, c = BoolGene(values=["none", "easy"]), ChoiceGene(values=[None, 60, 600])
    assert isinstance(b.pymoo_var(), Binary) and [b.decode(np.bool_(x)) for x in (0, 1)] == ["none", "easy"]
    assert BoolGene().decode(np.bool_(True)) is True and BoolGene().extremes() == [False, True]
    var = c.pymoo_var()
    assert isinstance(var, Choice) and list(var.options) == [0, 1, 2]
    assert [c.decode(x) for x in (0, 1.0, np.int64(2))] == [None, 60, 600] and c.raw(np.int64(2)) == 2
    assert c.extremes() == [None, 60, 600] and not c.numeric and not b.numeric


def test_design_columns_scale_to_1_100_over_the_study_range_and_one_hot_the_choices() -> None:
    lin = FloatGene(low=0.5, high=1.0).design_columns("f", [0.5, 0.75, 1.0, None])
    assert list(lin) == ["f"] and lin["f"][:3].tolist() == [1.0, 50.5, 100.0] and math.isnan(lin["f"][3])
    log = FloatGene(low=1.0, high=100.0, log=True).design_columns("p", [1.0, 10.0, 100.0])
    assert log["p"].tolist() == pytest.approx([1.0, 50.5, 100.0])
    assert IntGene(low=3, high=3).design_columns("n", [3, 3])["n"].tolist() == [1.0, 1.0]  # no range: constant
    assert BoolGene(values=["none", "easy"]).design_columns("b", ["easy", "none"])["b"].tolist() == [100.0, 1.0]
    one_hot = ChoiceGene(values=[None, 60, True]).design_columns("c", [60.0, math.nan, True, 1])
    assert {k: v.tolist() for k, v in one_hot.items()} == {
        "c=None": [1.0, 100.0, 1.0, 1.0], "c=60": [100.0, 1.0, 1.0, 1.0], "c=True": [1.0, 1.0, 100.0, 1.0]}


def test_same_value_keeps_booleans_apart_from_numbers_and_matches_null_to_nan() -> None:
    assert same_value(60.0, 60) and same_value(math.nan, None) and same_value(None, None)
    assert not same_value(1, True) and not same_value(True, 1) and not same_value("60", 60)


def test_a_search_section_validates_on_its_own_with_the_studys_messages() -> None:
    genes = StudyGenes.model_validate({"name": "x", "search": {"a.b": {"type": "int", "low": 1, "high": 4}}}).search
    assert genes == {"a.b": IntGene(low=1, high=4)}
    with pytest.raises(ValidationError, match="low \\(5\\) > high \\(4\\)"):
        StudyGenes.model_validate({"search": {"a.b": {"type": "int", "low": 5, "high": 4}}})
