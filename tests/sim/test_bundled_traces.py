"""The bundled trace fragments are exact windows of the PWA traces the studies were written for."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from paretosched.config import config_from_dict
from paretosched.sim.readers.inputs import trace_file
from paretosched.sim.run import simulate

# where the full PWA traces live on the development machine (not in a clone)
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "workloads"
SHARED_CANDIDATES = [SHARED, Path("/work/shared/workloads")]


def _shared(name: str) -> Path | None:
    return next((d / name for d in SHARED_CANDIDATES if (d / name).is_file()), None)


def _job_lines(path: Path) -> list[str]:
    with gzip.open(path, "rt") as fh:
        return [line for line in fh if line.strip() and not line.startswith(";")]


def test_sdsc_blue_fragment_is_the_gaia_classic_window() -> None:
    # studies/gaia-classic.yaml reads these 3,000 job lines; the checksum pins them
    lines = _job_lines(trace_file("builtin:sdsc-blue-20k.swf.gz"))
    assert len(lines) == 3000
    assert lines[0].split()[0] == "20486"
    assert hashlib.sha256("".join(lines).encode()).hexdigest() == \
        "49dccfec9d8c2bd9e15bdcb2289075cacd5f0badd0a615cb3e4731ba7668b680"


def _run(path: str, first_job: int) -> tuple[dict, list]:
    cfg = config_from_dict({"platform": "gaia",
                            "workload": {"path": path, "mode": "trace", "first_job": first_job, "n_jobs": 3000},
                            "scheduler": {"job_policy": "first", "resource_policy": "high_gflops",
                                          "backfilling": "easy"}})
    res = simulate(cfg, seed=1, record_jobs=True)
    return res.metrics, res.jobs


def test_sdsc_blue_fragment_yields_the_same_jobs_as_the_full_trace() -> None:
    full = _shared("SDSC-BLUE-2000-4.2-cln.swf.gz")
    if full is None:
        pytest.skip("the full SDSC-BLUE trace is not on this machine")
    m_frag, jobs_frag = _run("builtin:sdsc-blue-20k.swf.gz", 0)
    m_full, jobs_full = _run(str(full), 20000)
    assert len(jobs_frag) == len(jobs_full) > 2800
    assert jobs_frag == jobs_full
    assert m_frag == m_full
