"""The `slurm` scheduler section a slurm.conf configures (the inverse of `export --format slurm`)."""

from __future__ import annotations

import re
from typing import Any

from paretosched.config import SlurmScheduler
from paretosched.errors import UserError
from paretosched.sim.readers.platform import PlatformSpec, build_platform
from paretosched.sim.readers.slurm.conf import SlurmConf
from paretosched.sim.readers.slurm.hostlist import expand
from paretosched.sim.readers.slurm.platform_import import node_names
from paretosched.sim.readers.slurm.sacct import parse_timelimit
from paretosched.sim.readers.slurm.weights import node_weights, order_of_weights
from paretosched.yamlio import validate

_INTS = {"priorityweightage": "priority_weight_age", "priorityweightjobsize": "priority_weight_job_size",
         "priorityweightfairshare": "priority_weight_fairshare", "priorityweightpartition": "priority_weight_partition",
         "suspendrate": "suspend_rate",
         "resumerate": "resume_rate"}
_SECONDS = {"suspendtimeout": "suspend_timeout_s", "resumetimeout": "resume_timeout_s"}
_BF = {"bf_max_job_test": "bf_max_job_test", "bf_window": "bf_window_min", "bf_interval": "bf_interval_s",
       "bf_resolution": "bf_resolution_s", "batch_sched_delay": "batch_sched_delay_s"}
_DURATIONS = {"prioritydecayhalflife": "priority_decay_half_life_s", "prioritymaxage": "priority_max_age_s"}


def _int(conf: SlurmConf, key: str) -> int:
    raw = conf.param(key) or ""
    try:
        return int(raw)
    except ValueError:
        raise UserError(f"{conf.where(key)}: {key} must be an integer, got {raw!r}") from None


def scheduler_from_conf(conf: SlurmConf, platform: dict[str, Any], weights: dict[str, int],
                        notes: list[str] | None = None) -> dict[str, Any]:
    """The validated scheduler dict (kind slurm): the parameters set, Slurm's defaults for the others.
    What cannot be represented is appended to `notes`."""
    notes = notes if notes is not None else []
    out: dict[str, Any] = {"kind": "slurm"}
    for key, name in _INTS.items():
        if conf.param(key) is not None:
            out[name] = _int(conf, key)
    for key, name in _SECONDS.items():
        if conf.param(key) is not None:
            out[name] = float(_int(conf, key))
    for key, name in _DURATIONS.items():
        raw = conf.param(key)
        if raw is not None:
            try:
                secs = parse_timelimit(raw)
            except ValueError:
                raise UserError(f"{conf.where(key)}: {key} is not a Slurm time ({raw!r})") from None
            out[name] = secs if secs is not None else 0.0
    if conf.param("priorityfavorsmall") is not None:
        out["priority_favor_small"] = conf.param("priorityfavorsmall").upper() in ("YES", "1", "TRUE")
    stype = conf.param("schedulertype")
    if stype is not None:
        if stype not in ("sched/backfill", "sched/builtin"):
            raise UserError(f"{conf.where('schedulertype')}: SchedulerType {stype!r} "
                            "(expected sched/backfill or sched/builtin)")
        out["scheduler_type"] = stype.split("/")[1]
    ignored = []
    for item in (conf.param("schedulerparameters") or "").split(","):
        key, _, value = item.strip().partition("=")
        if key.lower() in _BF:
            try:
                out[_BF[key.lower()]] = int(value)
            except ValueError:
                raise UserError(f"{conf.where('schedulerparameters')}: {key} must be an integer, "
                                f"got {value!r}") from None
        elif key:
            ignored.append(key)
    if ignored:
        notes.append(f"{conf.where('schedulerparameters')}: SchedulerParameters {', '.join(ignored)} not modelled "
                     "(the twin uses Slurm's defaults for them)")
    out["select_type"] = _select_type(conf, notes)
    storage = (conf.param("accountingstoragetype") or "accounting_storage/none").lower()
    out["slurmdbd"] = storage.endswith("/slurmdbd")
    if not out["slurmdbd"] and (out.get("priority_weight_age") or out.get("priority_weight_fairshare")):
        notes.append(f"AccountingStorageType {storage}: without slurmdbd Slurm sets priorities at submission and "
                     "has no fair-share: PriorityWeightAge and PriorityWeightFairshare count for nothing")
    suspend = conf.param("suspendtime")
    if suspend is not None:
        never = suspend.upper() in ("INFINITE", "NONE", "-1")
        out["suspend_time_s"] = None if never else float(_int(conf, "suspendtime"))
    if conf.param("cpufreqdef") is not None:
        value = conf.param("cpufreqdef")
        if value.lower() not in ("performance", "powersave"):
            raise UserError(f"{conf.where('cpufreqdef')}: CpuFreqDef {value!r}: "
                            "the twin models Performance and PowerSave")
        out["cpu_freq_def"] = "Performance" if value.lower() == "performance" else "PowerSave"
    plat = build_platform(PlatformSpec.model_validate(platform))
    names = node_names(plat.spec) or []
    order = order_of_weights(plat, [weights.get(n, 1) for n in names])
    if order is None:
        notes.append("the nodes' Weight values follow none of the node orders (platform, fastest_first, "
                     "lowest_power_first, efficiency_first): node_order platform")
        order = "platform"
    out["node_order"] = order
    out["partitions"] = partitions_from_conf(conf, names, notes)
    exc = conf.param("suspendexcnodes")
    if exc:
        out["suspend_exc_nodes"] = _exc_count(conf, exc, plat, order, names)
    where = ", ".join(conf.sources) or "slurm.conf"
    return validate(SlurmScheduler, out, f"{where} (Slurm parameters)").model_dump(mode="json")


def _exc_count(conf: SlurmConf, text: str, plat: Any, order: str, names: list[str]) -> int:
    """SuspendExcNodes as a count: the first N nodes of the Weight order, or `<all nodes>:N`."""
    expr, _, count = text.rpartition(":") if ":" in text else (text, "", "")
    try:
        listed = expand(expr)
    except ValueError as exc:
        raise UserError(f"{conf.where('suspendexcnodes')}: {exc}") from None
    if count:
        if not re.fullmatch(r"[0-9]{1,9}", count.strip()):
            raise UserError(f"{conf.where('suspendexcnodes')}: SuspendExcNodes count {count[:24]!r} is not a "
                            "whole number (<nodes>:N)")
        if sorted(listed) != sorted(names):
            raise UserError(f"{conf.where('suspendexcnodes')}: a count applies to all nodes here (<all nodes>:N)")
        return int(count)
    w = node_weights(plat, order)
    first = [names[i] for i in sorted(range(len(names)), key=lambda i: (w[i], i))][:len(listed)]
    if sorted(first) != sorted(listed):
        raise UserError(f"{conf.where('suspendexcnodes')}: the twin excludes the first nodes of the Weight order "
                        f"({','.join(first)}), not {expr}")
    return len(listed)


def _select_type(conf: SlurmConf, notes: list[str]) -> str:
    """SelectType (select/linear is Slurm 22.05's default), its parameters and the partitions'
    OverSubscribe, as the twin's `select_type`; what it cannot model goes to `notes`."""
    raw = conf.param("selecttype") or "select/linear"
    kind = raw.split("/")[-1].lower()
    if kind not in ("linear", "cons_tres", "cons_res"):
        notes.append(f"{conf.where('selecttype')}: SelectType {raw} is not modelled: cores are allocated as "
                     "select/cons_tres does")
        kind = "cons_tres"
    if conf.param("selecttype") is None:
        notes.append("SelectType not set: select/linear, Slurm 22.05's default (whole nodes per job)")
    if kind == "cons_res":
        notes.append(f"{conf.where('selecttype')}: select/cons_res allocates as select/cons_tres does here")
        kind = "cons_tres"
    params = [p.strip().lower() for p in (conf.param("selecttypeparameters") or "").split(",") if p.strip()]
    for p in params:
        if kind == "cons_tres" and p in ("cr_socket", "cr_socket_memory"):
            notes.append(f"{conf.where('selecttypeparameters')}: {p.upper()} allocates whole sockets; the twin "
                         "allocates cores")
        elif kind == "cons_tres" and p == "cr_memory":
            notes.append(f"{conf.where('selecttypeparameters')}: CR_Memory (memory alone consumable, cores shared) "
                         "is not modelled: cores are allocated")
        elif kind == "cons_tres" and p in ("cr_core", "cr_cpu"):
            notes.append(f"{conf.where('selecttypeparameters')}: {p.upper()} does not limit memory; the twin keeps "
                         "jobs within node memory (as CR_Core_Memory) when a job states its memory")
        elif p not in ("cr_core_memory", "cr_cpu_memory", "cr_memory", "cr_one_task_per_core"):
            notes.append(f"{conf.where('selecttypeparameters')}: {p} not modelled")
    for keys, where in conf.partitions:
        over = keys.get("oversubscribe", keys.get("shared", "NO")).split(":")[0].upper()
        if over == "EXCLUSIVE" and kind == "cons_tres":
            notes.append(f"{where}: OverSubscribe=EXCLUSIVE gives every job whole nodes: imported as select/linear "
                         "allocation")
            kind = "linear"
        elif over in ("YES", "FORCE"):
            notes.append(f"{where}: OverSubscribe={over} (jobs sharing resources, gang scheduling) is not "
                         "modelled: no two jobs share a core")
    return kind


# partition keys the twin reads, or reads elsewhere (OverSubscribe: select_type), or that shape only what a
# trace already holds (MaxTime, DefaultTime: a job's time limit, sacct's Timelimit)
_PART_KNOWN = {"partitionname", "nodes", "prioritytier", "priorityjobfactor", "default", "state", "oversubscribe",
               "shared", "maxtime", "defaulttime"}


def partitions_from_conf(conf: SlurmConf, names: list[str], notes: list[str]) -> list[dict[str, Any]]:
    """The PartitionName lines as `scheduler.partitions` (in slurm.conf order: SWF field 16 numbers
    them from 1, as `trace import --slurm-conf` does); `PartitionName=DEFAULT` lines set the keys of
    the lines after them, as in Slurm. Empty when there are none (one queue over all nodes)."""
    out: list[dict[str, Any]] = []
    defaults: dict[str, str] = {}
    known = set(names)
    for keys, where in conf.partitions:
        if keys["partitionname"].upper() == "DEFAULT":
            defaults.update({k: v for k, v in keys.items() if k != "partitionname"})
            continue
        keys = {**defaults, **keys}
        name = keys["partitionname"]
        nodes = keys.get("nodes", "")
        if nodes.upper() != "ALL":
            try:
                listed = expand(nodes)
            except ValueError as exc:
                raise UserError(f"{where}: Nodes: {exc}") from None
            if not listed:
                raise UserError(f"{where}: partition {name} has no Nodes")
            unknown = [n for n in listed if n not in known]
            if unknown:
                raise UserError(f"{where}: Nodes: {unknown[0]} is not a NodeName of {', '.join(conf.sources)}")
        tier, factor = keys.get("prioritytier", "1"), keys.get("priorityjobfactor", "1")
        for key, value in (("PriorityTier", tier), ("PriorityJobFactor", factor)):
            if not re.fullmatch(r"[0-9]{1,5}", value.strip()) or int(value) > 65533:
                raise UserError(f"{where}: {key} must be a whole number 0-65533, got {value[:24]!r}")
        state = keys.get("state", "UP").upper()
        if state != "UP":
            notes.append(f"{where}: partition {name} State={state}: the twin schedules its jobs as if UP")
        other = sorted(k for k in keys if k not in _PART_KNOWN)
        if other:
            notes.append(f"{where}: partition {name}: {', '.join(other)} not modelled")
        whole = nodes.upper() == "ALL" or set(expand(nodes)) == known
        out.append({"name": name, "nodes": "ALL" if whole else nodes,
                    "priority_tier": int(tier), "priority_job_factor": int(factor),
                    "default": keys.get("default", "NO").upper() == "YES"})
    defaults_set = [p for p in out if p["default"]]
    for p in defaults_set[:-1]:  # Slurm keeps the last Default=YES it reads
        p["default"] = False
    ranks = {(p["priority_tier"], p["priority_job_factor"]) for p in out}
    if all(p["nodes"] == "ALL" for p in out) and len(ranks) <= 1:
        return []  # one queue over all nodes, as without partitions: the section stays as it was
    return out
