"""Axis titles with units for the twin's metric names (energy_kwh -> "energy (kWh)")."""

from __future__ import annotations

import re

# longest suffix first: "_kwh" before "_w"
_UNITS = [("_kwh", "kWh"), ("_gflops", "GFLOP/s"), ("_j", "J"), ("_s", "s"), ("_w", "W")]
_WORDS = {"bsld": "bounded slowdown", "n": "number of", "p95": "95th percentile"}


def metric_title(metric: str) -> str:
    """A readable title with the unit in brackets; '(-)' for dimensionless metrics."""
    name, unit = metric, "-"
    for suffix, u in _UNITS:
        if name.endswith(suffix) and len(name) > len(suffix):
            name, unit = name[: -len(suffix)], u
            break
    observed = name.endswith("_observed")
    if observed:
        name = name[: -len("_observed")]
    words = [_WORDS.get(w, w) for w in re.split(r"_+", name) if w]
    text = " ".join(words)
    if observed:
        text += ", observed run"
    if metric.startswith("utilisation"):
        unit = "0-1"
    return f"{text} ({unit})"
