"""EndOrder under lockstep progress files a running job by its first part (`lockstep_end`): the
same float as the pass over all its parts (`raw_end`), whatever re-pacing happened."""

from __future__ import annotations

import pytest

from paretosched.config import config_from_dict
from paretosched.sim.backfill import end_order
from paretosched.sim.run import simulate


@pytest.mark.parametrize("interference", ["thesis", "proportional"])
@pytest.mark.parametrize("backfilling", ["easy", "conservative"])
def test_lockstep_end_is_raw_end(interference, backfilling, monkeypatch):
    checked = []
    sync = end_order.EndOrder.sync

    def checked_sync(self):
        sync(self)
        assert self._raw_end is end_order.lockstep_end
        for job, est in self.est.items():
            assert est.hex() == end_order.raw_end(job).hex()
            checked.append(len(job.groups))

    monkeypatch.setattr(end_order.EndOrder, "sync", checked_sync)
    cfg = config_from_dict({"platform": "gaia-mini", "seed": 3,
                            "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": 300},
                            "model": {"interference": interference, "progress": "lockstep"},
                            "scheduler": {"job_policy": "first", "resource_policy": "high_mem_bw",
                                          "backfilling": backfilling}})
    simulate(cfg)
    assert len(checked) > 1000 and max(checked) > 1  # many jobs, some on several processors


def test_independent_progress_keeps_the_pass_over_parts():
    cfg = config_from_dict({"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": 5},
                            "model": {"progress": "independent"}, "scheduler": {"backfilling": "easy"}})
    from paretosched.sim.engine.twin import Twin
    from paretosched.sim.run import prepare

    prep = prepare(cfg)
    twin = Twin(prep.platform, [], cfg.model, cfg.scheduler)
    assert end_order.EndOrder(twin)._raw_end is end_order.raw_end
