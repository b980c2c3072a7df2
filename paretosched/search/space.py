"""Genes <-> scheduler config: the pymoo variables of a study and how a genome decodes.

A genome is what pymoo holds (`x`: gene path -> raw value); decoding turns it into user
values (`genome`: gene path -> value the config gets) and a complete config dict.
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
import json
import math
from typing import Any

from pymoo.core.variable import Binary, Choice, Integer, Real, Variable

from paretosched.config import set_path
from paretosched.search.genes import BoolGene, ChoiceGene, FloatGene, GeneSpec, IntGene
from paretosched.search.study import Study


def canonical(obj: Any) -> str:
    """Canonical JSON (sorted keys, no spaces): the identity of genomes and configs."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


class SearchSpace:
    """The genes of a resolved study, in study order."""

    def __init__(self, study: Study) -> None:
        assert isinstance(study.base, dict), "resolve the study first (load_study)"
        self.base: dict[str, Any] = study.base
        self.genes: dict[str, GeneSpec] = dict(study.search)

    @property
    def paths(self) -> list[str]:
        return list(self.genes)

    def pymoo_vars(self) -> dict[str, Variable]:
        """One pymoo variable per gene, named by its dotted path."""
        out: dict[str, Variable] = {}
        for path, g in self.genes.items():
            if isinstance(g, (FloatGene, IntGene)) and g.log:
                out[path] = Real(bounds=(math.log(g.low), math.log(g.high)))
            elif isinstance(g, FloatGene):
                out[path] = Real(bounds=(g.low, g.high))
            elif isinstance(g, IntGene):
                out[path] = Integer(bounds=(g.low, g.high))
            elif isinstance(g, BoolGene):
                out[path] = Binary()
            else:
                out[path] = Choice(options=list(range(len(g.values))))
        return out

    def raw(self, x: dict[str, Any]) -> dict[str, Any]:
        """pymoo's values as plain JSON types (numpy scalars -> float/int/bool)."""
        out: dict[str, Any] = {}
        for path, g in self.genes.items():
            v = x[path]
            if isinstance(g, FloatGene) or (isinstance(g, IntGene) and g.log):
                out[path] = float(v)
            elif isinstance(g, BoolGene):
                out[path] = bool(v)
            else:
                out[path] = int(round(float(v)))
        return out

    def decode(self, x: dict[str, Any]) -> dict[str, Any]:
        """Raw gene values -> the values written into the config."""
        out: dict[str, Any] = {}
        for path, g in self.genes.items():
            v = x[path]
            if isinstance(g, FloatGene):
                val = math.exp(float(v)) if g.log else float(v)
                out[path] = min(max(val, g.low), g.high)  # exp(ln(high)) may overshoot by an ulp
            elif isinstance(g, IntGene):
                val = math.exp(float(v)) if g.log else float(v)
                out[path] = int(min(max(round(val), g.low), g.high))
            elif isinstance(g, BoolGene):
                bit = bool(v)
                out[path] = g.values[int(bit)] if g.values is not None else bit
            else:
                out[path] = g.values[int(round(float(v)))]
        return out

    def config(self, genome: dict[str, Any]) -> dict[str, Any]:
        """The complete config dict for decoded gene values (base with the genes set)."""
        cfg = copy.deepcopy(self.base)
        for path, value in genome.items():
            set_path(cfg, path, value)
        return cfg
