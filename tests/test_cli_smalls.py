"""Smaller findings of issue 29's audit on the command line and in the docs: `train` checks its
--out before training, `simulate --seeds` refuses a repeated seed, docs/reliability.md names
evaluators that exist."""

from __future__ import annotations

import contextlib
import importlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import paretosched as ps
from paretosched.cli import main
from paretosched.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
RL_CONFIG = ROOT / "studies" / "configs" / "rl-reinforce.yaml"


def _cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's own refusals
            code = int(exc.code or 0)
    return code, err.getvalue()


@pytest.mark.parametrize("out", ["folder", "/dev/full", "afile/w.npz"])
def test_train_refuses_its_out_before_training(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str) -> None:
    if out == "/dev/full" and not Path(out).exists():
        pytest.skip("needs /dev/full")
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_text("x")
    target = out if out.startswith("/") else str(tmp_path / out)

    def trained(*_: Any, **__: Any) -> Any:
        raise AssertionError("trained before checking --out")

    import paretosched.sim.rl.training as training
    monkeypatch.setattr(training, "train", trained)
    code, err = _cli("train", str(RL_CONFIG), "--out", target, "--quiet")
    assert code == 2 and err.count("\n") == 1 and f"--out {target}" in err, err


def test_simulate_refuses_a_seed_listed_twice(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"platform": "homogeneous-2", "workload": {"jobs": [{"run_s": 5.0}]}}))
    code, err = _cli("simulate", str(cfg), "--seeds", "3,4,3")
    assert code == 2 and "seed 3 is listed twice" in err


def test_reliability_doc_names_analytic_evaluators_that_exist() -> None:
    analytic = importlib.import_module("paretosched.search.analytic")
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    named = re.findall(r"`paretosched\.search\.analytic:(evaluate\w*)`", text)
    for line in (ln for ln in text.splitlines() if "paretosched.search.analytic:evaluate` and its" in ln):
        named += [f"evaluate{v}" for v in re.findall(r"`(_\w+)`", line)]  # "and its `_noisy` ... variants"
    assert len(named) > 1
    for name in named:
        assert callable(getattr(analytic, name, None)), f"docs/reliability.md names analytic:{name}"


def test_an_optimise_interrupted_before_its_run_directory_names_no_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import paretosched.commands.optimise as command

    def interrupted(*_: Any, **__: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "run_optimise", interrupted)
    code, err = _cli("optimise", "my study.yaml", "--out", "runs/x")
    assert code == 130
    # nothing to resume yet: the hint comes from the search once the run directory exists
    # (tests/search/test_rundir_safety.py::test_ctrl_c_says_the_command_that_resumes)
    assert err == "paretosched: interrupted\n"


def test_simulate_refuses_provenance_seeds_listed_twice(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"platform": "homogeneous-2", "workload": {"jobs": [{"run_s": 5.0}]},
                                   "provenance": {"seeds": [7, 8, 7]}}))
    code, err = _cli("simulate", str(cfg))
    assert code == 2 and f"{cfg}: provenance.seeds.2: seed 7 is listed twice" in err
    with pytest.raises(UserError, match="provenance.seeds: seed 7 is listed twice"):
        ps.simulate(cfg)  # the API's rule is the same
