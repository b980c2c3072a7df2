"""Run-directory tampering (issue 29): truncate, garble or NaN-ify a file of a small finished run (and
of one stopped mid-run), then resume, analyse, explore: each ends with exit 0 or exit 2 and one error
line, never a traceback (cli.main would raise it here)."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from paretosched import cli

from conftest import INTERRUPT_AFTER, run_quiet, write_study

SMALL = dict(budget={"generations": 3}, algorithm={"pop_size": 6}, seeds=2, recheck=2,
             baselines={"fcfs": {"scheduler": {"job_policy": "first", "backfilling": "none"}}})
FILES = ("summary.json", "population.json", "checkpoint.json", "fingerprint.json", "evaluations.jsonl", "front.csv",
         "study.yaml")
NUMBER = re.compile(rb"-?\d+(\.\d+)?([eE][-+]?\d+)?")
ODD = [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1", b"0", b"1e308", b'"x"', b"null", b"true", b"[]", b"{}"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PARETOSCHED_EVALUATORS", "conftest:*")
        run_quiet(write_study(base, **SMALL), base / "finished")
        study = write_study(base, name="cut.yaml", evaluator="conftest:evaluate_then_interrupt", **SMALL)
        mp.setitem(INTERRUPT_AFTER, "calls", 0)
        mp.setitem(INTERRUPT_AFTER, "limit", 20)
        with pytest.raises(KeyboardInterrupt):
            run_quiet(study, base / "cut", workers=1)
    return {"finished": base / "finished", "cut": base / "cut"}


@st.composite
def tampering(draw: st.DrawFn) -> tuple[str, str, int, bytes]:
    """(file, how, where, what): where is a fraction of the file, in millionths."""
    return (draw(st.sampled_from(FILES)), draw(st.sampled_from(["truncate", "garble", "number"])),
            draw(st.integers(0, 10**6)), draw(st.sampled_from(ODD + [b"\x00", b"}", b"\n", b"\xff"])))


def _tamper(data: bytes, how: str, where: int, what: bytes) -> bytes:
    at = where * len(data) // 10**6
    if how == "truncate":
        return data[:at]
    if how == "garble":
        return data[:at] + what[:1] + data[at + 1:]
    numbers = list(NUMBER.finditer(data))
    if not numbers:
        return data + what
    m = numbers[where * len(numbers) // (10**6 + 1)]
    return data[:m.start()] + what + data[m.end():]


@pytest.mark.parametrize("which", ["finished", "cut"])
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(change=tampering(), command=st.sampled_from(["optimise", "analyse", "explore"]))
def test_a_tampered_run_directory_is_a_result_or_one_line(runs: dict[str, Path], which: str,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           change: tuple[str, str, int, bytes], command: str) -> None:
    name, how, where, what = change
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(shutil.copytree(runs[which], Path(tmp) / "run"))
        path = run / name
        if not path.exists():
            return
        path.write_bytes(_tamper(path.read_bytes(), how, where, what))
        argv = [command, str(run)] + (["--resume", "--quiet", "--workers", "1"] if command == "optimise" else [])
        monkeypatch.chdir(tmp)
        capsys.readouterr()
        code = cli.main(argv)
        err = capsys.readouterr().err.strip().splitlines()
    assert code in (0, 2), (code, err)
    if code == 2:
        assert err and err[-1].startswith("paretosched: error: "), err
        assert not any("Traceback" in line or line.startswith("paretosched: error") for line in err[:-1]), err
