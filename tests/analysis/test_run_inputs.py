"""What analysis reads beside the log: a damaged summary.json is an error, baselines export."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from paretosched.analysis.export import export_pick
from paretosched.analysis.rundata import load_run
from paretosched.cli import main
from paretosched.errors import UserError
from paretosched.search.summary import Summary
from tests.analysis.synth import Point, write_run


def _run(tmp: Path) -> Path:
    return write_run(tmp / "run", [Point((1.0, 5.0)), Point((2.0, 3.0)), Point((4.0, 1.0)),
                                   Point((3.0, 4.0), kind="baseline", name="fcfs")])


@pytest.mark.parametrize("text, says", [("garbage{", "line 1: not valid JSON"), ("[1, 2]", "expected a JSON object")])
def test_a_damaged_summary_is_a_one_line_error_naming_it(tmp_path: Path, text: str, says: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _run(tmp_path)
    summary = run_dir / "summary.json"
    summary.write_text(text)
    with pytest.raises(UserError, match=says) as err:
        load_run(run_dir)
    assert str(summary) in str(err.value) and "\n" not in str(err.value)
    for argv in (["analyse", str(run_dir)], ["explore", str(run_dir), "--out", str(tmp_path / "x.html")],
                 ["export", str(run_dir), "-o", str(tmp_path / "b.yaml")],
                 ["runs", "table", str(run_dir), "-o", str(tmp_path / "t.csv")]):
        assert main(argv) == 2, argv
        assert str(summary) in capsys.readouterr().err
    assert not (tmp_path / "b.yaml").exists() and not (tmp_path / "t.csv").exists()


def test_a_missing_summary_is_tolerated(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    (run_dir / "summary.json").unlink()
    assert load_run(run_dir).summary == Summary()  # every field at its default


def test_export_cli_picks_a_baseline(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    out = tmp_path / "fcfs.yaml"
    assert main(["export", str(run_dir), "--pick", "baseline:fcfs", "-o", str(out)]) == 0
    prov = yaml.safe_load(out.read_text())["provenance"]
    assert prov["eval_id"] == 3 and prov["pick"] == "baseline:fcfs" and prov["objectives"]["energy_kwh"] == 3.0
    with pytest.raises(UserError, match=r"no baseline named 'sjf' \(baselines: fcfs\)"):
        export_pick(str(run_dir), "baseline:sjf", str(tmp_path / "x.yaml"))


def test_a_damaged_gene_in_study_yaml_is_one_line_naming_the_file_and_key(tmp_path: Path) -> None:
    from tests.analysis.synth import GENES, default_genome

    genes = {**GENES, "scheduler.freq": {"type": "float", "low": 1.0, "high": 0.5}}
    d = write_run(tmp_path / "run", [Point((1.0 + i, 10.0 - i), default_genome(i)) for i in range(4)], genes=genes)
    with pytest.raises(UserError) as err:
        load_run(d)
    assert str(err.value) == f"{d / 'study.yaml'}: search.scheduler.freq: low (1.0) > high (0.5)"


def test_without_study_yaml_genes_are_guessed_from_the_whole_log(tmp_path: Path) -> None:
    from paretosched.analysis.drivers import design_matrix
    from paretosched.search.genes import ChoiceGene, FloatGene
    from tests.analysis.synth import default_genome

    d = write_run(tmp_path / "run", [Point((1.0 + i, 10.0 - i), default_genome(i)) for i in range(6)])
    (d / "study.yaml").unlink()
    run = load_run(d)
    assert run.genes["scheduler.freq"] == FloatGene(low=0.5, high=1.0)
    assert run.genes["scheduler.job_policy"] == ChoiceGene(values=["first", "shortest", "smallest"])
    X = design_matrix(run.frame.iloc[:2], run.genes)  # bounds from the whole log, not from the rows fitted
    assert X["scheduler.freq"].tolist() == [1.0, pytest.approx(1 + 99 * 0.35 / 0.5)]
    assert X["scheduler.job_policy=smallest"].tolist() == [1.0, 1.0]
