"""Genes <-> scheduler config: the pymoo variables of a study and how a genome decodes.

A genome is what pymoo holds (`x`: gene path -> raw value); decoding turns it into user
values (`genome`: gene path -> value the config gets) and a complete config dict. Each gene
knows its own representations (`search/genes.py`); this module maps them over the study's genes.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from pymoo.core.variable import Variable

from paretosched.config import set_path
from paretosched.search.genes import GeneSpec
from paretosched.search.study import Study, baseline_config


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
        return {path: g.pymoo_var() for path, g in self.genes.items()}

    def raw(self, x: dict[str, Any]) -> dict[str, Any]:
        """pymoo's values as plain JSON types (numpy scalars -> float/int/bool)."""
        return {path: g.raw(x[path]) for path, g in self.genes.items()}

    def decode(self, x: dict[str, Any]) -> dict[str, Any]:
        """Raw gene values -> the values written into the config."""
        return {path: g.decode(x[path]) for path, g in self.genes.items()}

    def encode(self, cfg: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        """A complete config -> (the raw genome whose config is exactly `cfg`, ""), or (None, why
        there is none: a gene cannot hold the config's value, or the config differs from the base
        outside the genes)."""
        x = {}
        for path, g in self.genes.items():
            node: Any = cfg
            for part in path.split("."):
                if not isinstance(node, dict) or part not in node:
                    return None, f"it has no {path}"
                node = node[part]
            raw = g.encode(node)
            if raw is None:
                return None, f"{path} = {node!r} is outside the gene"
            x[path] = raw
        if not _same_config(self.config(self.decode(x)), cfg):
            return None, "it differs from the base outside the genes"
        return x, ""

    def config(self, genome: dict[str, Any]) -> dict[str, Any]:
        """The complete config dict for decoded gene values (base with the genes set)."""
        cfg = copy.deepcopy(self.base)
        for path, value in genome.items():
            set_path(cfg, path, value)
        return cfg


def _same_config(a: Any, b: Any) -> bool:
    """Equal configs, numbers by value (600 == 600.0) and to 12 digits (a log gene's value
    comes back an ulp away); booleans are not numbers here."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_config(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_config(x, y) for x, y in zip(a, b))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-12)
    return type(a) is type(b) and a == b


def starting_genomes(space: SearchSpace, study: Study, notes: list[str]) -> list[dict[str, Any]]:
    """The raw genomes of `algorithm.start_from`'s configs, once each, at most a population; a
    line in `notes` for every config left out and why."""
    base: dict[str, Any] = study.base  # type: ignore[assignment]
    named = []
    if "base" in study.algorithm.start_from:
        named.append(("the base", base))
    if "baselines" in study.algorithm.start_from:
        named += [(f"baseline {n!r}", baseline_config(base, over)) for n, over in study.baselines.items()]
    out: dict[str, dict[str, Any]] = {}
    for what, cfg in named:
        x, why = space.encode(cfg)
        if x is None:
            notes.append(f"start_from: {what} left out of generation 0: {why}")
        else:
            out.setdefault(canonical(x), x)
    pop = study.algorithm.pop_size
    if len(out) > pop:
        notes.append(f"start_from: {len(out)} configs, a population of {pop}: generation 0 holds the first {pop}, "
                     "and no random genome")
    return list(out.values())[:pop]
