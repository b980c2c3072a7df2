"""Errors and notes name the way out: the hidden cache, stray run dirs, API error wording."""

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
    """The run and what it said on stderr (not quiet: quiet=True says nothing, issue 29)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run = ps.optimise(study, out=out, **kw)
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


def test_a_misspelt_key_leads_and_every_other_error_is_named() -> None:
    bad = {k: v for k, v in STUDY.items() if k != "budget"}
    bad.update(budgte={"generations": 2}, seeds="x", zzz=1)
    with pytest.raises(UserError) as err:
        ps.optimise(bad)
    msg = str(err.value)
    assert msg.startswith("<study dict>: budgte: unknown key (did you mean 'budget'?) [+3 more: "), msg
    for part in ("zzz: unknown key", "seeds: ", "budget: required key is missing"):  # the third and fourth too
        assert part in msg, (part, msg)


def test_unknown_metrics_all_named_with_their_nearest(tmp_path: Path) -> None:
    bad = {**STUDY, "objectives": ["energy_kwhh", "mean_bsdl"]}
    with pytest.raises(UserError) as err:
        ps.optimise(bad, out=tmp_path / "x")
    msg = str(err.value)
    assert "objectives.0: unknown metric 'energy_kwhh' (did you mean 'energy_kwh'?)" in msg
    assert "objectives.1: unknown metric 'mean_bsdl' (did you mean 'mean_bsld'?)" in msg


def test_unknown_gene_path_suggests_the_key(tmp_path: Path) -> None:
    bad = {**STUDY, "search": {"scheduler.job_polcy": {"type": "choice", "values": ["first", "shortest"]}}}
    with pytest.raises(UserError, match=r"search\.scheduler\.job_polcy: unknown config path .*"
                                        r"\(did you mean 'job_policy'\?\)$"):
        ps.optimise(bad, out=tmp_path / "x")


@pytest.mark.parametrize("flag, value, expected", [
    ("--platform", "gaia-mni", "unknown platform 'gaia-mni' (did you mean 'gaia-mini'?)"),
    ("--workload", "builtin:hpc2n.swf.gz", "no bundled trace 'hpc2n.swf.gz' (did you mean 'hpc2n-3k.swf.gz'?) "
                                           "(bundled: builtin:hpc2n-3k.swf.gz, builtin:sdsc-blue-20k.swf.gz"),
])
def test_simulate_suggests_platform_and_bundled_trace(flag: str, value: str, expected: str, tmp_path: Path,
                                                      capsys) -> None:
    from tests.test_cli import CONFIG

    path = tmp_path / "c.yaml"
    path.write_text(CONFIG)
    assert main(["simulate", str(path), flag, value, "--n-jobs", "5"]) == 2
    assert expected in capsys.readouterr().err


def test_simulate_says_where_it_wrote(tmp_path: Path, capsys) -> None:
    from tests.test_cli import CONFIG

    path = tmp_path / "c.yaml"
    path.write_text(CONFIG)
    out, plots = tmp_path / "o", tmp_path / "p"
    assert main(["simulate", str(path), "--n-jobs", "5", "--json", "--out", str(out)]) == 0
    got = capsys.readouterr()
    assert got.err.strip() == f"wrote {out / 'jobs.csv'}, {out / 'metrics.json'}"  # stdout stays one JSON object
    assert main(["simulate", str(path), "--n-jobs", "5", "--plots", str(plots)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {plots / 'run.html'}"


def test_baseline_rows_carry_the_genes_their_config_sets(tmp_path: Path) -> None:
    # every gene column of a baseline row was NaN although the baseline's config sets those paths
    run, _ = _optimise(STUDY, tmp_path / "r")
    ev = run.evaluations
    base = ev[ev["kind"] == "baseline"].iloc[0]
    from paretosched.search.runlog import read_evaluations

    logged = next(r for r in read_evaluations(run.path) if r.kind == "baseline")
    assert base["scheduler.job_policy"] == logged.config["scheduler"]["job_policy"] == "first"
    assert base["scheduler.freq"] == logged.config["scheduler"]["freq"]
