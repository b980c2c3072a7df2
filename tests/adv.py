"""Helpers of the adversarial and fuzz tests: run a command in-process, check the error contract."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any, Sequence

from paretosched.cli import main

# a trace line with every field valid (SWF: 18 fields); tests replace one field at a time
GOOD_FIELDS = ["1", "0", "0", "100", "2", "-1", "-1", "2", "200", "-1", "1", "1", "1", "-1", "1", "1", "-1", "-1"]


def swf_line(**fields: str) -> str:
    """A job line with fields replaced by 1-based index, e.g. swf_line(f4="-5")."""
    f = list(GOOD_FIELDS)
    for key, value in fields.items():
        f[int(key[1:]) - 1] = value
    return " ".join(f) + "\n"


def run_cli(argv: Sequence[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `paretosched ARGV` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:  # argparse
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


def assert_user_error(rc: int, err: str, *expected: str) -> str:
    """Exit 2, exactly one line on stderr, no traceback, and every `expected` text in it."""
    assert rc == 2, (rc, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for text in expected:
        assert text in lines[0], (text, lines[0])
    return lines[0]


def assert_real_metrics(metrics: dict[str, Any]) -> None:
    """Metrics of a run that simulated jobs: no NaN, no empty-run zeros."""
    assert metrics["n_jobs"] > 0
    assert metrics["mean_bsld"] >= 1.0  # bounded slowdown is at least 1 for any job that ran
    for key, value in metrics.items():
        assert value is None or math.isfinite(value), key


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def strict_json(text: str) -> Any:
    """Parse JSON refusing NaN and Infinity (what browsers and jq accept)."""
    def refuse(token: str) -> Any:
        raise ValueError(f"bare {token} in JSON")
    return json.loads(text, parse_constant=refuse)
