"""sacct dumps -> SWF: every record kind of the issue, errors naming file:line, and a round trip."""

from __future__ import annotations

import gzip
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.cli import main
from paretosched.errors import UserError
from paretosched.sim.readers.slurm.sacct import is_sacct_dump, parse_reqmem, parse_timelimit, read_sacct
from paretosched.sim.readers.workload import read_swf

HEAD = "JobID|Submit|Start|End|Timelimit|NCPUS|NNodes|ReqMem|State|User"
T = "2024-01-01T10:00:00"


def _dump(tmp_path, *rows, head=HEAD):
    p = tmp_path / "sacct.txt"
    p.write_text("\n".join([head, *rows]) + "\n")
    return p


def test_timelimit_forms():
    assert parse_timelimit("1-02:03:04") == 93784
    assert parse_timelimit("02:03:04") == 7384
    assert parse_timelimit("05:30") == 330
    assert parse_timelimit("45") == 2700
    assert parse_timelimit("2-12") == 2 * 86400 + 12 * 3600
    assert parse_timelimit("UNLIMITED") is None and parse_timelimit("Partition_Limit") is None
    with pytest.raises(ValueError):
        parse_timelimit("1:2:3:4")


def test_reqmem_forms():
    # (KB per core, read per node without a suffix) for 8 cores on 2 nodes (4 per node)
    assert parse_reqmem("2000Mc", 8, 2) == (2000 * 1024, False)
    assert parse_reqmem("16000Mn", 8, 2) == (4000 * 1024, False)
    assert parse_reqmem("4G", 8, 2) == (1024 * 1024, True)
    assert parse_reqmem("4000M", 8, 2) == (1000 * 1024, True)
    assert parse_reqmem("0n", 8, 2) == (-1.0, False) and parse_reqmem("", 8, 2) == (-1.0, False)
    with pytest.raises(ValueError):
        parse_reqmem("lots", 1, 1)


def test_every_record_kind(tmp_path):
    p = _dump(tmp_path,
              f"100|{T}|2024-01-01T10:01:00|2024-01-01T10:11:00|00:20:00|4|1|2000Mc|COMPLETED|alice",
              f"100.batch|{T}|2024-01-01T10:01:00|2024-01-01T10:11:00||4|1||COMPLETED|",
              f"100.extern|{T}|2024-01-01T10:01:00|2024-01-01T10:11:00||4|1||COMPLETED|",
              f"100.0|{T}|2024-01-01T10:01:00|2024-01-01T10:11:00||4|1||COMPLETED|",
              f"101_3|{T}|2024-01-01T10:02:00|2024-01-01T10:03:00|05:00|1|1|4G|FAILED|bob",
              f"101_[4-9]|{T}|Unknown|Unknown|05:00|1|1|4G|PENDING|bob",
              f"102+0|{T}|2024-01-01T10:00:30|2024-01-01T10:30:00|1-00:00:00|8|1|1000Mc|COMPLETED|carol",
              f"102+1|{T}|2024-01-01T10:00:30|2024-01-01T10:40:00|1-00:00:00|2|1|8000Mn|COMPLETED|carol",
              f"103|{T}|Unknown|Unknown|UNLIMITED|2|1|1G|PENDING|alice",
              f"104|{T}|2024-01-01T10:05:00|Unknown|Partition_Limit|2|1|1G|RUNNING|alice",
              f"105|{T}|None|2024-01-01T10:06:00|01:00:00|2|1|1G|CANCELLED by 1234|alice",
              f"106|{T}|2024-01-01T10:05:00|2024-01-01T11:05:00|01:00:00|2|1|1G|TIMEOUT|dave",
              f"107|{T}|2024-01-01T10:05:00|2024-01-01T10:06:00|01:00:00|2|1|1G|CANCELLED by 1234|dave",
              f"108|{T}|2024-01-01T10:05:00|2024-01-01T10:06:00|UNLIMITED|2|1|1G|OUT_OF_MEMORY|dave",
              f"109|{T}|2024-01-01T10:05:00|2024-01-01T10:06:00|01:00:00|2|1|1G|NODE_FAIL|dave",
              f"110|{T}|2024-01-01T10:05:00|2024-01-01T10:06:00|01:00:00|2|1|1G|PREEMPTED|dave",
              f"111|{T}|2024-01-01T10:05:00|2024-01-01T10:06:00|01:00:00|2|1|1G|REQUEUED|dave",
              f"112|{T}|2024-01-01T10:05:00|2024-01-01T10:06:00|01:00:00|2|1|1G|SPECIAL_EXIT|dave")
    conv = read_sacct(p)
    rep = conv.report
    assert rep.records == 18
    assert rep.skipped == {"job step (dump with -X)": 3, "pending array (not yet split)": 1,
                           "never started (pending or cancelled)": 2, "still running (no end)": 1,
                           "state SPECIAL_EXIT": 1}
    assert rep.counts["heterogeneous-job components merged"] == 2
    assert rep.counts["jobs without a time limit (request = run time)"] == 1
    jobs = {round(j[3]): j for j in conv.jobs}
    assert len(conv.jobs) == 9
    j100 = conv.jobs[0]  # first record: submit 0, wait 60, run 600, 4 cores, 20 min, 2000 MB per core, user 1
    assert j100[1:5] == [0, 60, 600, 4] and j100[8] == 1200 and j100[9] == 2000 * 1024 and j100[10:12] == [1, 1]
    het = jobs[2370]  # merged: 10 cores, starts 30 s after submit, ends with its longest part
    assert het[2] == 30 and het[4] == het[7] == 10 and het[9] == 4000 * 1024 and het[11] == 3
    statuses = sorted(j[10] for j in conv.jobs)
    assert statuses == [0, 0, 0, 0, 1, 1, 5, 5, 5]  # FAILED TIMEOUT OOM NODE_FAIL; COMPLETED x2; CANCELLED PREEMPTED REQUEUED
    timeout = next(j for j in conv.jobs if j[3] == 3600)
    assert timeout[8] == 3600 and timeout[10] == 0
    oom = [j for j in conv.jobs if j[8] == -1]
    assert len(oom) == 1 and oom[0][10] == 0


@pytest.mark.parametrize("row, msg", [
    (f"x1|{T}|{T}|{T}|01:00|1|1|1G|COMPLETED|a", r"sacct.txt:2: job id 'x1' is not a Slurm job id"),
    (f"1|yesterday|{T}|{T}|01:00|1|1|1G|COMPLETED|a", r"sacct.txt:2: Submit/Start/End must be ISO times"),
    (f"1|{T}|{T}|{T}|soon|1|1|1G|COMPLETED|a", r"sacct.txt:2: Timelimit 'soon'"),
    (f"1|{T}|{T}|{T}|01:00|one|1|1G|COMPLETED|a", r"sacct.txt:2: NCPUS/NNodes must be integers"),
    (f"1|{T}|{T}|{T}|01:00|1|1|big|COMPLETED|a", r"sacct.txt:2: ReqMem 'big'"),
    (f"1|{T}|{T}|{T}|01:00|1|1|1G|COMPLETED", r"sacct.txt:2: 9 fields, the header has 10"),
    (f"1|{T}|2024-01-01T09:00:00|{T}|01:00|1|1|1G|COMPLETED|a", r"sacct.txt:2: times out of order"),
])
def test_malformed_records_name_file_and_line(tmp_path, row, msg):
    with pytest.raises(UserError, match=msg):
        read_sacct(_dump(tmp_path, row))


def test_header_needs_the_required_columns(tmp_path):
    with pytest.raises(UserError, match=r"sacct.txt:1: sacct header lacks start, end"):
        read_sacct(_dump(tmp_path, "1|x", head="JobID|Submit|NCPUS|State|Foo"))


def test_cli_trace_import_and_workload_path(tmp_path, capsys):
    p = _dump(tmp_path, f"7|{T}|2024-01-01T10:00:10|2024-01-01T10:01:10|10:00|2|1|1G|COMPLETED|a",
              f"8|2024-01-01T10:00:05|2024-01-01T10:00:15|2024-01-01T10:00:45|10:00|1|1|512Mc|COMPLETED|b",
              head="JobID|Submit|Start|End|Timelimit|NCPUS|NNodes|ReqMem|State|User")
    assert is_sacct_dump(p)
    out = tmp_path / "t.swf.gz"
    assert main(["trace", "import", str(p), "-o", str(out)]) == 0
    text = gzip.open(out, "rt").read()
    assert "1 0 10 60 2 -1 -1 2 600 524288 1 1 -1 -1 -1 -1 -1 -1" in text
    raw = read_swf(p)  # a workload path naming the dump directly
    assert not is_sacct_dump(out)
    assert raw.submit == [0.0, 5.0] and raw.run == [60.0, 30.0] and raw.req_mem_kb == [524288.0, 524288.0]
    p.write_text("JobID|Submit\n1|x|y\n")
    assert main(["trace", "import", str(p), "-o", str(out), "--force"]) == 2
    assert "sacct.txt:1: sacct header lacks" in capsys.readouterr().err


def _to_sacct(jobs: list[tuple[int, int, int, int, int]], per_node: list[bool]) -> str:
    """SWF-like (submit, wait, run, cores, MB per core) jobs written as an sacct -X -P dump."""
    t0 = datetime(2023, 6, 1)
    lines = ["JobIDRaw|Submit|Start|End|Timelimit|NCPUS|NNodes|ReqMem|State|User"]
    for k, ((submit, wait, run, cores, mb), pn) in enumerate(zip(jobs, per_node), start=1):
        s = t0 + timedelta(seconds=submit)
        mem = f"{mb * cores}Mn" if pn else f"{mb}Mc"
        lines.append(f"{k}|{s.isoformat()}|{(s + timedelta(seconds=wait)).isoformat()}|"
                     f"{(s + timedelta(seconds=wait + run)).isoformat()}|UNLIMITED|{cores}|1|{mem}|COMPLETED|u{k % 3}")
    return "\n".join(lines) + "\n"


_job = st.tuples(st.integers(0, 10**7), st.integers(0, 10**6), st.integers(1, 10**6), st.integers(1, 256),
                 st.integers(1, 10**5))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_job, st.booleans()), min_size=1, max_size=30))
def test_swf_sacct_swf_round_trip_keeps_each_job(tmp_path_factory, items):
    jobs = [j for j, _ in items]
    p = tmp_path_factory.mktemp("rt") / "sacct.txt"
    p.write_text(_to_sacct(jobs, [pn for _, pn in items]))
    conv = read_sacct(p)
    t0 = min(j[0] for j in jobs)
    want = sorted((s - t0, w, r, c, mb * 1024) for s, w, r, c, mb in jobs)
    got = sorted((j[1], j[2], j[3], j[4], j[9]) for j in conv.jobs)
    assert got == want
    assert all(j[4] == j[7] for j in conv.jobs)  # allocated = requested cores


def test_bundled_sample_dump_simulates():
    from paretosched.config import config_from_dict
    from paretosched.sim.run import prepare, simulate

    cfg = config_from_dict({"platform": "homogeneous-640", "workload": {"path": "builtin:sacct-sample.txt"}})
    prep = prepare(cfg)
    assert len(prep.raw) == 367  # 396 records: 24 steps, a pending array, 3 never ran or still running, a het pair
    res = simulate(cfg, prepared=prep)
    assert res.load["loaded"] == 367 and res.metrics["n_jobs"] == 367
