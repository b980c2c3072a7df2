"""Every script in scripts/ imports, and every runnable one answers `--help` without doing its work.

A script is run as its docstring says (`python scripts/x.py`, from its own folder, as the paper and
validation scripts import their neighbours by name); one with no `__main__` block is a helper
module of its folder, and must import."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
ALL = sorted(p.relative_to(SCRIPTS).as_posix() for p in SCRIPTS.rglob("*.py"))
RUNNABLE = [s for s in ALL if "__main__" in (SCRIPTS / s).read_text(encoding="utf-8")]
HELPERS = [s for s in ALL if s not in RUNNABLE]


def test_the_lists_cover_every_script() -> None:
    # a script that loses its `__main__` block would silently drop out of the --help test
    assert len(ALL) >= 19 and HELPERS == ["paper/common.py", "validation/thesis_common.py"]


@pytest.mark.parametrize("script", RUNNABLE)
def test_a_script_answers_help(script: str) -> None:
    path = SCRIPTS / script
    done = subprocess.run([sys.executable, path.name, "--help"], cwd=path.parent, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:"), done.stdout[:200]


@pytest.mark.parametrize("script", HELPERS)
def test_a_helper_module_imports(script: str) -> None:
    path = SCRIPTS / script
    sys.path.insert(0, str(path.parent))
    try:
        module = importlib.import_module(path.stem)
    finally:
        sys.path.remove(str(path.parent))
        sys.modules.pop(path.stem, None)
    assert module.__doc__
