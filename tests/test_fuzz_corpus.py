"""The corpus of hand-made bad files (tests/data/bad/, one per case the audit of issue 18 found or
the fuzzers suggest), each run through the real command: exit 2, one line naming the file and
the line or key, no traceback, nothing written. `expected.tsv` says what each message contains."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adv import assert_user_error, run_cli

BAD = Path(__file__).parent / "data" / "bad"


def _cases() -> list[tuple[str, str]]:
    rows = [line.split("\t") for line in (BAD / "expected.tsv").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    return [(name, expected) for name, expected in rows]


def _argv(f: Path, tmp: Path) -> list[str]:
    """The command that reads `f`, by the file's kind (its name's prefix)."""
    kind = f.name.split("-", 1)[0]
    if kind == "swf":
        cfg = tmp / "cfg.yaml"
        cfg.write_text(f"platform: homogeneous-4\nworkload: {{path: '{f}'}}\n")
        return ["simulate", str(cfg), "--json"]
    if kind == "config":
        return ["simulate", str(f), "--json"]
    if kind == "platform":
        return ["platform", "show", str(f), "--json"]
    if kind == "study":
        return ["optimise", str(f), "--out", str(tmp / "run"), "--quiet"]
    if kind == "weights":
        cfg = tmp / "rl.yaml"
        cfg.write_text(f"platform: homogeneous-4\nworkload: {{jobs: [{{run_s: 5}}]}}\n"
                       f"scheduler: {{kind: rl, weights: '{f}'}}\n")
        return ["simulate", str(cfg), "--json"]
    raise AssertionError(f"{f.name}: unknown kind of bad file")


def test_every_bad_file_has_an_expectation():
    listed = {name for name, _ in _cases()}
    present = {p.name for p in BAD.iterdir() if p.name != "expected.tsv"}
    assert listed == present


@pytest.mark.parametrize("name,expected", _cases())
def test_bad_file_is_one_line_exit_2(tmp_path, monkeypatch, name, expected):
    monkeypatch.delenv("PARETOSCHED_EVALUATORS", raising=False)
    monkeypatch.chdir(tmp_path)  # `runs/` of a study, if anything were written, would land here
    f = BAD / name
    argv = _argv(f, tmp_path)
    before = {p.name for p in tmp_path.iterdir()}
    rc, out, err = run_cli(argv)
    # optimise says the run's cost first when the study itself is valid; the error is the last line
    lines = err.strip().splitlines()
    assert all(": cost: " in ln for ln in lines[:-1]), err
    line = assert_user_error(rc, (lines[-1] if lines else "") + "\n", expected)
    assert name in line.split(expected)[0], line  # the file, then its line or key
    assert out == ""
    assert {p.name for p in tmp_path.iterdir()} == before  # nothing written (no run dir, no .lock)


@pytest.mark.parametrize("name", ["swf-corrupt-middle.swf.gz", "config-alias-bomb.yaml", "platform-inf-power.yaml"])
def test_bad_file_in_a_real_process(tmp_path, name):
    """The same contract from the installed command's process: exit status 2 and one stderr line."""
    import subprocess
    import sys

    argv = _argv(BAD / name, tmp_path)
    proc = subprocess.run([sys.executable, "-m", "paretosched.cli", *argv], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    expected = dict(_cases())[name]
    assert_user_error(proc.returncode, proc.stderr, name, expected)
    assert proc.stdout == ""
