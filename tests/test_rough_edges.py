"""Rough edges a newcomer hit (issue 16): the hidden cache, stray run dirs, API error wording."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
import yaml

import paretosched as ps
from paretosched.cli import main
from paretosched.errors import UserError
from tests.test_api import STUDY


def _optimise(study, out: Path, **kw) -> tuple[ps.Run, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run = ps.optimise(study, out=out, quiet=True, **kw)
    return run, err.getvalue()


def test_cache_hits_are_counted_and_the_folder_to_delete_named(tmp_path: Path, capsys) -> None:
    first, said = _optimise(STUDY, tmp_path / "a")
    assert first.summary.n_cache_hits == 0 and "evaluation cache" not in said
    again, said = _optimise(STUDY, tmp_path / "b")
    hits = again.summary.n_cache_hits
    assert hits > 0 and again.summary.n_simulations == 0
    folder = str(tmp_path.resolve() / ".cache" / "tiny")
    assert f"{hits} of {hits} seed results came from the evaluation cache {folder} (delete that folder" in said
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(STUDY, sort_keys=False))
    capsys.readouterr()
    assert main(["optimise", str(path), "--out", str(tmp_path / "c"), "--quiet"]) == 0
    assert f"came from the evaluation cache {folder} (delete that folder" in capsys.readouterr().out


def test_unreachable_dask_scheduler_leaves_no_run_dir(tmp_path: Path, capsys) -> None:
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.distributed")
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(STUDY, sort_keys=False))
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        rc = main(["optimise", str(path), "--out", str(tmp_path / "x"), "--dask", "tcp://127.0.0.1:1"])
    assert rc == 2 and "cannot connect" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_api_errors_name_the_study_dict_and_the_apis_arguments(tmp_path: Path) -> None:
    bad = {**STUDY, "base": {**STUDY["base"], "platform": "no-such-platform"}}
    with pytest.raises(UserError) as err:
        ps.optimise(bad, out=tmp_path / "x")
    assert str(err.value).startswith("<study dict>: base:") and "paretosched-study-" not in str(err.value)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "junk").write_text("x")
    with pytest.raises(UserError, match=r"use resume=True or another out=$"):
        ps.optimise(STUDY, out=tmp_path / "full")
