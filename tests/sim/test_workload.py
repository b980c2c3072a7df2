"""SWF reading, windows, skips, enrichment."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.errors import UserError
from paretosched.sim.readers import workload
from paretosched.sim.readers.workload import ACCURACY_PROBS, ACCURACY_VALUES, build_jobs, read_swf

HEADER = "; Version: 2.2\n; MaxProcs: 8\n"


def _line(jid, submit, run, alloc, req_procs, req_time, req_mem=-1, used_mem=-1):
    f = [jid, submit, 0, run, alloc, -1, used_mem, req_procs, req_time, req_mem, 1, 1, 1, -1, 1, 1, -1, -1]
    return " ".join(str(x) for x in f) + "\n"


def _write(tmp_path, lines, gz=False, name="t.swf"):
    p = tmp_path / (name + (".gz" if gz else ""))
    text = HEADER + "".join(lines)
    if gz:
        with gzip.open(p, "wt") as fh:
            fh.write(text)
    else:
        p.write_text(text)
    return p


def test_window_and_fallbacks(tmp_path):
    lines = [_line(1, 100, 50, 4, -1, 100), _line(2, 160, 30, 2, 3, -1, req_mem=2048),
             _line(3, 170, 10, 1, 1, 20, used_mem=1024), _line(4, 200, 5, 1, 1, 10)]
    p = _write(tmp_path, lines, gz=True)
    raw = read_swf(p, first_job=1, n_jobs=2)
    assert raw.job_id == [2, 3]
    jobs, rep = build_jobs(raw, "trace", 2.0, np.random.default_rng(0))
    j2, j3 = jobs
    assert (j2.submit, j3.submit) == (0.0, 10.0)        # relative to the window's first job
    assert j2.size == 3 and j2.req_time == 30            # requested procs; requested time falls back to run
    assert j2.mem == 2.0 and j3.mem == 1.0               # KB -> MB, requested else used
    assert j2.ops == 30 * 2.0 and j3.req_ops == 20 * 2.0  # operations at the reference speed
    assert 4 <= j2.bw <= 24
    assert rep.loaded == 2 and rep.lines == 2


def test_empty_window_is_an_error_and_a_short_one_is_noted(tmp_path):
    from paretosched.errors import UserError
    from paretosched.sim.readers.workload import require_jobs, short_window_note

    p = _write(tmp_path, [_line(i, 100 * i, 50, 1, 1, 100) for i in range(1, 5)], gz=False)
    empty = read_swf(p, first_job=4, n_jobs=10)  # allowed here: RL training windows past the end are dropped
    assert len(empty) == 0 and empty.lines_read == 4
    with pytest.raises(UserError, match=r"skipping 4 job lines \(first_job\) leaves no job; the trace has 4 job lines"):
        require_jobs(empty, 4)
    raw = read_swf(p, first_job=1, n_jobs=10)
    assert raw.job_id == [2, 3, 4]
    assert short_window_note(raw, 1, 10).endswith("the window holds 3 jobs, fewer than n_jobs=10 "
                                                  "(the trace ends after job line 4)")
    assert short_window_note(raw, 1, 3) is None and short_window_note(raw, 1, None) is None


def test_allocated_procs_fallback_and_skips(tmp_path):
    lines = [_line(1, 0, 50, 4, -1, 100), _line(2, 1, -1, 2, 2, 10), _line(3, 2, 5, -1, -1, 10),
             _line(4, 3, 5, 64, 64, 10)]
    raw = read_swf(_write(tmp_path, lines))
    jobs, rep = build_jobs(raw, "trace", 1.0, np.random.default_rng(0), fits=lambda size, mem: size <= 8)
    assert [j.id for j in jobs] == [1] and jobs[0].size == 4
    assert rep.skipped == {"run_time_negative": 1, "size_not_positive": 1, "larger_than_platform": 1}


@pytest.mark.parametrize("bad,msg", [
    ("1 2 3\n", ":3: expected 18 SWF fields, got 3"),
    (_line(1, 0, 5, 1, 1, 10).replace(" 5 ", " x5 ", 1), ":3: field 4 (run time) is not a number: 'x5'"),
])
def test_malformed_line_names_file_and_line(tmp_path, bad, msg):
    p = _write(tmp_path, [bad], name=f"bad{len(bad)}.swf")
    with pytest.raises(UserError) as e:
        read_swf(p)
    assert str(e.value) == f"{p}{msg}"


def test_missing_trace(tmp_path):
    with pytest.raises(UserError, match="trace file not found"):
        read_swf(tmp_path / "nope.swf")


def test_hdeeprm_accuracy_distribution_per_job(tmp_path):
    # same profile for every job: HDeepRM drew U once per profile; we draw per job
    lines = [_line(i, i, 100, 1, 1, 1000) for i in range(1, 20001)]
    raw = read_swf(_write(tmp_path, lines, gz=True))
    jobs, _ = build_jobs(raw, "hdeeprm", 1.0, np.random.default_rng(42))
    u = np.array([j.ops / 1000.0 for j in jobs])
    assert len(set(np.round(u, 2))) == 25
    assert np.mean(u > 1.0) == pytest.approx(0.20, abs=0.01)   # about 20% overrun their request
    assert np.mean(np.isclose(u, 0.05)) == pytest.approx(0.15, abs=0.01)
    expected_mean = float(np.dot(ACCURACY_VALUES, ACCURACY_PROBS))
    assert u.mean() == pytest.approx(expected_mean, rel=0.02)
    assert set(j.bw for j in jobs) <= {4.0, 8.0, 12.0, 16.0, 20.0, 24.0}


def test_accuracy_table_is_a_distribution():
    assert len(ACCURACY_VALUES) == len(ACCURACY_PROBS) == 25
    assert sum(ACCURACY_PROBS) == pytest.approx(1.0)


# tokens near every edge of `_field`'s grammar: signs, exponents, dots, unicode digits and
# spaces (float() takes '٣' and '１'), non-finite and out-of-range values
_TOKENS = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "1e999", "-1e999", "2.7", "1_000", "0x10", "+4", "-0", "1e3", "٣", "１",
                     "-", "--1", "1.", ".5", "-.5", "1e12", "-1e12", "1000000000001", "-1000000000001",
                     "1e+12", "1E-3", "5e", "\u00a01", "7"]),
    st.integers(-10**13, 10**13).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


@st.composite
def _job_lines(draw) -> str:
    """A valid job line of 18 or 19 fields, with up to two fields swapped for edge tokens."""
    n = draw(st.sampled_from([17, 18, 18, 19, 19, 20]))
    f = [draw(st.integers(-10**12, 10**12)).__str__() for _ in range(n)]
    for _ in range(draw(st.integers(0, 2))):
        f[draw(st.integers(0, n - 1))] = draw(_TOKENS)
    return draw(st.sampled_from([" ", "\t", "  ", " \u3000 "])).join(f).strip()


@settings(max_examples=400, deadline=None)
@given(s=_job_lines())
def test_whole_line_check_parses_as_the_per_field_path(s):
    """The one-match check of a job line accepts exactly what the per-field path accepts, with the
    same values, and every other line still gets the per-field path's error."""
    def parse() -> tuple[list, str]:
        raw = workload.RawJobs(source="t")
        try:
            workload._parse_line(raw, s, "t.swf", 3)
        except UserError as exc:
            return [], str(exc)
        return [raw.job_id, raw.submit, raw.run, raw.alloc, raw.used_mem_kb, raw.req_procs, raw.req_time,
                raw.req_mem_kb, raw.bw, raw.user], ""

    fast = parse()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(workload, "_LINE", {n: re.compile("(?!)") for n in (18, 19)})  # never matches
        slow = parse()
    assert repr(fast) == repr(slow)  # repr: -0.0 and 0.0 differ there


def test_sacct_reader_loaded_only_for_a_bar_separated_header(tmp_path):
    """An SWF trace never loads the sacct reader (~5 ms of a `simulate`); an sacct dump still reads."""
    import subprocess
    import sys

    swf = _write(tmp_path, [_line(1, 0, 10, 1, 1, 20)], gz=True)
    dump = tmp_path / "d.txt"
    dump.write_text("JobID|Submit|Start|End|NCPUS|State\n"
                    "5|2024-01-01T10:00:00|2024-01-01T10:00:10|2024-01-01T10:01:10|2|COMPLETED\n")
    code = ("import sys; from paretosched.sim.readers.workload import read_swf; r = read_swf(sys.argv[1]); "
            "print(r.run, 'paretosched.sim.readers.slurm.sacct' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, check=True).stdout
            for p in (swf, dump)]
    assert runs == ["[10.0] False\n", "[60.0] True\n"]
    bad = tmp_path / "bad.swf"
    bad.write_text("1 | 2\n")
    with pytest.raises(UserError, match="bad.swf"):
        read_swf(bad)
