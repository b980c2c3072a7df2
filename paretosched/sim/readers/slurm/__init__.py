"""Slurm inputs: slurm.conf node lines -> platform, sacct dumps -> SWF (no search/analysis imports)."""
