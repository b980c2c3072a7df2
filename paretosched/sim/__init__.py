"""The digital twin: platform model, workloads, SimPy engine, policies, metrics.

Imports nothing of search or analysis, and nothing heavy (no pandas, plotly, pymoo, sklearn).
"""

from paretosched import __version__

# Bumped whenever a change can alter any simulated number; part of every cache key.
TWIN_VERSION = "7"  # 7: conservative backfilling keeps and compresses its reservations (issue 14)


def twin_version() -> str:
    """The package and twin versions, as recorded in runs and exports (e.g. `0.1.0+twin.3`)."""
    return f"{__version__}+twin.{TWIN_VERSION}"
