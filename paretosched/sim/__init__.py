"""The digital twin: platform model, workloads, SimPy engine, policies, metrics.

Imports nothing of search or analysis, and nothing heavy (no pandas, plotly, pymoo, sklearn).
"""

# Bumped whenever a change can alter any simulated number; part of every cache key.
TWIN_VERSION = "3"
