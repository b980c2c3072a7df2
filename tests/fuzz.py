"""Shared checks of the fuzz tests: every outcome is a real result or a one-line user error."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path
from typing import Any, Sequence

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.adv import run_cli, strict_json

# few examples in the default run (CI stays fast), many in the `slow` variant
FAST = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SLOW = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

_counter = itertools.count()


def fresh(tmp: Path, suffix: str) -> Path:
    """A new file name per example: inputs are memoised by path and mtime, which may not tick."""
    return tmp / f"f{next(_counter)}{suffix}"


# values that break assumptions: wrong types, non-finite, huge, markup, paths
JUNK = st.one_of(
    st.none(), st.booleans(), st.sampled_from([0, -1, 1, 2**31, 2**63, 10**30]),
    st.sampled_from([0.5, -0.0, 1e-300, 1e300, math.inf, -math.inf, math.nan]),
    st.sampled_from(["", " ", "x", "1e4", "nan", "<b>x</b>", "../../etc/passwd", "builtin:../x", "\x00", "é"]),
    st.just([]), st.just({}), st.lists(st.integers(-3, 3), max_size=3),
)


def check_outcome(argv: Sequence[str], tmp: Path, source: str, out_dir: Path | None = None,
                  also: Sequence[Path] = ()) -> tuple[int, Any]:
    """Run `argv`; assert exit 0 with sound JSON metrics, or exit 2 with one line naming `source`
    followed by a line number or a key. Nothing may appear in `tmp` but `out_dir` and `also`
    (a study's default cache folder, beside its run folder)."""
    before = {p for p in tmp.iterdir()}
    rc, out, err = run_cli(argv)
    after = {p for p in tmp.iterdir()} - before
    allowed = ({out_dir} if out_dir is not None else set()) | set(also)
    assert after <= allowed, (after, err)
    assert "Traceback" not in err
    if rc == 0:
        metrics = strict_json(out) if out.strip().startswith("{") else None
        if metrics is not None and "n_jobs" in metrics:
            assert metrics["n_jobs"] > 0, metrics
            assert metrics["mean_bsld"] >= 1.0, metrics  # a run of nothing reported 0.0
            assert all(v is not None and math.isfinite(v) and v >= 0 for v in metrics.values()), metrics
            # floors (issue 29): bounded slowdowns >= 1; a job runs at least 1 s and draws power
            assert all(v >= 1.0 for k, v in metrics.items() if "bsld" in k), metrics
            assert metrics["makespan_s"] >= 1.0 and metrics["energy_j"] > 0, metrics
        return rc, metrics
    assert rc == 2, (rc, err)
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("paretosched: note:")]
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("paretosched") and ": error: " in line, line  # argparse names the subcommand
    if source:
        assert source in line, (source, line)
        rest = line.split(source, 1)[1]
        # file:line, file:line-line, or file: key.path: ...
        assert re.match(r"(:\d+(-\d+)?: |: [\w.<>'\- ]+)", rest), line
    return rc, None


# numeric extremes for every float of a schema: denormals, 0 and -0, the edges of float, and around
# each field's own bounds (exactly on a bound must give sound metrics; just past it, a one-line error)
EXTREMES = (5e-324, -5e-324, 1e-300, 1e-200, 1e-9, 0.0, -0.0, 0.5, 1.0, 1e10, 1e300, 1.7976931348623157e308, -1.0)


def float_fields(model: Any, prefix: tuple = ()) -> list[tuple[tuple, tuple[float, ...]]]:
    """(path, values to try) for every float a pydantic model holds, sections and containers walked:
    `*` stands for each key of a mapping or index of a list in the document it is applied to. Built
    from the models' fields, so a new float field is fuzzed without a change here."""
    import typing

    from pydantic import BaseModel

    out: list[tuple[tuple, tuple[float, ...]]] = []

    def walk(tp: Any, path: tuple, info: Any) -> None:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            walk(typing.get_args(tp)[0], path, list(typing.get_args(tp)[1:]) + list(info or []))
        elif origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
            for arg in typing.get_args(tp):
                walk(arg, path, info)
        elif origin is dict:
            walk(typing.get_args(tp)[1], path + ("*",), None)
        elif origin in (list, tuple):
            args = [a for a in typing.get_args(tp) if a is not Ellipsis]
            for i, arg in enumerate(args if origin is tuple else args[:1]):
                walk(arg, path + ((i,) if origin is tuple else ("*",)), None)
        elif isinstance(tp, type) and issubclass(tp, BaseModel):
            for name, field in tp.model_fields.items():
                walk(field.annotation, path + (name,), field.metadata)
        elif tp is float:
            out.append((path, tuple(sorted(set(EXTREMES) | _edges(info or [])))))

    walk(model, prefix, None)
    return out


def _edges(metadata: list[Any]) -> set[float]:
    """Each bound of a field and the float just past it."""
    edges: set[float] = set()
    for m in metadata:
        for attr, outward in (("ge", -math.inf), ("gt", -math.inf), ("le", math.inf), ("lt", math.inf)):
            bound = getattr(m, attr, None)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                edges |= {float(bound), math.nextafter(float(bound), outward), math.nextafter(float(bound), -outward)}
    return edges


def paths_in(doc: Any, pattern: tuple) -> list[tuple]:
    """The concrete paths of `doc` a pattern with `*` names (the leaf itself may be absent)."""
    if not pattern:
        return [()]
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        keys = list(doc) if isinstance(doc, dict) else range(len(doc)) if isinstance(doc, list) else []
        return [(k,) + p for k in keys for p in paths_in(doc[k], rest)]
    if not rest:
        return [(head,)] if isinstance(doc, dict) or (isinstance(doc, list) and head < len(doc)) else []
    if isinstance(doc, dict) and head in doc and doc[head] is not None:
        return [(head,) + p for p in paths_in(doc[head], rest)]
    if isinstance(doc, list) and isinstance(head, int) and head < len(doc):
        return [(head,) + p for p in paths_in(doc[head], rest)]
    return []


def set_at(doc: Any, path: tuple, value: Any) -> None:
    node = doc
    for part in path[:-1]:
        node = node[part]
    if isinstance(node, tuple):
        raise TypeError("documents hold lists, not tuples")
    node[path[-1]] = value
