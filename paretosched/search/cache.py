"""Content-addressed cache of single simulations (config x seed -> metrics).

Key = sha256 of the canonical JSON of: the decoded config, the seed, the sha256 of the
trace file and of the platform file the config refers to, the package version, the
twin's version and, for any evaluator but the twin, its 'module:function' (an analytic
evaluator must never be served the twin's numbers, nor the reverse). So a changed trace, platform or twin never returns stale numbers, and any
run of a study (or another study with the same config) reuses results.

One small JSON file per key under `<dir>/<key[:2]>/<key>.json`, written atomically and never
through a link (search/files.py), so concurrent runs and processes can share a cache without
locks (last writer wins with identical content). Only successes whose every metric is a finite
number are stored; an entry that is not one (damaged, hand-edited, NaN) is a miss, recomputed.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from paretosched.search.files import atomic_write_text, dumps, finite, loads, make_dirs
from paretosched.search.space import canonical

from paretosched.sim import twin_version
from paretosched.sim.readers.inputs import input_files  # noqa: E402  (the twin owns where inputs live)


@lru_cache(maxsize=64)
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes, memoised on (path, mtime, size)."""
    st = os.stat(path)
    return _file_sha256(str(path), st.st_mtime_ns, st.st_size)


def input_digest(cfg: dict[str, Any]) -> dict[str, str | None]:
    """sha256 of the trace and platform files of `cfg` (None when there is no file)."""
    return {k: (file_digest(p) if p is not None else None) for k, p in input_files(cfg).items()}


def cache_key(cfg: dict[str, Any], seed: int, digests: dict[str, str | None] | None = None,
              evaluator: str | None = None) -> str:
    """The content address of one simulation by `evaluator` ('module:function'; None = the twin)."""
    payload: dict[str, Any] = {
        "config": cfg,
        "seed": int(seed),
        "inputs": digests if digests is not None else input_digest(cfg),
        "version": twin_version(),
    }
    if evaluator is not None:  # absent for the twin, so its existing cache entries stay valid
        payload["evaluator"] = evaluator
    return hashlib.sha256(canonical(payload).encode()).hexdigest()


class Cache:
    """A directory of cached simulation results; `Cache(None)` is a disabled cache."""

    def __init__(self, directory: str | Path | None) -> None:
        self.dir = Path(directory) if directory is not None else None

    def _path(self, key: str) -> Path:
        assert self.dir is not None
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, float] | None:
        """Cached metrics, or None (also for an unreadable entry: it is simply recomputed)."""
        if self.dir is None:
            return None
        try:
            with open(self._path(key), "rb") as f:
                metrics = loads(f.read())["metrics"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return None
        if not isinstance(metrics, dict) or not all(isinstance(k, str) and finite(v) for k, v in metrics.items()):
            return None
        return metrics

    def put(self, key: str, metrics: dict[str, float]) -> None:
        if self.dir is None:
            return
        if not all(finite(v) for v in metrics.values()):
            return  # JSON has no inf or NaN: such a result is simulated again, never stored as another number
        path = self._path(key)
        make_dirs(path.parent, root=self.dir)
        atomic_write_text(path, dumps({"metrics": metrics}, indent=None), fsync=False, root=self.dir)
