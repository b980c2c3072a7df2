"""An output file the user names is never replaced without --force (it was, silently), and a
replacement is said: every command that writes a named file, refused and then forced."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
import yaml

from tests.adv import assert_user_error, run_cli

ROOT = Path(__file__).resolve().parents[1]
CONFIG = str(ROOT / "studies" / "configs" / "fcfs-easy.yaml")
SLURM = ROOT / "paretosched" / "data" / "slurm"
OLD = "kept: the user's own file\n"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from paretosched.search.analytic import study_dict

    d = tmp_path_factory.mktemp("force")
    (d / "s.yaml").write_text(yaml.safe_dump(study_dict(budget={"generations": 2}, algorithm={"pop_size": 6})))
    assert run_cli(["optimise", str(d / "s.yaml"), "--out", str(d / "run"), "--quiet"])[0] == 0
    return d / "run"


def _rl_config(d: Path) -> str:
    cfg = yaml.safe_load((ROOT / "studies" / "configs" / "rl-reinforce.yaml").read_text())
    cfg["workload"].update(first_job=200, n_jobs=20)
    cfg["scheduler"].update(episodes=1, train_window_count=1, train_window_jobs=20)
    (d / "rl.yaml").write_text(yaml.safe_dump(cfg))
    return str(d / "rl.yaml")


# (argv builder from (tmp folder, run dir), the file that exists, the option the error names)
CASES: dict[str, tuple[Callable[[Path, Path], list[str]], str, str]] = {
    "simulate --out": (lambda d, r: ["simulate", CONFIG, "--n-jobs", "30", "--json", "--out", str(d / "o")],
                       "o/metrics.json", "--out"),
    "simulate --out timeline": (lambda d, r: ["simulate", CONFIG, "--n-jobs", "30", "--timeline",
                                              "--out", str(d / "o")], "o/timeline.csv", "--out"),
    "simulate --plots": (lambda d, r: ["simulate", CONFIG, "--n-jobs", "30", "--plots", str(d / "p")],
                         "p/run.html", "--plots"),
    "platform import -o": (lambda d, r: ["platform", "import", str(SLURM / "slurm.conf"), "--cpu-map",
                                         str(SLURM / "cpu-map.yaml"), "-o", str(d / "plat.yaml")],
                           "plat.yaml", "--output"),
    "platform import --scheduler": (lambda d, r: ["platform", "import", str(SLURM / "slurm.conf"), "--cpu-map",
                                                  str(SLURM / "cpu-map.yaml"), "-o", str(d / "plat.yaml"),
                                                  "--scheduler", str(d / "sched.yaml")],
                                    "sched.yaml", "--scheduler"),
    "trace import -o": (lambda d, r: ["trace", "import", str(SLURM / "sacct-sample.txt"), "-o", str(d / "t.swf")],
                        "t.swf", "--output"),
    "train --out": (lambda d, r: ["train", _rl_config(d), "--quiet", "--out", str(d / "agent.weights.npz")],
                    "agent.weights.npz", "--out"),
    "train curves beside": (lambda d, r: ["train", _rl_config(d), "--quiet", "--out", str(d / "agent.weights.npz")],
                            "agent.weights.curves.csv", "--out"),
    "export -o": (lambda d, r: ["export", str(r), "-o", str(d / "best.yaml")], "best.yaml", "--output"),
    "explore --out": (lambda d, r: ["explore", str(r), "--out", str(d / "x.html")], "x.html", "--out"),
    "analyse --out": (lambda d, r: ["analyse", str(r), "--out", str(d / "a")], "a/report.html", "--out"),
    "runs table -o": (lambda d, r: ["runs", "table", str(r), "-o", str(d / "t.csv")], "t.csv", "--output"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_existing_output_needs_force(case: str, tmp_path: Path, run_dir: Path) -> None:
    argv_of, name, option = CASES[case]
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(OLD)
    argv = argv_of(tmp_path, run_dir)
    rc, out, err = run_cli(argv)
    assert_user_error(rc, err, f"{option} {target}: exists", "--force")
    assert target.read_text() == OLD  # untouched
    rc, out, err = run_cli([*argv, "--force"])
    assert rc == 0, err
    assert err.startswith("paretosched: replaced ") and str(target) in err, err
    assert target.read_bytes() != OLD.encode()


def test_a_new_output_says_nothing_of_replacing(tmp_path: Path, run_dir: Path) -> None:
    rc, out, err = run_cli(["export", str(run_dir), "-o", str(tmp_path / "new.yaml")])
    assert rc == 0 and out.strip() == f"config: {tmp_path / 'new.yaml'}" and "replaced" not in err


def test_the_run_directory_views_are_regenerated_without_force(run_dir: Path) -> None:
    # RUN/explorer.html and RUN/analysis/ are the run's own views, rewritten on every call
    for argv in (["explore", str(run_dir)], ["analyse", str(run_dir)]):
        assert run_cli(argv)[0] == 0
        rc, _, err = run_cli(argv)
        assert rc == 0 and "replaced" not in err, err


def test_simulate_json_stays_pure_json_when_replacing(tmp_path: Path) -> None:
    import json

    argv = ["simulate", CONFIG, "--n-jobs", "20", "--json", "--out", str(tmp_path)]
    assert run_cli(argv)[0] == 0
    rc, out, err = run_cli([*argv, "--force"])
    assert rc == 0 and json.loads(out)["n_jobs"] == 20
    assert err.strip() == f"paretosched: replaced {tmp_path / 'jobs.csv'}, {tmp_path / 'metrics.json'}"
