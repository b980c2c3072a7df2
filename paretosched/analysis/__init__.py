"""Analysis of a run directory: front, picks, clusters and drivers, figures, explorer, export.

Sits above `paretosched.search` (it reads run directories); nothing below imports it.
"""
