"""The default evaluation function: one twin run of a config dict on one seed.

Runs inside workers (joblib/loky processes, Dask workers). The platform and the trace
window are parsed once per worker process and reused (`prepare` is memoised by the
content of the workload and platform parts of the config plus the input files' hashes),
because parsing a trace costs more than simulating a small window.
"""

from __future__ import annotations

from typing import Any

from paretosched.search.cache import input_digest
from paretosched.search.space import canonical

_PREPARED: dict[str, Any] = {}
_MAX_PREPARED = 8  # a study uses one workload/platform; baselines may add a few


def _prepared_key(cfg: dict[str, Any]) -> str:
    return canonical([cfg.get("platform"), cfg.get("workload"), input_digest(cfg)])


def evaluate(cfg: dict[str, Any], seed: int) -> dict[str, float]:
    """Metrics of `cfg` on `seed` (the twin's `simulate(...).metrics`)."""
    from paretosched.config import config_from_dict
    from paretosched.sim.run import simulate

    sim_cfg = config_from_dict(cfg, "genome")
    return dict(simulate(sim_cfg, seed=seed, prepared=_prepared(cfg, sim_cfg)).metrics)


def _prepared(cfg: dict[str, Any], sim_cfg: Any) -> Any:
    from paretosched.sim.run import prepare

    key = _prepared_key(cfg)
    prep = _PREPARED.get(key)
    if prep is None:
        if len(_PREPARED) >= _MAX_PREPARED:
            _PREPARED.pop(next(iter(_PREPARED)))
        prep = _PREPARED[key] = prepare(sim_cfg)
    return prep


def check_inputs(cfg: dict[str, Any]) -> str | None:
    """Parse `cfg`'s platform and trace window here, before any worker starts, so a missing
    file, an unknown platform or an empty window is one error rather than every evaluation
    failing; returns a note when the trace ends before the window does. In a serial run the
    parsed inputs are then reused by `evaluate`."""
    from paretosched.config import config_from_dict
    from paretosched.sim.run import window_note

    sim_cfg = config_from_dict(cfg, "base")
    return window_note(sim_cfg, _prepared(cfg, sim_cfg))

