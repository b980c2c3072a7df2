"""export_pick: a valid SimConfig with exact provenance; explorer embeds the same document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import paretosched
from paretosched.analysis.explorer import explorer_data, write_explorer
from paretosched.analysis.export import config_document, export_pick, to_yaml
from paretosched.analysis.rundata import load_run
from paretosched.config import load_config
from paretosched.errors import UserError
from tests.analysis.synth import SEEDS, Point, write_run
from tests.analysis.test_front import DOMINATED, KNEE_FRONT


@pytest.fixture
def knee_run(tmp_path: Path) -> Path:
    pts = [Point(p, generation=i % 3) for i, p in enumerate(KNEE_FRONT + DOMINATED)]
    return write_run(tmp_path / "run", pts + [Point((0.0, 0.0), kind="baseline", name="fcfs")])


@pytest.mark.parametrize("pick, eval_id", [("balanced", 3), ("knee", 3), ("min:energy_kwh", 0),
                                           ("min:mean_bsld", 6), ("index:1", 1), ("weights:0.9,0.1", 2),
                                           ("eval:9", 9)])
def test_export_writes_the_logged_config_and_provenance(knee_run: Path, tmp_path: Path, pick: str,
                                                        eval_id: int) -> None:
    path = export_pick(str(knee_run), pick, str(tmp_path / "best.yaml"))
    row = next(json.loads(line) for line in (knee_run / "evaluations.jsonl").read_text().splitlines()
               if json.loads(line)["eval_id"] == eval_id)
    doc = yaml.safe_load(path.read_text())
    prov = doc.pop("provenance")
    assert doc == {k: v for k, v in row["config"].items() if k != "provenance"}
    assert prov["eval_id"] == eval_id and prov["pick"] == pick and prov["study"] == "synth"
    assert prov["run_dir"] == str(knee_run.resolve())
    assert prov["genome"] == row["genome"]
    assert prov["objectives"] == row["objectives"]  # bit-exact floats through YAML
    assert prov["seeds"] == SEEDS
    assert [p["seed"] for p in prov["per_seed"]] == SEEDS
    # the recorded means are the seed-order sums of the per-seed values / n (mean_metrics' rule)
    for name, mean in prov["objectives"].items():
        assert sum(p["objectives"][name] for p in prov["per_seed"]) / len(SEEDS) == mean
    assert prov["paretosched_version"] == paretosched.__version__
    cfg = load_config(path)  # what `paretosched simulate` reads
    assert cfg.provenance is not None and cfg.provenance["eval_id"] == eval_id


def test_export_into_a_directory_names_the_file(knee_run: Path, tmp_path: Path) -> None:
    path = export_pick(str(knee_run), "min:energy_kwh", str(tmp_path))
    assert path == tmp_path / "synth_min_energy_kwh.yaml" and path.is_file()


@pytest.mark.parametrize("pick, message", [("best", "unknown pick"), ("min:speed", "unknown objective 'speed'"),
                                           ("index:99", "index:0 .. index:6")])
def test_export_mistakes(knee_run: Path, tmp_path: Path, pick: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        export_pick(str(knee_run), pick, str(tmp_path / "x.yaml"))
    assert not (tmp_path / "x.yaml").exists()


def test_explorer_embeds_the_export_document(knee_run: Path, tmp_path: Path) -> None:
    exported = yaml.safe_load(export_pick(str(knee_run), "eval:4", str(tmp_path / "e.yaml")).read_text())
    data = explorer_data(load_run(knee_run))
    point = next(p for p in data["points"] if p["id"] == 4)
    shown = yaml.safe_load("".join(data["blocks"][k] for k in point["y"]))  # as the page joins them
    assert shown["provenance"].pop("pick") == "explorer" and exported["provenance"].pop("pick") == "eval:4"
    assert shown == exported
    kinds = [p["kind"] for p in data["points"]]
    assert kinds.count("search") == 10 and kinds.count("baseline") == 1
    assert [p["id"] for p in data["points"] if p["front"]] == list(range(7))


def test_explorer_blocks_rebuild_each_document_to_the_character(knee_run: Path) -> None:
    # the page stores each top-level block once and joins a point's blocks back into its YAML
    run = load_run(knee_run)
    data = explorer_data(run)
    for p in data["points"]:
        assert "".join(data["blocks"][k] for k in p["y"]) == to_yaml(config_document(run, p["id"], "explorer"))
    assert len(data["blocks"]) < 3 * len(data["points"])  # platform, workload, model, seed: stored once


def test_explorer_never_injects_study_strings(tmp_path: Path) -> None:
    evil = "</script><script>alert(1)</script>"
    genes = {"scheduler.job_policy": {"type": "choice", "values": [evil, "first"]}}
    pts = [Point((1.0, 2.0), genome={"scheduler.job_policy": evil}), Point((2.0, 1.0), genome={"scheduler.job_policy": "first"}),
           Point((3.0, 3.0), kind="baseline", name=evil)]
    page = write_explorer(str(write_run(tmp_path / "run", pts, genes=genes, name="x")))
    text = page.read_text()
    assert evil not in text and "alert(1)" in text  # present only in escaped form
    assert text.count("</script>") == 4  # plotly.min.js, its missing-file notice, the data element, the page script
    page_script = text.rsplit("<script>", 1)[1]
    assert "innerHTML" not in page_script
