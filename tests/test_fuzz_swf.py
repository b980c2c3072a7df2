"""Fuzzing SWF traces through `paretosched simulate` (in-process): malformed fields, truncation,
NaN/inf, huge values, BOM, CRLF, corrupt gzip. Every outcome is sound metrics or exit 2 with
one line naming file:line. `-m slow` runs many more examples."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.adv import GOOD_FIELDS
from tests.fuzz import FAST, SLOW, check_outcome, fresh

TOKENS = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e999", "2.7", "1_000", "0x10", "+4", "-0", "1e3", "٣",
                     "", "-", "--1", "1.", ".5", "99999999999999999999999", "-99999999999999", "１"]),
    st.integers(-10**14, 10**14).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=6),
)


@st.composite
def traces(draw) -> bytes:
    n = draw(st.integers(1, 6))
    lines = []
    for i in range(n):
        f = list(GOOD_FIELDS)
        f[0], f[1] = str(i + 1), str(10 * i)
        for _ in range(draw(st.integers(0, 2))):
            k = draw(st.integers(0, 18))
            tok = draw(TOKENS)
            if k < 18:
                f[k] = tok
            else:
                f.append(tok)
        if draw(st.booleans()):
            f = f[: draw(st.integers(0, 19))]
        lines.append(" ".join(f))
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8", errors="surrogatepass")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    cut = draw(st.one_of(st.none(), st.integers(0, max(0, len(data) - 1))))
    return data if cut is None else data[:cut]


def _simulate(tmp_path, data: bytes, suffix: str = ".swf"):
    trace = fresh(tmp_path, suffix)
    trace.write_bytes(data)
    cfg = fresh(tmp_path, ".yaml")
    cfg.write_text(f"platform: homogeneous-4\nworkload: {{path: {trace.name}}}\n")
    return check_outcome(["simulate", str(cfg), "--json"], tmp_path, trace.name)


def _check_trace(tmp_path, data: bytes) -> None:
    before = set(tmp_path.iterdir())
    _simulate(tmp_path, data)
    for p in set(tmp_path.iterdir()) - before:
        p.unlink()


@FAST
@given(data=traces())
def test_fuzzed_traces(tmp_path, data):
    _check_trace(tmp_path, data)


@st.composite
def damaged_gzip(draw) -> bytes:
    good = "".join(" ".join([str(i), str(10 * i), *GOOD_FIELDS[2:]]) + "\n" for i in range(1, 400)).encode()
    blob = bytearray(gzip.compress(good, mtime=0))
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.integers(0, len(blob) - 1))
        blob[k] = draw(st.integers(0, 255))
    cut = draw(st.one_of(st.none(), st.integers(2, len(blob))))
    return bytes(blob if cut is None else blob[:cut])


@FAST
@given(data=damaged_gzip())
def test_fuzzed_gzip(tmp_path, data):
    before = set(tmp_path.iterdir())
    _simulate(tmp_path, data, ".swf.gz")
    for p in set(tmp_path.iterdir()) - before:
        p.unlink()


@pytest.mark.slow
@SLOW
@given(data=traces())
def test_fuzzed_traces_slow(tmp_path, data):
    _check_trace(tmp_path, data)


@pytest.mark.slow
@SLOW
@given(data=damaged_gzip())
def test_fuzzed_gzip_slow(tmp_path, data):
    test_fuzzed_gzip.hypothesis.inner_test(tmp_path, data)
