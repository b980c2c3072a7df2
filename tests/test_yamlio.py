"""read_yaml: the safe loader, duplicate keys, and where a YAML error is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from paretosched.errors import UserError
from paretosched.yamlio import read_yaml


def _error(tmp_path: Path, text: str) -> str:
    p = tmp_path / "f.yaml"
    p.write_text(text)
    with pytest.raises(UserError) as info:
        read_yaml(p)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{p}:"), msg
    return msg.removeprefix(str(p))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("name: a\nseed: 1\nbudget: {generations: 2}\nseed: 2\n", ":4: duplicate key 'seed' (first on line 2)"),
        ("a:\n  b: 1\n  c: 2\n  b: 3\n", ":4: duplicate key 'b' (first on line 2)"),  # nested mapping
        ("a: {x: 1, y: 2, x: 3}\n", ":1: duplicate key 'x' (first on line 1)"),  # flow mapping
        ('{"a": 1,\n "a": 2}\n', ":2: duplicate key 'a' (first on line 1)"),  # JSON
        ("- {k: 1}\n- {k: 2, k: 3}\n", ":2: duplicate key 'k' (first on line 2)"),  # inside a list
    ],
)
def test_duplicate_key_is_refused_with_its_line(tmp_path: Path, text: str, expected: str) -> None:
    assert _error(tmp_path, text) == expected


def test_merge_keys_may_still_be_overridden(tmp_path: Path) -> None:
    p = tmp_path / "f.yaml"
    p.write_text("d: &d {x: 1, y: 2}\ne:\n  <<: *d\n  x: 3\n")
    assert read_yaml(p) == {"d": {"x": 1, "y": 2}, "e": {"x": 3, "y": 2}}


def test_still_the_safe_loader(tmp_path: Path) -> None:
    msg = _error(tmp_path, "a: !!python/object/apply:os.system [echo hi]\n")
    assert msg.startswith(":1: invalid YAML: could not determine a constructor"), msg


def test_unclosed_bracket_names_the_line_where_it_opened(tmp_path: Path) -> None:
    text = "".join(f"k{i}: {i}\n" for i in range(1, 11)) + "objectives: [energy_kwh, mean_bsld\nseed: 1\n"
    assert _error(tmp_path, text) == (
        ":11-12: invalid YAML: while parsing a flow sequence (line 11): expected ',' or ']', but got ':' (line 12)")


def test_unclosed_quote_names_the_line_where_it_opened(tmp_path: Path) -> None:
    msg = _error(tmp_path, 'a: 1\nname: "abc\nb: 2\nc: 3\n')
    assert msg.startswith(":2-5: invalid YAML: while scanning a quoted scalar (line 2):"), msg


def test_error_on_one_line_keeps_a_single_line_number(tmp_path: Path) -> None:
    assert _error(tmp_path, "a: 1\nb: c: d\n") == ":2: invalid YAML: mapping values are not allowed here"


def test_exponent_notation_is_a_number(tmp_path: Path) -> None:
    # PyYAML alone (YAML 1.1) reads 1e4 and 1.0e3 as strings, which a strict schema then refuses
    p = tmp_path / "f.yaml"
    p.write_text("a: 1e4\nb: 1.0e3\nc: -2E-3\nd: 1.5e-3\ne: '1e4'\nf: 10\ng: e4\n")
    assert read_yaml(p) == {"a": 1e4, "b": 1e3, "c": -2e-3, "d": 1.5e-3, "e": "1e4", "f": 10, "g": "e4"}
    assert isinstance(read_yaml(p)["f"], int)
    p.write_text("a: .5e3\n")
    assert read_yaml(p) == {"a": 500.0}


def test_what_dump_yaml_writes_reads_back_the_same(tmp_path: Path) -> None:
    from paretosched.yamlio import dump_yaml

    doc = {"name": "1e4", "x": ".5e3", "y": "1.0e3", "w": 1e4, "n": 12, "f": 0.5, "s": "plain"}
    p = tmp_path / "d.yaml"
    p.write_text(dump_yaml(doc, sort_keys=False))
    assert read_yaml(p) == doc and isinstance(read_yaml(p)["name"], str)


def test_a_block_mapping_error_names_the_problem_line_only(tmp_path: Path) -> None:
    # the block mapping's context is where it began (line 1), which would send an editor astray
    text = "a: 1\nb:\n  c: 2\n d: 3\n"
    assert _error(tmp_path, text).startswith(":4: invalid YAML:")


def test_union_member_labels_are_dropped_but_user_keys_named_like_them_stay() -> None:
    from pydantic import BaseModel

    from paretosched.yamlio import validate

    class Inner(BaseModel):
        k: int

    class M(BaseModel):
        platform: str | Inner
        table: dict[str, Inner]

    with pytest.raises(UserError, match=r"^m.yaml: platform: Input should be a valid string \(got 5\)"):
        validate(M, {"platform": 5, "table": {}}, "m.yaml")
    with pytest.raises(UserError, match=r"^m.yaml: table.none: expected a mapping"):
        validate(M, {"platform": "x", "table": {"none": 5}}, "m.yaml")
    with pytest.raises(UserError, match=r"^m.yaml: table.str.k: Input should be a valid integer"):
        validate(M, {"platform": "x", "table": {"str": {"k": "a"}}}, "m.yaml")


def test_a_misspelt_key_gets_a_suggestion_and_the_next_error_is_named(tmp_path, capsys):
    # "unknown key [+1 more]" named neither the key meant nor the second problem
    from paretosched.cli import main

    cfg = tmp_path / "typo.yaml"
    cfg.write_text('platform: gaia-mini\nworkload: {path: "builtin:hpc2n-3k.swf.gz", n_jobs: 50}\n'
                   "scheduler: {job_polcy: first, backfiling: easy}\n")
    assert main(["simulate", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("typo.yaml: scheduler.job_polcy: unknown key (did you mean 'job_policy'?) "
                        "[+1 more: scheduler.backfiling: unknown key (did you mean 'backfilling'?)]")
    cfg.write_text('platform: gaia-mini\nworkload: {path: "builtin:hpc2n-3k.swf.gz", n_jobs: 50}\nzzz: 1\n')
    assert main(["simulate", str(cfg)]) == 2
    assert capsys.readouterr().err.strip().endswith("typo.yaml: zzz: unknown key")  # nothing close: no guess
