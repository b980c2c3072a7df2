"""Slurm hostlist expressions: `node[001-096,100]`, `a[1-2]b[3-4]`, `n1,gpu[1-2]`.

Hand-written: the `python-hostlist` package does this too, but it is one more dependency for
forty lines, and we need errors that name the slurm.conf line.
"""

from __future__ import annotations

import re

from paretosched.sim.platform import MAX_NODES

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _split_top(expr: str) -> list[str]:
    """Split on commas outside brackets."""
    out, depth, cur = [], 0, []
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in {expr!r}")
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise ValueError(f"unclosed '[' in {expr!r}")
    out.append("".join(cur))
    return [s for s in (p.strip() for p in out) if s]


def _expand_one(name: str) -> list[str]:
    i = name.find("[")
    if i < 0:
        if "]" in name:
            raise ValueError(f"unbalanced ']' in {name!r}")
        return [name]
    j = name.find("]", i)
    if j < 0:
        raise ValueError(f"unclosed '[' in {name!r}")
    head, body, tail = name[:i], name[i + 1:j], name[j + 1:]
    values: list[str] = []
    for part in body.split(","):
        m = _RANGE.match(part.strip())
        if not m:
            raise ValueError(f"bad range {part!r} in {name!r} (expected N or N-M)")
        lo, hi = m.group(1), m.group(2) or m.group(1)
        if int(hi) < int(lo):
            raise ValueError(f"range {part!r} in {name!r} goes down")
        width = len(lo) if lo.startswith("0") else 0  # Slurm pads to the width of a zero-padded low bound
        if len(values) + int(hi) - int(lo) + 1 > MAX_NODES:  # `n[1-99999999999]` would never finish
            raise ValueError(f"{name!r} names more than {MAX_NODES} hosts (the largest platform the twin simulates)")
        values.extend(str(k).zfill(width) for k in range(int(lo), int(hi) + 1))
    rest = _expand_one(tail)
    if len(values) * len(rest) > MAX_NODES:
        raise ValueError(f"{name!r} names more than {MAX_NODES} hosts (the largest platform the twin simulates)")
    return [f"{head}{v}{r}" for v in values for r in rest]


def expand(expr: str) -> list[str]:
    """Host names of a hostlist expression, in order; ValueError on a malformed one."""
    names: list[str] = []
    for part in _split_top(expr):
        names.extend(_expand_one(part))
    if not names:
        raise ValueError(f"empty hostlist {expr!r}")
    return names


_TAIL_NUM = re.compile(r"^(.*?)(\d+)$")


def compress(names: list[str]) -> str:
    """A hostlist expression for `names` (runs of consecutive numbers with one prefix and width)."""
    groups: dict[tuple[str, int], list[int]] = {}
    order: list[tuple[str, int] | str] = []
    for n in names:
        m = _TAIL_NUM.match(n)
        if not m:
            order.append(n)
            continue
        digits = m.group(2)
        key = (m.group(1), len(digits) if digits.startswith("0") else 0)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(digits))
    parts = []
    for key in order:
        if isinstance(key, str):
            parts.append(key)
            continue
        prefix, width = key
        nums = sorted(set(groups[key]))
        runs, start, prev = [], nums[0], nums[0]
        for k in nums[1:] + [None]:
            if k is not None and k == prev + 1:
                prev = k
                continue
            lo, hi = str(start).zfill(width), str(prev).zfill(width)
            runs.append(lo if start == prev else f"{lo}-{hi}")
            if k is not None:
                start = prev = k
        if len(nums) == 1:
            parts.append(f"{prefix}{runs[0]}")
        else:
            parts.append(f"{prefix}[{','.join(runs)}]")
    return ",".join(parts)
