"""The one table from the `slurm` scheduler section to slurm.conf, and how each change takes effect.

`PARAMS` is derived, not listed: every field of `config.SlurmScheduler` whose slurm.conf key the
importer (`sim/slurm/sched_import.py`) reads from its tables (`_INTS`, `_SECONDS`, `_DURATIONS`
and the SchedulerParameters options `_BF`) maps through that table, written as the field's
description spells the key; the irregular fields (YES/NO, INFINITE, sched/..., a hostlist, node
Weights) are `_SPECIAL`. A parameter added to the importer's tables is exported with no edit here;
a field nothing maps is in `UNMAPPED` (and `export --against` refuses to change it).

`TAKES_EFFECT` is keyed by slurm.conf parameter name (lower case, as Slurm reads keys); its values
come from slurm.conf(5) of Slurm 22.05.8 (Debian's `slurm-client`, the version issue 32 measured):
"Changes to the configuration file take effect upon restart of Slurm daemons, daemon receipt of the
SIGHUP signal, or execution of the command "scontrol reconfigure" unless otherwise noted."; noted are
SchedulerType and SelectTypeParameters ("A restart of slurmctld is required for changes to this
parameter to take effect"), SelectType ("A restart of slurmctld and slurmd is required") and the
NODE CONFIGURATION section ("Changes in node configuration (e.g. adding nodes, changing their
processor count, etc.) require restarting both the slurmctld daemon and the slurmd daemons"), which
is where a NodeName line's Weight lives. Of the SchedulerParameters options only
`no_backup_scheduling` needs a restart, and the twin has none such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from paretosched.config import SlurmScheduler
from paretosched.sim.readers.slurm import sched_import

RECONFIGURE = "scontrol reconfigure"
RESTART_CTLD = "restart slurmctld"
RESTART_ALL = "restart slurmctld and every slurmd"

TAKES_EFFECT: dict[str, str] = {
    "schedulerparameters": RECONFIGURE,
    "schedulertype": RESTART_CTLD,
    "selecttype": RESTART_ALL,
    "selecttypeparameters": RESTART_CTLD,
    "prioritytype": RECONFIGURE,
    "priorityweightage": RECONFIGURE,
    "priorityweightjobsize": RECONFIGURE,
    "priorityweightfairshare": RECONFIGURE,
    "priorityweightpartition": RECONFIGURE,
    "priorityweightqos": RECONFIGURE,
    "priorityfavorsmall": RECONFIGURE,
    "prioritydecayhalflife": RECONFIGURE,
    "prioritymaxage": RECONFIGURE,
    "suspendtime": RECONFIGURE,
    "suspendtimeout": RECONFIGURE,
    "suspendrate": RECONFIGURE,
    "suspendexcnodes": RECONFIGURE,
    "resumetimeout": RECONFIGURE,
    "resumerate": RECONFIGURE,
    "cpufreqdef": RECONFIGURE,
    "nodename": RESTART_ALL,  # a NodeName line's Weight: "NODE CONFIGURATION" in slurm.conf(5)
}


def takes_effect(key: str) -> str:
    """How a change of slurm.conf parameter `key` takes effect (slurm.conf(5)'s rule when not noted)."""
    return TAKES_EFFECT.get(key.lower(), RECONFIGURE)


def slurm_time(seconds: float) -> str:
    """Seconds as Slurm's D-HH:MM:SS (a bare number would be minutes to Slurm)."""
    s = int(round(seconds))
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{d}-{h:02d}:{m:02d}:{s:02d}"


@dataclass(frozen=True)
class Param:
    """One scheduler field as slurm.conf writes it: `Key=value`, or `SchedulerParameters=...,key=value`."""

    field: str
    key: str  # as written (case is Slurm's spelling; Slurm reads keys case-insensitively)
    option: bool  # an option inside SchedulerParameters
    encode: Callable[[Any], str]
    kind: str = "plain"  # plain | hostlist (SuspendExcNodes) | weight (node Weights)

    @property
    def conf_key(self) -> str:
        """The slurm.conf parameter the change is made in (its TAKES_EFFECT key)."""
        return "schedulerparameters" if self.option else self.key.lower()


def _int(v: Any) -> str:
    return str(int(v))


def _seconds(v: Any) -> str:
    return str(int(round(float(v))))


_SPECIAL: dict[str, Param] = {
    "priority_favor_small": Param("priority_favor_small", "PriorityFavorSmall", False,
                                  lambda v: "YES" if v else "NO"),
    "scheduler_type": Param("scheduler_type", "SchedulerType", False, lambda v: f"sched/{v}"),
    "suspend_time_s": Param("suspend_time_s", "SuspendTime", False, lambda v: "INFINITE" if v is None else _seconds(v)),
    "cpu_freq_def": Param("cpu_freq_def", "CpuFreqDef", False, str),
    "suspend_exc_nodes": Param("suspend_exc_nodes", "SuspendExcNodes", False, str, "hostlist"),
    "node_order": Param("node_order", "Weight", False, str, "weight"),
}


def _spelling(field: str, lower: str) -> str:
    """The key as the field's description spells it ("PriorityWeightAge", "SchedulerParameters
    bf_window (minutes)" -> bf_window), else the importer's lower-case key."""
    desc = SlurmScheduler.model_fields[field].description or ""
    for word in desc.replace(":", " ").split():
        if word.lower() == lower:
            return word
    return lower


def _derived() -> dict[str, Param]:
    tables: list[tuple[str, bool, Callable[[Any], str]]] = [
        ("_INTS", False, _int), ("_SECONDS", False, _seconds), ("_DURATIONS", False, slurm_time), ("_BF", True, _int)]
    out: dict[str, Param] = {}
    for table, option, enc in tables:
        for lower, field in getattr(sched_import, table, {}).items():
            if field in SlurmScheduler.model_fields:
                out[field] = Param(field, _spelling(field, lower), option, enc)
    return out


def _table() -> dict[str, Param]:
    derived = _derived()
    out: dict[str, Param] = {}
    for field in SlurmScheduler.model_fields:  # the section's own order: export writes lines in it
        if field in _SPECIAL:
            out[field] = _SPECIAL[field]
        elif field in derived:
            out[field] = derived[field]
    return out


PARAMS: dict[str, Param] = _table()
UNMAPPED: tuple[str, ...] = tuple(f for f in SlurmScheduler.model_fields if f not in PARAMS and f != "kind")
