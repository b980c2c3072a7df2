"""Does PriorityWeightAge / PriorityWeightFairshare act without slurmdbd? (Slurm 22.05.8: no.)

A 2-node private cluster (harness.py's) with both weights 1000, PriorityMaxAge 2 min: one job
holds both nodes for 4 min, three wait; `sprio -l` at 5, 65 and 140 s shows their AGE and
FAIRSHARE factors, and slurmctld's log says why they stay 0. ~3 min of real time, as root:

    python3 scripts/validation/slurm_real/age_probe.py
"""

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness as h  # noqa: E402


def main() -> None:
    state = Path('/tmp/slurm_age_probe')
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir()
    a = argparse.Namespace(name='ageprobe', port=18500, nodes=2, cpus=8, select='linear', favor_small=False,
                           weight_job_size=0, sched_params='', partitions=None,
                           extra=['PriorityWeightAge=1000', 'PriorityMaxAge=00:02:00', 'PriorityWeightFairshare=1000',
                                  'PriorityCalcPeriod=00:00:10'])
    conf = state / 'slurm.conf'
    conf.write_text(h.write_conf(a, state))
    cl = h.Cluster(state, conf, 2)
    try:
        cl.start()
        cl.cmd(['sbatch', '-N', '2', '-t', '5', '-o', '/dev/null', '--wrap', 'sleep 240'])
        for _ in range(3):
            cl.cmd(['sbatch', '-N', '1', '-t', '1', '-o', '/dev/null', '--wrap', 'sleep 5'])
        for wait in (5, 60, 75):
            time.sleep(wait)
            print(cl.cmd(['sprio', '-l']), flush=True)
    finally:
        cl.stop()
    print("".join(line for line in (state / "slurmctld.log").read_text().splitlines(True)
                  if "can only be used" in line))


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    main()
