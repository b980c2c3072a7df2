"""`paretosched platform show|list`."""

from __future__ import annotations

import json
from typing import Any


def run_platform(args: Any) -> int:
    from paretosched.commands.outputs import json_safe
    from paretosched.sim.readers.platform import builtin_platform_names, load_platform

    if args.platform_command == "list":
        for name in builtin_platform_names() + ["homogeneous-N"]:
            print(name)
        return 0
    s = load_platform(args.platform).summary()
    if args.json:
        print(json.dumps(json_safe(s), indent=2, allow_nan=False))
        return 0
    print(f"platform {s['name']}: {s['clusters']} cluster(s), {s['nodes']} nodes, {s['processors']} processors, "
          f"{s['cores']} cores")
    print(f"peak {s['peak_gflops']:.2f} GFLOP/s, full power {s['power_w']:.2f} W, "
          f"reference speed {s['ref_speed_gflops']:.4f} GFLOP/s per core")
    print(f"  {'processor type':<18} {'procs':>6} {'cores':>6} {'peak_gflops':>12} {'power_w':>10}")
    for name, row in s["by_processor_type"].items():
        print(f"  {name:<18} {row['processors']:>6} {row['cores']:>6} {row['gflops']:>12.2f} {row['power_w']:>10.2f}")
    return 0
