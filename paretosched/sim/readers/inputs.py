"""Where a config's input files are: bundled data (`builtin:NAME`), files, or none (inline)."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

from paretosched.config import BUILTIN_PREFIX
from paretosched.yamlio import did_you_mean

# a bundled file's name: no separator, no leading dot, so `builtin:../../etc/passwd` cannot
# leave the data folder
_BUNDLED_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def bundled(kind: str, name: str) -> Path | None:
    """A file shipped in `paretosched/data/<kind>/`, or None (also for a name that is a path)."""
    if not _BUNDLED_NAME.fullmatch(name):
        return None
    res = resources.files("paretosched.data").joinpath(kind, name)
    return Path(str(res)) if res.is_file() else None


def trace_file(ref: str) -> Path:
    """The trace a `workload.path` names (`builtin:NAME` resolves to the bundled fragment)."""
    if ref.startswith(BUILTIN_PREFIX):
        # the slurm quickstart's sacct dump ships beside its slurm.conf
        found = bundled("traces", ref[len(BUILTIN_PREFIX):]) or bundled("slurm", ref[len(BUILTIN_PREFIX):])
        if found is None:
            from paretosched.errors import UserError

            name, traces = ref[len(BUILTIN_PREFIX):], bundled_traces()
            raise UserError(f"workload.path: no bundled trace {name!r}{did_you_mean(name, traces)} "
                            f"(bundled: {', '.join(BUILTIN_PREFIX + t for t in traces)})")
        return found
    return Path(ref)


def bundled_traces() -> list[str]:
    """Names of the bundled workload traces (`builtin:NAME`), the slurm quickstart's sacct dump too."""
    data = resources.files("paretosched.data")
    found = [f.name for f in data.joinpath("traces").iterdir() if f.name.endswith((".swf", ".swf.gz"))]
    return sorted(found) + [f.name for f in data.joinpath("slurm").iterdir() if f.name.startswith("sacct")]


def platform_file(ref: Any) -> Path | None:
    """The file a `platform` reference reads; None for inline platforms and `homogeneous-N`."""
    if not isinstance(ref, str):
        return None
    found = bundled("platforms", ref.removeprefix(BUILTIN_PREFIX) + ".yaml")
    if found is not None:
        return found
    path = Path(ref)
    return path if path.is_file() else None


def input_files(cfg: dict[str, Any]) -> dict[str, str | None]:
    """The files a config dict reads, for content hashing: trace and platform (None when none)."""
    wl = (cfg.get("workload") or {}).get("path")
    trace = None
    if isinstance(wl, str):
        try:
            p = trace_file(wl)
            trace = str(p) if p.is_file() else None
        except Exception:  # an unknown bundled name: the run itself will report it  # noqa: BLE001
            trace = None
    plat = platform_file(cfg.get("platform"))
    return {"trace": trace, "platform": str(plat) if plat is not None else None}


def trace_path(ref: str) -> str:
    """A workload path, with `builtin:NAME` resolved to the bundled trace fragment."""
    return str(trace_file(ref))
