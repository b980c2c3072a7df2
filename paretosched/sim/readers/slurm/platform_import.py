"""A platform from slurm.conf node lines and the processor library (see `conf.py`).

Per node line: processors per node = Boards x (SocketsPerBoard or Sockets), else CPUs /
(cores per socket x ThreadsPerCore), else 1; cores per processor = the model's (CoresPerSocket, when
given, must agree); memory = RealMemory MB. Hardware threads are not simulated (the twin's unit is a
core). Each line becomes one cluster per node type, named by its hostlist, so node names survive
the import (export writes `Weight=` and `SuspendExcNodes=` with them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paretosched.errors import UserError
from paretosched.sim.readers.platform import PlatformSpec, ProcessorType
from paretosched.sim.readers.slurm.conf import CpuMap, NodeLine, SlurmConf, model_of
from paretosched.sim.readers.slurm.hostlist import compress, expand
from paretosched.yamlio import validate


@dataclass
class ImportReport:
    nodes: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    weights: dict[str, int] = field(default_factory=dict)  # node name -> Weight
    notes: list[str] = field(default_factory=list)


def _sockets(line: NodeLine, cores: int, model: str) -> int:
    cps = line.int_attr("corespersocket")
    if cps is not None and cps != cores:
        raise UserError(f"{line.where()}: CoresPerSocket={cps} but {model} has {cores} cores per socket "
                        "(define a processor with that core count in the cpu-map)")
    threads = line.int_attr("threadspercore", 1) or 1
    boards = line.int_attr("boards", 1) or 1
    per_board = line.int_attr("socketsperboard") or line.int_attr("sockets")
    cpus = line.int_attr("cpus")
    if per_board is not None:
        sockets = boards * per_board
        if cpus is not None and cpus not in (sockets * cores * threads, sockets * cores):
            raise UserError(f"{line.where()}: CPUs={cpus} disagrees with {sockets} sockets x {cores} cores"
                            f" x {threads} threads")
        return sockets
    if cpus is None:
        return boards
    for per in (cores * threads, cores):
        if cpus % per == 0:
            return cpus // per
    raise UserError(f"{line.where()}: CPUs={cpus} is not a whole number of {model} sockets "
                    f"({cores} cores x {threads} threads); give Sockets= or CoresPerSocket=")


def processor_type(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A library model as a platform processor type (power 0.75 x TDP; f_min = lowest P-state / base)."""
    out: dict[str, Any] = {"model": spec.get("model", name), "cores": int(spec["cores"]),
                           "clock_ghz": float(spec["clock_ghz"]), "flops_per_cycle": float(spec["flops_per_cycle"])}
    if spec.get("mem_bw_gbs") is not None:
        out["mem_bw_gbs"] = float(spec["mem_bw_gbs"])
    out["power_w"] = 0.75 * float(spec["tdp_w"])
    if spec.get("min_ghz") is not None:
        # two decimals, as the thesis's gaia.yaml, so gaia's types import to the same numbers
        out["f_min"] = round(min(float(spec["min_ghz"]) / float(spec["clock_ghz"]), 1.0), 2)
    # checked now, as the platform will be: a model of 0 cores divided the node's CPUs by zero
    validate(ProcessorType, out, f"processors.{name}")
    return out


def platform_from_conf(conf: SlurmConf, cmap: CpuMap, name: str) -> tuple[dict[str, Any], ImportReport]:
    """The platform dict (validated) and what the import did."""
    report = ImportReport(notes=list(conf.notes))
    ptypes: dict[str, dict[str, Any]] = {}
    ntypes: dict[str, dict[str, Any]] = {}
    clusters: list[dict[str, Any]] = []
    for line in conf.nodes:
        state = line.attrs.get("state", "").upper()
        if state.startswith("FUTURE"):
            report.skipped["state_future"] = report.skipped.get("state_future", 0) + len(line.names)
            report.notes.append(f"{line.where()}: {len(line.names)} node(s) in State=FUTURE left out")
            continue
        groups: dict[str, list[str]] = {}
        for node in line.names:
            model = model_of(line, node, cmap)
            spec = cmap.library[model]
            if model not in ptypes:
                try:
                    ptypes[model] = processor_type(model, spec)
                except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
                    raise UserError(f"{cmap.source}: processor {model}: bad or missing field ({exc})") from None
                except UserError as exc:  # out of the platform's range: the cpu-map (or library) entry
                    raise UserError(f"{cmap.source}: {exc}") from None
            sockets = _sockets(line, ptypes[model]["cores"], model)
            mem_mb = line.int_attr("realmemory")
            ntype = f"{model}_x{sockets}" + (f"_{mem_mb}mb" if mem_mb is not None else "")
            ntypes.setdefault(ntype, {"processors": {model: sockets},
                                      **({"memory_gb": mem_mb / 1024.0} if mem_mb is not None else {})})
            groups.setdefault(ntype, []).append(node)
            weight = line.int_attr("weight", 1)
            report.weights[node] = int(weight if weight is not None else 1)
        for ntype, names in groups.items():
            clusters.append({"name": compress(names), "nodes": {ntype: len(names)}})
            report.nodes += len(names)
    for line in conf.weight_updates:
        weight = line.int_attr("weight", 1)
        for node in line.names:
            report.weights[node] = int(weight if weight is not None else 1)
    if not clusters:
        raise UserError(f"{', '.join(conf.sources) or 'slurm.conf'}: no NodeName line with a node in service")
    data: dict[str, Any] = {"name": name, "processor_types": ptypes, "node_types": ntypes, "clusters": clusters}
    if cmap.power:
        data["power"] = cmap.power
    validate(PlatformSpec, data, f"platform imported from {name}")
    return data, report


def node_names(spec: PlatformSpec) -> list[str] | None:
    """Node names in platform order, when every cluster is named by a hostlist of the right size."""
    names: list[str] = []
    for cl in spec.clusters:
        try:
            part = expand(cl.name)
        except ValueError:
            return None
        if len(part) != sum(cl.nodes.values()):
            return None
        names.extend(part)
    return names


def default_name(path: str | Path, conf: SlurmConf) -> str:
    return conf.param("clustername") or Path(path).stem
