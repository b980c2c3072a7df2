"""`.ci/run` runs the README's test command verbatim, and that command lints and type-checks."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_test_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", text, re.S)
    return next(b for b in blocks if "pytest" in b)


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    command = _readme_test_command()
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_the_test_command_runs_ruff_and_mypy_first() -> None:
    steps = [s.strip() for s in _readme_test_command().split("&&")]
    assert steps.index("ruff check .") < steps.index("python -m pytest")
    assert steps.index("mypy") < steps.index("python -m pytest")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    test_extra = project["optional-dependencies"]["test"]  # the extra the command installs
    assert any(d.startswith("ruff") for d in test_extra) and any(d.startswith("mypy") for d in test_extra)
