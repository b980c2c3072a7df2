"""Slurm hostlist expressions: `node[001-096,100]`, `a[1-2]b[3-4]`, `n1,gpu[1-2]`.

Hand-written: the `python-hostlist` package does this too, but it is one more dependency for
forty lines, and we need errors that name the slurm.conf line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from paretosched.sim.readers.platform import MAX_NODES

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _split_top(expr: str) -> Iterator[str]:
    """The parts between commas outside brackets (lazily: a list of millions of parts is counted, not built)."""
    depth, start = 0, 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in {_short(expr)!r}")
        elif ch == "," and depth == 0:
            part = expr[start:i].strip()
            if part:
                yield part
            start = i + 1
    if depth:
        raise ValueError(f"unclosed '[' in {_short(expr)!r}")
    part = expr[start:].strip()
    if part:
        yield part


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:50] + f"... ({len(text)} characters)"


def _ranges(name: str) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """(text before a bracket, its ranges (low, high) as written) for each bracket of `name`, then the
    tail with no ranges; ValueError on a malformed one."""
    rest = name
    while True:
        i = rest.find("[")
        if i < 0:
            if "]" in rest:
                raise ValueError(f"unbalanced ']' in {_short(name)!r}")
            yield rest, []
            return
        j = rest.find("]", i)
        if j < 0:
            raise ValueError(f"unclosed '[' in {_short(name)!r}")
        ranges = []
        for part in rest[i + 1:j].split(","):
            m = _RANGE.match(part.strip())
            if not m:
                raise ValueError(f"bad range {part!r} in {_short(name)!r} (expected N or N-M)")
            lo, hi = m.group(1), m.group(2) or m.group(1)
            if int(hi) < int(lo):
                raise ValueError(f"range {part!r} in {_short(name)!r} goes down")
            ranges.append((lo, hi))
        yield rest[:i], ranges
        rest = rest[j + 1:]


def _count_one(name: str) -> int:
    n = 1
    for _, ranges in _ranges(name):
        if ranges:
            n *= sum(int(hi) - int(lo) + 1 for lo, hi in ranges)
        if n > MAX_NODES:
            break
    return n


def _expand_one(name: str) -> list[str]:
    out = [""]
    for head, ranges in _ranges(name):
        if not ranges:
            out = [f"{o}{head}" for o in out]
            continue
        values = []
        for lo, hi in ranges:
            width = len(lo) if lo.startswith("0") else 0  # Slurm pads to the width of a zero-padded low bound
            values.extend(str(k).zfill(width) for k in range(int(lo), int(hi) + 1))
        out = [f"{o}{head}{v}" for o in out for v in values]
    return out


def count(expr: str) -> int:
    """How many hosts a hostlist expression names, without naming them (stops past MAX_NODES)."""
    total = 0
    for part in _split_top(expr):
        total += _count_one(part)
        if total > MAX_NODES:
            break
    return total


def expand(expr: str) -> list[str]:
    """Host names of a hostlist expression, in order; ValueError on a malformed one, or one naming more
    than MAX_NODES hosts (counted first: `n1,n2,...` of 3 million parts took 48 s and 507 MB to expand)."""
    if count(expr) > MAX_NODES:
        raise ValueError(f"{_short(expr)!r} names more than {MAX_NODES} hosts (the largest platform the twin "
                         "simulates)")
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
