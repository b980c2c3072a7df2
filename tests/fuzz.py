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
            assert all(v is not None and math.isfinite(v) for v in metrics.values()), metrics
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
