"""A study baseline read from the slurm.conf a cluster runs (`from_slurm_conf`, search/current.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from paretosched.cli import main
from paretosched.errors import UserError
from paretosched.search.study import load_study, reference_baseline

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "studies" / "slurm-quickstart.yaml"
CONF = ROOT / "studies" / "slurm-current.conf"
SAMPLE = ROOT / "paretosched" / "data" / "slurm"


def _imported(tmp_path: Path, conf: Path, cpu_map: Path | None = None) -> dict:
    sched = tmp_path / "sched.yaml"
    args = ["platform", "import", str(conf), "-o", str(tmp_path / "p.yaml"), "--scheduler", str(sched), "--force"]
    assert main(args + (["--cpu-map", str(cpu_map)] if cpu_map else [])) == 0
    return yaml.safe_load(sched.read_text())["scheduler"]


def test_the_quickstarts_current_baseline_is_what_platform_import_decodes(tmp_path):
    study = load_study(QUICKSTART)
    assert study.baselines["current"] == {"scheduler": _imported(tmp_path, CONF)}
    assert reference_baseline(study) == "current" and study.reference == "current"
    assert study.slurm_confs == {"current": {"path": str(CONF.resolve())}}
    # the resolved copy a run directory keeps holds the section, not the path: it reloads unchanged
    copy = tmp_path / "study.yaml"
    copy.write_text(yaml.safe_dump(study.model_dump(mode="json"), sort_keys=False))
    assert load_study(copy).baselines == study.baselines


def test_a_cpu_map_and_a_path_relative_to_the_study(tmp_path):
    shutil.copy(SAMPLE / "slurm.conf", tmp_path / "cluster.conf")
    data = yaml.safe_load(QUICKSTART.read_text())
    data["baselines"] = {"today": {"from_slurm_conf": {"path": "cluster.conf", "cpu_map": str(SAMPLE / "cpu-map.yaml")},
                                   "model": {"interference": "none"}}}
    data.pop("reference")
    data["constraints"] = []
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    study = load_study(tmp_path / "s.yaml")
    want = _imported(tmp_path, tmp_path / "cluster.conf", SAMPLE / "cpu-map.yaml")
    assert study.baselines["today"] == {"model": {"interference": "none"}, "scheduler": want}
    assert reference_baseline(study) is None  # no `reference` and no baseline named current


@pytest.mark.parametrize("spec, message", [
    ("missing.conf", "baselines.current.from_slurm_conf: {dir}/missing.conf: no such file"),
    ({"path": "x.conf", "cpus": "y"}, "baselines.current.from_slurm_conf: expected the path of a slurm.conf"),
    (3, "baselines.current.from_slurm_conf: expected the path of a slurm.conf"),
])
def test_from_slurm_conf_mistakes_name_the_key(tmp_path, spec, message):
    data = yaml.safe_load(QUICKSTART.read_text())
    data["baselines"]["current"] = {"from_slurm_conf": spec}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(UserError) as err:
        load_study(tmp_path / "s.yaml")
    assert message.format(dir=tmp_path) in str(err.value) and "\n" not in str(err.value)


def test_from_slurm_conf_and_a_scheduler_are_refused_together(tmp_path):
    data = yaml.safe_load(QUICKSTART.read_text())
    data["baselines"]["current"] = {"from_slurm_conf": str(CONF), "scheduler": {"kind": "slurm"}}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match="baselines.current: from_slurm_conf and scheduler: .* give one of them"):
        load_study(tmp_path / "s.yaml")
