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
