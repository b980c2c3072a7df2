"""The `slurm` scheduler kind: Slurm 22.05's priority, backfill plan, dispatch timing and power saving."""
