"""The digital twin: platform model, workloads, SimPy engine, policies, metrics.

Imports nothing of search or analysis, and nothing heavy (no pandas, plotly, pymoo, sklearn).
Its rooms, each importing only those below it:

- `run.py`: one simulation of a config (`simulate`); `schedulers.py` builds the scheduler object
- `rl/`: the RL scheduler kind (agents, training, the environment it observes)
- `slurm/`: the `slurm` scheduler kind (priority, backfill plan, dispatch timing, power saving)
- `backfill/`: the backfilling strategies (none, EASY, conservative) that run a classic policy pair
- `placement/`: job and resource policies (thesis table 3.2), spread indexes, taking cores
- `engine/`: the twin (clock, state, starting, pacing, node power, timeline) and per-run metrics
- `readers/`: the inputs (SWF and sacct traces, platform files, slurm.conf imports)
- `seeds.py`: the random streams every room draws from
"""

from paretosched import __version__

# Bumped whenever a change can alter any simulated number; part of every cache key.
# 7: conservative backfilling keeps and compresses its reservations (issue 14); 8: the `slurm` kind no
# longer counts the cores of a job past its estimate as free now (it could start a job on busy cores);
# 9: the `slurm` kind allocates a job powered-down nodes at once and resumes them at ResumeRate over
# several minutes (before, a job needing more nodes than the rate's budget waited, for ever if more
# than ResumeRate), and a job waiting for its nodes to boot holds its cores until (up) + time limit in
# the pass that starts it too (before: now + time limit there, up + limit in later passes); and, for
# every kind with node switch-off, a job joining a booting node begins when the node is up (its own
# event could fire an ulp early, and the boot's completion then reset its processor to idle power);
# 10: a job runs at least 1 s (a run time of 0, under a second in SWF, gave all-zero metrics; issue 29)
#     and the `slurm` kind follows Slurm 22.05's backfill: reservations on the bf_resolution grid (default
# 60 s) holding whole nodes, bf_max_job_test 500 by default, SelectType (select/linear: whole nodes),
# the job-size factor over nodes and CPUs, no age or fair-share without slurmdbd, backfill cycles
# bf_interval after the last, slurmctld's dispatch timing (1 s tick, batch_sched_delay) (docs/slurm.md, issue 32)
TWIN_VERSION = "10"


def twin_version() -> str:
    """The package and twin versions, as recorded in runs and exports (e.g. `0.1.0+twin.3`)."""
    return f"{__version__}+twin.{TWIN_VERSION}"
