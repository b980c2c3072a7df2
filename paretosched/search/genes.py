"""The genes of a study: what a user writes, what pymoo searches, what the config gets, what analysis fits.

A gene is a dotted path of the scheduler config (`scheduler.power_off_idle_s`) and the range
the search may give it: float, int, bool or choice (docs/search.md). Each gene class is the one
place that knows its type's representations, so no caller switches on the gene type:
- `pymoo_var()`: its pymoo variable; `raw(v)`: pymoo's value as plain JSON; `decode(v)`: the
  value written into the config (`search/space.py` maps these over a genome);
- `extremes()`: values covering its range, validated against the base config when a study loads;
- `design_columns(path, values)`: its features for the drivers' Lasso (`analysis/drivers.py`),
  on Kell et al.'s 1-100 scale over the study's range (log genes in log space; one-hot for
  choices, one column for a bool).
Representation choices (they matter for the search operators):
- float/int with `log: true` -> pymoo `Real` over [ln low, ln high], decoded by exp (ints
  rounded), so SBX and polynomial mutation act on orders of magnitude;
- int -> pymoo `Integer` (SBX + rounding repair);
- bool -> pymoo `Binary` (uniform crossover, bit flip);
- choice -> pymoo `Choice` over value *indices*, because numpy would coerce mixed-type option
  lists (e.g. [null, 60, 600]) into one dtype; indices keep the values exact.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Discriminator, Tag, field_validator, model_validator
from pymoo.core.variable import Binary, Choice, Integer, Real, Variable

from paretosched.config import config_from_dict, set_path
from paretosched.errors import UserError
from paretosched.yamlio import did_you_mean, register_union_tags


class StrictModel(BaseModel):
    """Base of the study's sections and genes."""

    # strict: no silent coercion of what the user wrote ("2" or true for a number, "no" for a
    # bool); an int is still accepted where a float is expected.
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


# The magnitudes a numeric gene's bounds may have. pymoo computes high - low and ratios of
# bounds, and the twin divides and multiplies by the values (a speed factor of 1e-300 makes a job
# last 1e303 s and its energy inf); no config field has a meaning beyond these, and the config
# schema's own bounds (checked on the extremes by `check_gene`) are usually tighter still.
GENE_TINY = 1e-12
GENE_HUGE = 1e15


def _in_range(key: str, v: Any) -> None:
    """A ValueError naming `key` when the number `v` is beyond GENE_TINY..GENE_HUGE in magnitude."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v != 0 and not GENE_TINY <= abs(v) <= GENE_HUGE:
        raise ValueError(f"{key} ({v}): a gene's number is 0 or between {GENE_TINY:g} and {GENE_HUGE:g} in "
                         "magnitude (beyond, the search's arithmetic and the twin's overflow)")


class _RangeGene(StrictModel):
    """The bounds check and the analysis encoding of the numeric genes (the subclasses give type,
    low and high their types, and their pymoo representation)."""

    numeric: ClassVar[bool] = True
    type: str
    low: Any
    high: Any
    log: bool = False

    @model_validator(mode="after")
    def _bounds(self) -> _RangeGene:
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) > high ({self.high})")
        _in_range("low", self.low)
        _in_range("high", self.high)
        if self.log and self.low <= 0:
            raise ValueError(f"log scale needs low > 0 (got {self.low})")
        return self

    def extremes(self) -> list[Any]:
        """Values that cover the range (the bounds)."""
        return [self.low, self.high]

    def _unlog(self, v: Any) -> float:
        return math.exp(float(v)) if self.log else float(v)

    def design_columns(self, path: str, values: Sequence[Any]) -> dict[str, np.ndarray]:
        """One feature: the value on 1-100 over the study's bounds (in log space for a log gene)."""
        v = np.array([_number(x) for x in values], dtype=float)
        lo, hi = float(self.low), float(self.high)
        if self.log:
            v, lo, hi = np.log(v), math.log(lo), math.log(hi)
        return {path: _scale_1_100(v, lo, hi)}


class FloatGene(_RangeGene):
    """A real-valued gene; `log: true` searches uniformly in log space (low must be > 0)."""

    type: Literal["float"] = "float"
    low: float
    high: float

    def pymoo_var(self) -> Variable:
        return Real(bounds=(math.log(self.low), math.log(self.high)) if self.log else (self.low, self.high))

    def raw(self, v: Any) -> float:
        """pymoo's value as a plain JSON number."""
        return float(v)

    def decode(self, v: Any) -> float:
        """pymoo's value -> the value written into the config."""
        return min(max(self._unlog(v), self.low), self.high)  # exp(ln(high)) may overshoot by an ulp

    def encode(self, value: Any) -> float | None:
        """A config value -> pymoo's value; None when the gene cannot hold it. On a log scale the
        value comes back as exp(log(v)), for most round values an ulp away (100 -> 100.00000000000004):
        no float logarithm decodes to them exactly."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not self.low <= value <= self.high:
            return None
        return math.log(value) if self.log else float(value)


class IntGene(_RangeGene):
    """An integer gene (inclusive bounds); `log: true` searches in log space and rounds."""

    type: Literal["int"] = "int"
    low: int
    high: int

    def pymoo_var(self) -> Variable:
        if self.log:
            return Real(bounds=(math.log(self.low), math.log(self.high)))
        return Integer(bounds=(self.low, self.high))

    def raw(self, v: Any) -> float | int:
        """pymoo's value as a plain JSON number (a log gene's is real: its logarithm)."""
        return float(v) if self.log else int(round(float(v)))

    def decode(self, v: Any) -> int:
        """pymoo's value -> the value written into the config."""
        return int(min(max(round(self._unlog(v)), self.low), self.high))

    def encode(self, value: Any) -> float | int | None:
        """A config value -> pymoo's value; None when the gene cannot hold it (a whole float such
        as 600.0, what a float config field holds, is the integer 600)."""
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not self.low <= value <= self.high:
            return None
        return math.log(value) if self.log else value


class BoolGene(StrictModel):
    """A bit. Decodes to false/true, or to `values[0]`/`values[1]` (e.g. [none, easy])."""

    numeric: ClassVar[bool] = False
    type: Literal["bool"] = "bool"
    values: list[Any] | None = None

    @field_validator("values")
    @classmethod
    def _two(cls, v: list[Any] | None) -> list[Any] | None:
        if v is not None and (len(v) != 2 or v[0] == v[1]):
            raise ValueError("a bool gene's values must be two different values [off, on]")
        for x in v or []:
            _in_range("value", x)
        return v

    def pymoo_var(self) -> Variable:
        return Binary()

    def raw(self, v: Any) -> bool:
        """pymoo's value as a plain JSON boolean."""
        return bool(v)

    def decode(self, v: Any) -> Any:
        """pymoo's bit -> the value written into the config."""
        bit = bool(v)
        return self.values[int(bit)] if self.values is not None else bit

    def encode(self, value: Any) -> bool | None:
        """A config value -> pymoo's bit; None when the gene cannot hold it."""
        k = _position(value, self.values if self.values is not None else [False, True])
        return None if k is None else bool(k)

    def extremes(self) -> list[Any]:
        """Both values."""
        return list(self.values) if self.values is not None else [False, True]

    def design_columns(self, path: str, values: Sequence[Any]) -> dict[str, np.ndarray]:
        """One feature: 100 where the gene is on, 1 where off."""
        on = self.values[1] if self.values else True
        return {path: np.where(np.array([x == on for x in values]), 100.0, 1.0)}


class ChoiceGene(StrictModel):
    """One of a list of values (strings, numbers, null)."""

    numeric: ClassVar[bool] = False
    type: Literal["choice"] = "choice"
    values: list[Any]

    @field_validator("values")
    @classmethod
    def _nonempty_unique(cls, v: list[Any]) -> list[Any]:
        if not v:
            raise ValueError("a choice gene needs at least one value")
        if len({repr(x) for x in v}) != len(v):
            raise ValueError("choice values must be distinct")
        for x in v:
            _in_range("value", x)
        return v

    def pymoo_var(self) -> Variable:
        return Choice(options=list(range(len(self.values))))

    def raw(self, v: Any) -> int:
        """pymoo's value (an index into `values`) as a plain JSON integer."""
        return int(round(float(v)))

    def decode(self, v: Any) -> Any:
        """pymoo's index -> the value written into the config."""
        return self.values[int(round(float(v)))]

    def encode(self, value: Any) -> int | None:
        """A config value -> pymoo's index; None when the gene cannot hold it."""
        return _position(value, self.values)

    def extremes(self) -> list[Any]:
        """Every value."""
        return list(self.values)

    def design_columns(self, path: str, values: Sequence[Any]) -> dict[str, np.ndarray]:
        """One-hot: a feature `path=value` per value, 100 where the gene has it, 1 elsewhere."""
        return {f"{path}={val}": np.where(np.array([same_value(x, val) for x in values]), 100.0, 1.0)
                for val in self.values}


GENE_TYPES = ("float", "int", "bool", "choice")
register_union_tags(*GENE_TYPES)


def _gene_type(value: Any) -> str | None:
    if isinstance(value, dict):
        t = value.get("type")
        return t if t in GENE_TYPES else None
    return getattr(value, "type", None)


Gene = Annotated[
    Union[Annotated[FloatGene, Tag("float")], Annotated[IntGene, Tag("int")],
          Annotated[BoolGene, Tag("bool")], Annotated[ChoiceGene, Tag("choice")]],
    Discriminator(_gene_type, custom_error_type="gene_type",
                  custom_error_message="missing or unknown gene type (expected float, int, bool or choice)"),
]


GeneSpec = FloatGene | IntGene | BoolGene | ChoiceGene


class StudyGenes(BaseModel):
    """A study's `search` section on its own (analysis reads a run's study.yaml for its genes only)."""

    model_config = ConfigDict(extra="ignore")
    search: dict[str, Gene] = {}


def check_gene(base: dict[str, Any], gene_path: str, gene: GeneSpec, src: str) -> None:
    """The dotted path must name a config field, and every extreme value must validate."""
    parts = gene_path.split(".")
    node: Any = base
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if not isinstance(node, dict) or (part not in node and not (last and _is_free_dict(node))):
            hint = did_you_mean(part, node) if isinstance(node, dict) else ""
            raise UserError(f"{src}: search.{gene_path}: unknown config path (no key {'.'.join(parts[:i + 1])!r} "
                            f"in the scheduler config){hint}")
        node = node.get(part)
    for value in gene.extremes():
        cfg = copy.deepcopy(base)
        set_path(cfg, gene_path, value)
        try:
            config_from_dict(cfg, "")
        except UserError as exc:
            detail = str(exc).removeprefix(": ")
            raise UserError(f"{src}: search.{gene_path}: value {value!r} does not fit the config ({detail})") from None


def _is_free_dict(node: dict[str, Any]) -> bool:
    # a free-form mapping of the config (e.g. scheduler.freq_by_type) has no fixed keys; a
    # config section always has its fields present in the dump. Validation catches the rest.
    return not node


def _scale_1_100(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return 1.0 + 99.0 * (v - lo) / (hi - lo) if hi > lo else np.full_like(v, 1.0)


def _number(x: Any) -> float:
    """A logged numeric gene value as a float; NaN for a missing one (null, NaN)."""
    return float(x) if isinstance(x, (int, float, np.number)) else math.nan


def _position(value: Any, options: Sequence[Any]) -> int | None:
    """The index of the first option `value` is (by `same_value`), or None."""
    return next((k for k, o in enumerate(options) if same_value(value, o)), None)


def same_value(a: object, b: object) -> bool:
    """Does logged gene value `a` equal choice value `b`?

    The log comes back through JSON and pandas: an int choice may read as a float (60 -> 60.0)
    and null as NaN. Numbers compare by value, null matches None/NaN, but booleans stay apart
    from numbers (1 == True in Python, and a choice of [1, true] must keep them apart).
    """
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return a is None or (isinstance(a, (float, np.floating)) and math.isnan(a))
    a_bool, b_bool = isinstance(a, (bool, np.bool_)), isinstance(b, (bool, np.bool_))
    if a_bool or b_bool:
        return a_bool and b_bool and bool(a) == bool(b)
    if isinstance(a, (int, float, np.integer, np.floating)) and isinstance(b, (int, float, np.integer, np.floating)):
        return float(a) == float(b)
    return type(a) is type(b) and a == b
