"""Where a job runs: the job and resource policies (thesis table 3.2), the spread indexes that serve them,
and taking cores from processors."""
