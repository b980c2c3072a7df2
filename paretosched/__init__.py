"""paretosched: tune an HPC cluster's scheduler for energy vs. slowdown on a digital twin."""

__version__ = "0.1.0"
