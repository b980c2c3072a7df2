"""Slurm node `Weight` values for the `slurm` kind's node orders (lowest Weight is allocated first).

An order ranks nodes by one key of their hardware; nodes with equal keys share a Weight, and
Weights are 1, 2, ... in preference order, so export writes them and import reads the order back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

NODE_ORDERS = ("platform", "fastest_first", "lowest_power_first", "efficiency_first")


def _node_stats(platform: Any) -> list[tuple[float, float]]:
    """(peak GFLOP/s per core, full power W per core) of each node, at nominal frequency."""
    out = []
    for node in platform.nodes:
        procs = [platform.procs[i] for i in node.procs]
        cores = sum(p.cores for p in procs)
        gflops = sum(p.cores * p.gflops_per_core for p in procs)
        watts = sum(p.power_w for p in procs)
        out.append((gflops / cores, watts / cores))
    return out


_KEYS: dict[str, Callable[[float, float], float]] = {
    "platform": lambda speed, watts: 0.0,
    "fastest_first": lambda speed, watts: -speed,
    "lowest_power_first": lambda speed, watts: watts,
    "efficiency_first": lambda speed, watts: -(speed / watts) if watts > 0 else float("-inf"),
}


def node_weights(platform: Any, order: str) -> list[int]:
    """Weight per node (platform order) for a node order."""
    key = _KEYS[order]
    keys = [round(key(s, w), 9) for s, w in _node_stats(platform)]  # rounding: equal hardware, equal Weight
    rank = {k: i + 1 for i, k in enumerate(sorted(set(keys)))}
    return [rank[k] for k in keys]


def order_of_weights(platform: Any, weights: list[int]) -> str | None:
    """The node order whose Weights rank the nodes as `weights` do, or None."""
    for order in NODE_ORDERS:
        mine = node_weights(platform, order)
        if all((a < b) == (c < d) and (a == b) == (c == d)
               for a, c in zip(mine, weights) for b, d in zip(mine, weights)):
            return order
    return None
