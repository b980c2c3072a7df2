"""The sacct import: requeued duplicates, negative NCPUS, empty imports, time-limit ranges."""

from __future__ import annotations

import pytest

from paretosched.cli import main
from paretosched.errors import UserError
from paretosched.sim.readers.slurm.sacct import DUPLICATE, parse_timelimit, read_sacct

HEAD = "JobIDRaw|Submit|Start|End|Timelimit|NCPUS|NNodes|ReqMem|State|User"
T = "2024-01-01T10:00:00"


def _row(jid: str, start: str, end: str, cores: int, state: str = "COMPLETED", user: str = "a") -> str:
    """A record submitted at T with a 1 h limit, 1 node and 1G; start and end as HH:MM:SS on T's day."""
    return f"{jid}|{T}|2024-01-01T{start}|2024-01-01T{end}|01:00:00|{cores}|1|1G|{state}|{user}"


def _dump(tmp_path, *rows):
    p = tmp_path / "dump.txt"
    p.write_text("\n".join([HEAD, *rows]) + "\n")
    return p


def test_a_requeued_job_listed_twice_is_its_last_run_not_a_merged_job(tmp_path):
    # sacct -D: job 5 ran 10 min on 4 cores, was requeued, then ran 30 min on 8 cores
    p = _dump(tmp_path, _row("5", "10:01:00", "10:11:00", 4, "REQUEUED"), _row("5", "10:20:00", "10:50:00", 8),
              _row("6", "10:00:10", "10:00:40", 2, user="b"))
    conv = read_sacct(p)
    assert len(conv.jobs) == 2
    five = conv.jobs[0]
    assert five[2:5] == [1200, 1800, 8] and five[10] == 1  # wait, run, cores, status of the last run
    assert conv.report.skipped == {DUPLICATE: 1}
    assert "heterogeneous-job components merged" not in conv.report.counts


def test_heterogeneous_components_are_still_merged_and_their_duplicates_are_runs(tmp_path):
    p = _dump(tmp_path, _row("7+0", "10:01:00", "10:11:00", 4), _row("7+1", "10:01:00", "10:21:00", 2),
              _row("7+1", "10:01:00", "10:31:00", 2))
    conv = read_sacct(p)
    assert [j[4] for j in conv.jobs] == [6] and conv.jobs[0][3] == 1800
    assert conv.report.counts["heterogeneous-job components merged"] == 2 and conv.report.skipped == {DUPLICATE: 1}


def test_negative_ncpus_is_a_malformed_line_and_zero_is_named(tmp_path):
    with pytest.raises(UserError, match=r"dump.txt:3: NCPUS/NNodes must not be negative, got -4/1"):
        read_sacct(_dump(tmp_path, f"1|{T}|{T}|2024-01-01T10:01:00|01:00|1|1|1G|COMPLETED|a",
                         f"2|{T}|{T}|2024-01-01T10:01:00|01:00|-4|1|1G|COMPLETED|a"))
    conv = read_sacct(_dump(tmp_path, f"1|{T}|{T}|2024-01-01T10:01:00|01:00|1|1|1G|COMPLETED|a",
                            f"2|{T}|{T}|2024-01-01T10:01:00|01:00|0|1|1G|COMPLETED|a"))
    assert conv.report.skipped == {"no cores (NCPUS 0)": 1}


def test_an_import_without_jobs_is_an_error_naming_the_file_and_the_reasons(tmp_path, capsys):
    p = _dump(tmp_path, f"1|{T}|Unknown|Unknown|01:00|1|1|1G|PENDING|a",
              f"2.batch|{T}|{T}|2024-01-01T10:01:00|01:00|1|1|1G|COMPLETED|a")
    out = tmp_path / "out.swf"
    assert main(["trace", "import", str(p), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "dump.txt: no job to import from 2 record(s)" in err and len(err.splitlines()) == 1
    assert "1 never started (pending or cancelled)" in err and "1 job step (dump with -X)" in err
    assert not out.exists()


@pytest.mark.parametrize("text", ["1-99:00:00", "1-24", "1-23:60:00", "1-00:00:60", "10:60:00", "10:00:75",
                                  "05:60", "1-2:3:4:5"])
def test_timelimit_fields_out_of_range_are_rejected(text):
    with pytest.raises(ValueError):
        parse_timelimit(text)


def test_timelimit_leading_field_may_be_large():
    assert parse_timelimit("1-23:59:59") == 86400 + 86399
    assert parse_timelimit("100:00:00") == 360000 and parse_timelimit("90:30") == 5430
    assert parse_timelimit("300") == 18000


def test_timelimit_out_of_range_names_file_and_line(tmp_path):
    with pytest.raises(UserError, match=r"dump.txt:2: Timelimit '1-99:00:00' .*HH 0-23 after a day part"):
        read_sacct(_dump(tmp_path, f"1|{T}|{T}|2024-01-01T10:01:00|1-99:00:00|1|1|1G|COMPLETED|a"))
