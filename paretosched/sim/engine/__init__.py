"""The twin's engine: the SimPy clock, processor and node state, starting and pacing jobs, node power, the
timeline and per-run metrics. It knows no policy: a scheduler object decides (`sim/schedulers.py`)."""
