"""The command line's options: a bundled trace by name, a timeline with nowhere to go, a replaced export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.adv import assert_user_error, run_cli

CONFIG = str(Path(__file__).resolve().parents[1] / "studies" / "configs" / "fcfs-easy.yaml")


def test_workload_option_takes_a_bundled_trace_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # was resolved as tmp_path/builtin:hpc2n-3k.swf.gz: "trace file not found"
    rc, out, err = run_cli(["simulate", CONFIG, "--workload", "builtin:hpc2n-3k.swf.gz", "--n-jobs", "50", "--json"])
    assert rc == 0, err
    assert json.loads(out)["n_jobs"] == 50


def test_workload_option_cannot_leave_the_bundled_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli(["simulate", CONFIG, "--workload", "builtin:../../../../etc/passwd"])
    assert_user_error(rc, err, "no bundled trace '../../../../etc/passwd'")


def test_timeline_without_an_output_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # it silently computed a timeline and wrote it nowhere
    rc, _, err = run_cli(["simulate", CONFIG, "--timeline", "--n-jobs", "20"])
    assert_user_error(rc, err, "--timeline", "--out")
    assert list(tmp_path.iterdir()) == []


def test_export_states_its_default_and_replaces_only_with_force(tmp_path, monkeypatch):
    # export -o (default best.yaml) replaced an existing file without a word
    from paretosched.search.analytic import study_dict
    import yaml

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(study_dict(budget={"generations": 1}, algorithm={"pop_size": 4})))
    assert run_cli(["optimise", "s.yaml", "--out", "run", "--quiet"])[0] == 0
    rc, out, err = run_cli(["export", "run"])
    assert rc == 0 and re.fullmatch(r"config: best\.yaml \(pick balanced: eval \d+\)", out.strip())
    assert (tmp_path / "best.yaml").is_file()
    before = (tmp_path / "best.yaml").read_text()
    rc, out, err = run_cli(["export", "run", "--pick", "eval:0"])
    assert_user_error(rc, err, "--output best.yaml: exists", "--force")
    assert (tmp_path / "best.yaml").read_text() == before
    rc, out, err = run_cli(["export", "run", "--pick", "eval:0", "--force"])
    assert rc == 0 and out.strip() == "config: best.yaml (pick eval:0: eval 0)"
    assert err.strip() == "paretosched: replaced best.yaml" and (tmp_path / "best.yaml").read_text() != before
    # a bad pick is reported as such, not as the existing file
    rc, out, err = run_cli(["export", "run", "--pick", "nonsense"])
    assert_user_error(rc, err, "nonsense")
    assert "exists" not in err
    # a slurm fragment does not go into best.yaml
    rc, out, err = run_cli(["export", "run", "--format", "slurm"])
    assert rc == 0 and out.startswith("config: best.conf (pick balanced: eval ") and (tmp_path / "best.conf").is_file()
    assert (tmp_path / "best.yaml").read_text() != (tmp_path / "best.conf").read_text()


def test_help_states_the_export_defaults_and_that_optimise_takes_no_force(capsys):
    from paretosched.cli import main

    with pytest.raises(SystemExit):
        main(["export", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: balanced)" in text and "best.conf with --format slurm" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "optimise takes no --force" in text


def test_every_command_help_ends_with_an_example_and_the_top_is_for_users():
    # the help had no examples, and the top-level description was the module's docstring
    import argparse

    from paretosched import cli

    def leaves(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        yield path, parser
        for action in subs:
            for name, child in action.choices.items():
                if child.prog.endswith(name):  # aliases share the parser: visit it once
                    yield from leaves(child, path + [name])

    top = cli.build_parser()
    assert "parses arguments" not in top.description and "digital twin" in top.description
    seen = list(leaves(top, []))
    assert len(seen) >= 14  # top, simulate, platform show/list/import, trace import, train, optimise, ...
    for path, parser in seen[1:]:
        text = parser.format_help()
        assert "\nexample:\n  paretosched " in text, path
    for path, parser in seen:
        for action in parser._actions:
            if "--out" in action.option_strings or "--output" in action.option_strings:
                assert action.metavar in ("FILE", "DIR", "RUN_DIR"), (path, action.option_strings)
