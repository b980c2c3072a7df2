"""`export --format slurm`: a picked config as a slurm.conf fragment.

A `slurm`-kind pick maps one to one (its genes are Slurm's parameters, docs/slurm.md); `platform
import` of the same slurm.conf plus this fragment gives back the simulated scheduler section. For a
classic or RL pick the fragment holds what maps (switch-off, frequency, backfilling, the `first` and
`smallest` job policies, the static resource policies as node Weights) and lists, as comments, what
has no Slurm equivalent.
"""

from __future__ import annotations

from typing import Any

from paretosched.analysis.slurm_params import PARAMS, slurm_time
from paretosched.sim.readers.platform import load_platform
from paretosched.sim.readers.slurm.hostlist import compress
from paretosched.sim.readers.slurm.platform_import import node_names
from paretosched.sim.readers.slurm.weights import node_weights

__all__ = ["first_nodes", "slurm_fragment", "slurm_time"]  # slurm_time: its home is slurm_params


def _weight_lines(plat: Any, order: str, names: list[str] | None) -> list[str]:
    if names is None:
        return [f"# node Weight order {order}: the platform's clusters are not Slurm hostlists (import it from "
                "slurm.conf to get NodeName lines)"]
    weights = node_weights(plat, order)
    by_weight: dict[int, list[str]] = {}
    for name, w in zip(names, weights):
        by_weight.setdefault(w, []).append(name)
    lines = [f"# node Weight (lowest is allocated first; order {order}). Slurm refuses a node defined twice:",
             "# copy each Weight into your NodeName line (`platform import` reads these lines as updates)."]
    lines += [f"NodeName={compress(ns)} Weight={w}" for w, ns in sorted(by_weight.items())]
    return lines


def first_nodes(plat: Any, order: str, names: list[str], n: int) -> str:
    w = node_weights(plat, order)
    return compress([names[i] for i in sorted(range(len(names)), key=lambda i: (w[i], i))][:n])


def _slurm_kind(s: dict[str, Any], plat: Any, names: list[str] | None) -> list[str]:
    # every plain parameter of the one mapping table (slurm_params.PARAMS), in the section's order
    plain = [p for p in PARAMS.values() if p.kind == "plain"]
    lines = ["PriorityType=priority/multifactor"]
    lines += [f"{p.key}={p.encode(s[p.field])}" for p in plain if not p.option]
    options = [f"{p.key}={p.encode(s[p.field])}" for p in plain if p.option]
    if options:
        lines.append("SchedulerParameters=" + ",".join(options))
    if s["suspend_exc_nodes"]:
        if names is None:
            lines.append(f"# SuspendExcNodes: the first {s['suspend_exc_nodes']} nodes of the Weight order")
        else:
            lines.append(f"SuspendExcNodes={first_nodes(plat, s['node_order'], names, s['suspend_exc_nodes'])}")
    return lines + _weight_lines(plat, s["node_order"], names)


def _classic_or_rl(s: dict[str, Any], plat: Any, names: list[str] | None) -> list[str]:
    lines: list[str] = []
    none: list[str] = []
    if s["kind"] == "rl":
        none.append(f"kind: rl (agent {s.get('agent')}): a learnt policy choosing job/resource policies per "
                    "decision has no slurm.conf equivalent")
    bf = s.get("backfilling", "none")
    lines.append(f"SchedulerType=sched/{'backfill' if bf == 'easy' else 'builtin'}")
    if bf == "easy":
        none.append("backfilling: easy reserves for the first blocked job only; sched/backfill reserves for "
                    "every job it tests (conservative), which delays no job but backfills less")
    job = s.get("job_policy")
    if job == "first":
        lines.append("PriorityType=priority/basic")
    elif job == "smallest":
        lines += ["PriorityType=priority/multifactor", "PriorityWeightJobSize=1000", "PriorityFavorSmall=YES",
                  "PriorityWeightAge=0", "PriorityWeightFairshare=0"]
    elif job is not None:
        none.append(f"job_policy: {job} (Slurm orders by priority factors: age, size, fair-share, QOS, ...)")
    res = s.get("resource_policy")
    order = {"high_gflops": "fastest_first", "low_power": "lowest_power_first"}.get(res or "")
    if order:
        lines += _weight_lines(plat, order, names)
    elif res is not None:
        none.append(f"resource_policy: {res} (node choice in Slurm is by Weight, a static order)")
    if s.get("power_off_idle_s") is not None:
        boot = max(n.boot_s for n in plat.nodes) if s.get("boot_s") is None else s["boot_s"]
        lines += [f"SuspendTime={int(round(s['power_off_idle_s']))}", "SuspendTimeout=0",
                  f"ResumeTimeout={int(round(boot))}   # the simulated boot time; give your nodes' real one",
                  "SuspendRate=0", "ResumeRate=0"]
        if s.get("min_nodes_on"):
            lines.append(f"SuspendExcNodes={compress(names)}:{s['min_nodes_on']}" if names else
                         f"# SuspendExcNodes=<all nodes>:{s['min_nodes_on']}")
    else:
        lines.append("SuspendTime=INFINITE")
    freq = s.get("freq", 1.0)
    if s.get("freq_by_type"):
        none.append(f"freq_by_type: {s['freq_by_type']} (CpuFreqDef is one value for the whole cluster)")
    if freq >= 1.0:
        lines.append("CpuFreqDef=Performance")
    elif all(freq <= pt.f_min for pt in plat.spec.processor_types.values()):
        lines.append("CpuFreqDef=PowerSave")
    else:
        clocks = {round(pt.clock_ghz * max(freq, pt.f_min) * 1e6) for pt in plat.spec.processor_types.values()}
        if len(clocks) == 1:
            lines.append(f"CpuFreqDef={clocks.pop()}")
        else:
            none.append(f"freq: {freq} (different kHz per processor type: {sorted(clocks)})")
    if s.get("bw_cap") is not None:
        none.append(f"bw_cap: {s['bw_cap']} (Slurm does not see memory bandwidth)")
    return lines + ["", "# No Slurm equivalent (simulated, not exported):"] + [f"#   {n}" for n in none or ["nothing"]]


def slurm_fragment(doc: dict[str, Any]) -> str:
    """The slurm.conf fragment of an exported config document (config + provenance)."""
    prov = doc.get("provenance") or {}
    plat = load_platform(doc["platform"])
    names = node_names(plat.spec)
    s = doc["scheduler"]
    objectives = ", ".join(f"{k}={v:.6g}" for k, v in (prov.get("objectives") or {}).items() if v is not None)
    head = [f"# paretosched export --format slurm: study {prov.get('study')}, pick {prov.get('pick')} "
            f"(eval {prov.get('eval_id')}), scheduler kind {s.get('kind', 'classic')}",
            f"# simulated on platform {plat.spec.name}: {objectives}",
            "# Append to slurm.conf (or Include it), merge the NodeName Weight values, then `scontrol reconfigure`."]
    body = _slurm_kind(s, plat, names) if s.get("kind") == "slurm" else _classic_or_rl(s, plat, names)
    return "\n".join(head + body) + "\n"
