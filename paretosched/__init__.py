"""paretosched: tune an HPC cluster's scheduler for energy vs. slowdown on a digital twin."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# the Python API (docs/api.md), imported on first use: `import paretosched` stays light for
# the workers that only need the twin
_API = {"simulate": "paretosched.api", "optimise": "paretosched.api", "optimize": "paretosched.api",
        "Simulation": "paretosched.api", "load_run": "paretosched.runs", "Run": "paretosched.runs"}
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'paretosched' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
