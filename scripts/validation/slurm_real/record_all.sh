#!/bin/sh
# The records of tests/data/slurm_real/, all at once (each cluster its own ports
# and state dir; ~25 min of real time). Run as root from the repository root:
#   sh scripts/validation/slurm_real/record_all.sh
# One of them: copy its line. Then: python scripts/validation/slurm_real/compare.py tests/data/slurm_real/*
set -e
H="python3 scripts/validation/slurm_real/harness.py"
D=tests/data/slurm_real
BF=bf_interval=5,bf_window=60,bf_max_job_test=100
$H --name linear-favorsmall --out $D/linear-favorsmall --port 17200 --seed 1 --favor-small --sched-params $BF > /tmp/slurm_real_a.out 2>&1 &
$H --name linear-bf-s1 --out $D/linear-bf-s1 --port 17300 --seed 1 --sched-params $BF > /tmp/slurm_real_b1.out 2>&1 &
$H --name linear-bf-s2 --out $D/linear-bf-s2 --port 17400 --seed 2 --sched-params $BF > /tmp/slurm_real_b2.out 2>&1 &
$H --name cons-tres-core --out $D/cons-tres-core --port 17500 --seed 3 --select cons_tres > /tmp/slurm_real_c.out 2>&1 &
$H --name linear-32 --out $D/linear-32 --port 17600 --seed 4 --nodes 32 --jobs 120 > /tmp/slurm_real_d.out 2>&1 &
$H --name linear-tiers --out $D/linear-tiers --port 17700 --seed 5 --partitions low:1-16:1,high:9-16:2 > /tmp/slurm_real_e.out 2>&1 &
$H --name hpc2n-window --out $D/hpc2n-window --port 17800 --swf paretosched/data/traces/hpc2n-3k.swf.gz --swf-skip 1000 --swf-scale 30 --weight-job-size 0 --sched-params bf_interval=10 > /tmp/slurm_real_f.out 2>&1 &
# repeats (real Slurm against itself: compare.py A --against A-again)
$H --name linear-bf-s2-again --out $D/linear-bf-s2-again --port 17900 --seed 2 --sched-params $BF > /tmp/slurm_real_g.out 2>&1 &
$H --name linear-favorsmall-again --out $D/linear-favorsmall-again --port 18000 --seed 1 --favor-small --sched-params $BF > /tmp/slurm_real_h.out 2>&1 &
$H --name cons-tres-core-again --out $D/cons-tres-core-again --port 18200 --seed 3 --select cons_tres > /tmp/slurm_real_i.out 2>&1 &
$H --name linear-32-again --out $D/linear-32-again --port 18300 --seed 4 --nodes 32 --jobs 120 > /tmp/slurm_real_j.out 2>&1 &
wait
