"""The twin's inputs: where files are, SWF and sacct traces, platform files, slurm.conf imports."""
