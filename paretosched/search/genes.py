"""The genes of a study: their models, their validation against the base config, their extremes.

A gene is a dotted path of the scheduler config (`scheduler.power_off_idle_s`) and the range
the search may give it: float, int, bool or choice (docs/search.md).
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, field_validator, model_validator

from paretosched.config import config_from_dict, set_path
from paretosched.errors import UserError
from paretosched.yamlio import register_union_tags


class StrictModel(BaseModel):
    """Base of the study's sections and genes."""

    # strict: no silent coercion of what the user wrote ("2" or true for a number, "no" for a
    # bool); an int is still accepted where a float is expected.
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class _RangeGene(StrictModel):
    """The bounds check of the numeric genes (the subclasses give type, low and high their types)."""

    type: str
    low: Any
    high: Any
    log: bool = False

    @model_validator(mode="after")
    def _bounds(self) -> _RangeGene:
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) > high ({self.high})")
        if self.log and self.low <= 0:
            raise ValueError(f"log scale needs low > 0 (got {self.low})")
        return self


class FloatGene(_RangeGene):
    """A real-valued gene; `log: true` searches uniformly in log space (low must be > 0)."""

    type: Literal["float"] = "float"
    low: float
    high: float


class IntGene(_RangeGene):
    """An integer gene (inclusive bounds); `log: true` searches in log space and rounds."""

    type: Literal["int"] = "int"
    low: int
    high: int


class BoolGene(StrictModel):
    """A bit. Decodes to false/true, or to `values[0]`/`values[1]` (e.g. [none, easy])."""

    type: Literal["bool"] = "bool"
    values: list[Any] | None = None

    @field_validator("values")
    @classmethod
    def _two(cls, v: list[Any] | None) -> list[Any] | None:
        if v is not None and (len(v) != 2 or v[0] == v[1]):
            raise ValueError("a bool gene's values must be two different values [off, on]")
        return v


class ChoiceGene(StrictModel):
    """One of a list of values (strings, numbers, null)."""

    type: Literal["choice"] = "choice"
    values: list[Any]

    @field_validator("values")
    @classmethod
    def _nonempty_unique(cls, v: list[Any]) -> list[Any]:
        if not v:
            raise ValueError("a choice gene needs at least one value")
        if len({repr(x) for x in v}) != len(v):
            raise ValueError("choice values must be distinct")
        return v


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


def gene_extremes(gene: GeneSpec) -> list[Any]:
    """Values that cover a gene's range (bounds, every choice): validated when a study loads."""
    if isinstance(gene, (FloatGene, IntGene)):
        return [gene.low, gene.high]
    if isinstance(gene, BoolGene):
        return list(gene.values) if gene.values is not None else [False, True]
    return list(gene.values)


def check_gene(base: dict[str, Any], gene_path: str, gene: GeneSpec, src: str) -> None:
    """The dotted path must name a config field, and every extreme value must validate."""
    parts = gene_path.split(".")
    node: Any = base
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if not isinstance(node, dict) or (part not in node and not (last and _is_free_dict(node))):
            raise UserError(f"{src}: search.{gene_path}: unknown config path (no key {'.'.join(parts[:i + 1])!r} in the scheduler config)")
        node = node.get(part)
    for value in gene_extremes(gene):
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
