"""`paretosched platform import` (slurm.conf -> platform) and `paretosched trace import` (sacct -> SWF)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from paretosched.commands.outputs import refuse_existing, say_replaced
from paretosched.errors import UserError


def run_platform_import(args: Any) -> int:
    from paretosched.sim.readers.slurm.conf import load_cpu_map, read_slurm_conf
    from paretosched.sim.readers.slurm.platform_import import default_name, platform_from_conf
    from paretosched.yamlio import dump_yaml

    if args.scheduler and os.path.realpath(args.scheduler) == os.path.realpath(args.output):
        # (also through a symlink) the scheduler section would replace the platform just written
        raise UserError(f"--scheduler {args.scheduler}: the same file as --output {args.output}; give two files")
    replaced = refuse_existing([args.output], "--output", args.force)
    if args.scheduler:
        replaced += refuse_existing([args.scheduler], "--scheduler", args.force)
    conf = read_slurm_conf(args.conf)
    data, report = platform_from_conf(conf, load_cpu_map(args.cpu_map), args.name or default_name(args.conf[0], conf))
    sched_notes: list[str] = []
    sched = None
    if args.scheduler:  # decoded before anything is written: an error leaves no half of the pair
        from paretosched.sim.readers.slurm.sched_import import scheduler_from_conf

        sched = scheduler_from_conf(conf, data, report.weights, sched_notes)
    header = (f"# imported by `paretosched platform import` from {', '.join(args.conf)}"
              + (f" with cpu map {args.cpu_map}" if args.cpu_map else "") + "\n"
              "# clusters are named by the hostlists of their slurm.conf NodeName lines\n")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(header + dump_yaml(data, sort_keys=False, default_flow_style=None), encoding="utf-8")
    for note in report.notes:
        print(f"note: {note}")
    print(f"platform {data['name']}: {report.nodes} nodes, {len(data['node_types'])} node types, "
          f"{len(data['processor_types'])} processor types -> {out}")
    if report.skipped:
        print("skipped: " + ", ".join(f"{k}={v}" for k, v in report.skipped.items()))
    if sched is not None:
        for note in sched_notes:
            print(f"note: {note}")
        sp = Path(args.scheduler)
        sp.write_text("# scheduler section decoded from the Slurm parameters of "
                      f"{', '.join(args.conf)}\n" + dump_yaml({"scheduler": sched}, sort_keys=False), encoding="utf-8")
        print(f"scheduler (kind slurm) -> {sp}")
    say_replaced(replaced)
    return 0


def run_trace_import(args: Any) -> int:
    from paretosched.sim.readers.slurm.sacct import read_sacct, write_swf

    replaced = refuse_existing([args.output], "--output", args.force)
    names = conf = None
    if getattr(args, "slurm_conf", None):
        from paretosched.sim.readers.slurm.conf import read_slurm_conf

        conf = ", ".join(args.slurm_conf)
        names = read_slurm_conf(args.slurm_conf).partition_names()
    conv = read_sacct(args.dump, names, conf or "slurm.conf")
    write_swf(conv, args.output)
    print(f"{args.dump}: {conv.report.records} records, {len(conv.jobs)} jobs -> {args.output}")
    for reason, n in conv.report.skipped.items():
        print(f"  skipped {n}: {reason}")
    for note in conv.report.notes:
        print(f"  note: {note}")
    say_replaced(replaced)
    return 0
