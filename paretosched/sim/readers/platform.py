"""Platform files: processor types, node types, clusters (HDeepRM-style), and the built-ins.

A platform file (YAML or JSON) reads like::

    name: two-socket
    processor_types:
      slow: {cores: 2, clock_ghz: 1.0, flops_per_cycle: 4, mem_bw_gbs: 32, power_w: 80}
    node_types:
      n: {processors: {slow: 1, fast: 1}, memory_gb: 64}
    clusters:
      - {name: c0, nodes: {n: 1}}

Cores are numbered in file order: cluster, node, processor, core. `mem_bw_gbs` or `memory_gb`
left out (null) means unlimited.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from paretosched.config import MAX_CORES, MAX_JOULES, MAX_SECONDS, MAX_WATTS, BootSeconds, Strict
from paretosched.errors import UserError
from paretosched.sim.readers.inputs import bundled
from paretosched.yamlio import did_you_mean, read_yaml, validate

_HOMOGENEOUS = re.compile(r"^homogeneous-(\d+)$")
# What the twin can simulate in reasonable time and memory (docs/reliability.md): per-core and
# per-node state is kept in Python objects, so a 3,000,000-node platform would take minutes and
# gigabytes before the first event.
MAX_NODES = 100_000


class ProcessorType(Strict):
    # lower bounds: the physically meaningful range (1 MHz, 0.01 flop per cycle, 1 MB/s, 1 mW), far below
    # any real processor; `clock_ghz: 1e-200` x `flops_per_cycle: 1e-200` made 0 GFLOP/s cores (jobs of
    # 0 s, utilisation 11.75), a tiny bandwidth or power an infinite slowdown factor or efficiency
    cores: int = Field(..., ge=1, le=MAX_CORES)
    clock_ghz: float = Field(..., ge=1e-3, le=1e3)
    flops_per_cycle: float = Field(..., ge=0.01, le=1e4, description="double-precision flops per cycle")
    mem_bw_gbs: float | None = Field(None, ge=1e-3, le=1e9,
                                     description="shared by the processor's cores; null = unlimited")
    power_w: float = Field(..., ge=1e-3, le=MAX_WATTS,
                           description="sustained power at full load (0.75 x TDP in the thesis)")
    f_min: float = Field(0.0, ge=0, le=1, description="lowest DVFS frequency factor (lowest P-state / nominal clock)")
    dvfs_table: list[tuple[float, float]] | None = Field(
        None, description="(frequency factor, fraction of full power) pairs; overrides the cubic law"
    )
    model: str | None = None

    @field_validator("dvfs_table", mode="before")
    @classmethod
    def _pairs_from_lists(cls, v: Any) -> Any:
        # YAML and JSON give each pair as a list; the strict schema takes only tuples as tuples
        return [tuple(p) if isinstance(p, list) else p for p in v] if isinstance(v, list) else v

    @model_validator(mode="after")
    def _physical_table(self) -> ProcessorType:
        """A DVFS table is a power curve: frequency factors in (0, 1], distinct, power fractions in
        (0, 1] that do not fall as the frequency rises, and the point (1.0, 1.0): `power_w` is the power
        at the nominal clock. The twin interpolates between points and holds the last point's power
        above it (sim/engine/state.py), so a table without f = 1 made the nominal clock draw that point's power
        (78% less energy), and a power of 0 made busy cores free."""
        if self.dvfs_table is None:
            return self
        if not self.dvfs_table:
            raise ValueError("dvfs_table: give at least one (frequency, power fraction) pair, or null")
        for i, (f, w) in enumerate(self.dvfs_table):
            if not 0 < f <= 1:
                raise ValueError(f"dvfs_table.{i}: frequency factor {f} is not in (0, 1]")
            if not 0 < w <= 1:
                raise ValueError(f"dvfs_table.{i}: power fraction {w} is not in (0, 1] (a busy core draws power)")
        pts = sorted(self.dvfs_table)
        for (f0, w0), (f1, w1) in zip(pts, pts[1:]):
            if f0 == f1:
                raise ValueError(f"dvfs_table: frequency factor {f0} is given twice")
            if w1 < w0:
                raise ValueError(f"dvfs_table: power fraction falls from {w0} at frequency {f0} to {w1} at {f1} "
                                 "(power must not decrease as the frequency rises)")
        if pts[-1] != (1.0, 1.0):
            raise ValueError(f"dvfs_table: the table must hold the nominal point [1.0, 1.0] (frequency factor 1 draws "
                             f"power_w), its last point is {list(pts[-1])}")
        return self

    @property
    def gflops_per_core(self) -> float:
        return self.clock_ghz * self.flops_per_cycle


class NodeType(Strict):
    processors: dict[str, int] = Field(..., min_length=1)
    memory_gb: float | None = Field(None, ge=1e-3, le=1e12)
    boot_s: BootSeconds | None = Field(None, ge=0, le=MAX_SECONDS)
    boot_j: float | None = Field(None, ge=0, le=MAX_JOULES)
    off_w: float | None = Field(None, ge=0, le=MAX_WATTS)
    model: str | None = None


class Cluster(Strict):
    name: str
    nodes: dict[str, int] = Field(..., min_length=1)


class PowerDefaults(Strict):
    """Node power-state defaults used when a node type does not set its own."""

    boot_s: BootSeconds = Field(120.0, ge=0, le=MAX_SECONDS)
    boot_j: float | None = Field(None, ge=0, le=MAX_JOULES, description="null = boot_s x the node's full power")
    off_w: float = Field(0.0, ge=0, le=MAX_WATTS)


class PlatformSpec(Strict):
    name: str
    processor_types: dict[str, ProcessorType] = Field(..., min_length=1)
    node_types: dict[str, NodeType] = Field(..., min_length=1)
    clusters: list[Cluster] = Field(..., min_length=1)
    power: PowerDefaults = Field(default_factory=PowerDefaults)

    @model_validator(mode="after")
    def _references(self) -> PlatformSpec:
        for nname, nt in self.node_types.items():
            for pname, count in nt.processors.items():
                if pname not in self.processor_types:
                    raise ValueError(f"node_types.{nname}.processors: unknown processor type {pname!r}")
                if count < 1:
                    raise ValueError(f"node_types.{nname}.processors.{pname}: count must be >= 1")
        for i, cl in enumerate(self.clusters):
            for nname, count in cl.nodes.items():
                if nname not in self.node_types:
                    raise ValueError(f"clusters.{i}.nodes: unknown node type {nname!r}")
                if count < 0:
                    raise ValueError(f"clusters.{i}.nodes.{nname}: count must be >= 0")
        self._size_bounds()
        self._off_power()
        return self

    def _off_power(self) -> None:
        """Refuse a node type whose power when off exceeds its power fully busy (switching off would cost
        more than running flat out); here, so that the error names the platform file and the key."""
        for nname, nt in self.node_types.items():
            full_w = sum(c * self.processor_types[p].power_w for p, c in nt.processors.items())
            off_w = nt.off_w if nt.off_w is not None else self.power.off_w
            if off_w > full_w:
                key = f"node_types.{nname}.off_w" if nt.off_w is not None else "power.off_w"
                raise ValueError(f"{key}: {off_w:g} W for a node that is off, more than the {full_w:g} W it draws "
                                 "fully busy")

    def _size_bounds(self) -> None:
        """Refuse, before flattening anything, a platform the twin cannot simulate (MAX_NODES, MAX_CORES)."""
        per_node = {n: sum(c * self.processor_types[p].cores for p, c in nt.processors.items())
                    for n, nt in self.node_types.items()}
        nodes = sum(c for cl in self.clusters for c in cl.nodes.values())
        cores = sum(c * per_node[n] for cl in self.clusters for n, c in cl.nodes.items())
        if cores == 0:
            raise ValueError("clusters: the platform has no cores (every node count is 0)")
        if nodes > MAX_NODES:
            raise ValueError(f"clusters: {nodes} nodes; the twin simulates at most {MAX_NODES}")
        if cores > MAX_CORES:
            raise ValueError(f"clusters: {cores} cores; the twin simulates at most {MAX_CORES}")


@dataclass(frozen=True)
class ProcLayout:
    """One processor instance in the flattened platform."""

    node: int
    ptype: str
    first_core: int
    cores: int
    gflops_per_core: float
    mem_bw_gbs: float
    power_w: float


@dataclass(frozen=True)
class NodeLayout:
    cluster: str
    ntype: str
    memory_mb: float
    boot_s: float
    boot_j: float
    off_w: float
    procs: tuple[int, ...]


@dataclass(frozen=True)
class Platform:
    """A validated platform flattened into nodes and processors (immutable; shared by runs)."""

    spec: PlatformSpec
    nodes: tuple[NodeLayout, ...]
    procs: tuple[ProcLayout, ...]
    n_cores: int
    ref_speed: float = field(metadata={"unit": "GFLOP/s"})
    digest: str

    def summary(self) -> dict[str, Any]:
        """Counts and totals for `paretosched platform show`."""
        by_type: dict[str, dict[str, float]] = {}
        for p in self.procs:
            row = by_type.setdefault(p.ptype, {"processors": 0, "cores": 0, "gflops": 0.0, "power_w": 0.0})
            row["processors"] += 1
            row["cores"] += p.cores
            row["gflops"] += p.cores * p.gflops_per_core
            row["power_w"] += p.power_w
        return {
            "name": self.spec.name,
            "clusters": len(self.spec.clusters),
            "nodes": len(self.nodes),
            "processors": len(self.procs),
            "cores": self.n_cores,
            "peak_gflops": sum(r["gflops"] for r in by_type.values()),
            "power_w": sum(r["power_w"] for r in by_type.values()),
            "ref_speed_gflops": self.ref_speed,
            "by_processor_type": by_type,
        }


def build_platform(spec: PlatformSpec) -> Platform:
    """Flatten clusters > nodes > processors > cores, numbering cores in file order."""
    nodes: list[NodeLayout] = []
    procs: list[ProcLayout] = []
    core = 0
    for cl in spec.clusters:
        for nname, count in cl.nodes.items():
            nt = spec.node_types[nname]
            for _ in range(count):
                node_idx = len(nodes)
                pids = []
                full_w = 0.0
                for pname, pcount in nt.processors.items():
                    pt = spec.processor_types[pname]
                    for _ in range(pcount):
                        pids.append(len(procs))
                        procs.append(ProcLayout(node_idx, pname, core, pt.cores, pt.gflops_per_core,
                                                pt.mem_bw_gbs if pt.mem_bw_gbs is not None else math.inf,
                                                pt.power_w))
                        core += pt.cores
                        full_w += pt.power_w
                boot_s = nt.boot_s if nt.boot_s is not None else spec.power.boot_s
                boot_j = nt.boot_j if nt.boot_j is not None else (
                    spec.power.boot_j if spec.power.boot_j is not None else boot_s * full_w)
                off_w = nt.off_w if nt.off_w is not None else spec.power.off_w
                mem = nt.memory_gb * 1024.0 if nt.memory_gb is not None else math.inf
                nodes.append(NodeLayout(cl.name, nname, mem, boot_s, boot_j, off_w, tuple(pids)))
    if core == 0:
        raise UserError(f"platform {spec.name}: has no cores")
    ref = sum(p.cores * p.gflops_per_core for p in procs) / core
    digest = hashlib.sha256(json.dumps(spec.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()
    return Platform(spec, tuple(nodes), tuple(procs), core, ref, digest)


def homogeneous_spec(n: int) -> PlatformSpec:
    """N single-core nodes of 1 GFLOP/s, no memory or bandwidth limit (for peer comparisons)."""
    return PlatformSpec.model_validate({
        "name": f"homogeneous-{n}",
        "processor_types": {"unit": {"cores": 1, "clock_ghz": 1.0, "flops_per_cycle": 1.0, "power_w": 100.0}},
        "node_types": {"unit": {"processors": {"unit": 1}}},
        "clusters": [{"name": "homogeneous", "nodes": {"unit": n}}],
    })


def builtin_platform_names() -> list[str]:
    files = resources.files("paretosched.data").joinpath("platforms")
    return sorted(p.name.rsplit(".", 1)[0] for p in files.iterdir() if p.name.endswith(".yaml"))


def load_platform_spec(ref: str | dict[str, Any]) -> PlatformSpec:
    """A platform by built-in name, `homogeneous-N`, file path, or inline mapping."""
    if isinstance(ref, dict):
        return validate(PlatformSpec, ref, "platform")
    m = _HOMOGENEOUS.match(ref)
    if m:
        n = int(m.group(1))
        if not 1 <= n <= MAX_NODES:
            raise UserError(f"platform {ref!r}: N must be in 1..{MAX_NODES} (the largest platform the twin simulates)")
        return homogeneous_spec(n)
    name = ref.removeprefix("builtin:")
    bundled_file = bundled("platforms", f"{name}.yaml")
    if bundled_file is not None:
        return validate(PlatformSpec, read_yaml(bundled_file), f"platform {name}")
    path = Path(ref)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        return validate(PlatformSpec, read_yaml(path), str(path))
    known = ", ".join(builtin_platform_names() + ["homogeneous-N"])
    hint = did_you_mean(name, builtin_platform_names())
    raise UserError(f"platform: unknown platform {ref!r}{hint} (built-ins: {known}; or a .yaml/.json file)")


@lru_cache(maxsize=16)
def _load_cached(key: str) -> Platform:
    return build_platform(load_platform_spec(json.loads(key)))


def load_platform(ref: str | dict[str, Any]) -> Platform:
    """Load and flatten a platform; identical references are parsed once per process."""
    if isinstance(ref, str) and not _HOMOGENEOUS.match(ref) and Path(ref).is_file():
        # key on content too, so an edited file is re-read
        ref_key = json.dumps([ref, Path(ref).stat().st_mtime_ns])
        return _load_cached_file(ref_key)
    return _load_cached(json.dumps(ref, sort_keys=True))


@lru_cache(maxsize=16)
def _load_cached_file(key: str) -> Platform:
    return build_platform(load_platform_spec(json.loads(key)[0]))


def fits_factory(platform: Platform) -> Callable[[int, float], bool]:
    """fits(size, mem_per_core): can the empty platform ever host this job?"""
    n = platform.n_cores
    per_node = [(sum(platform.procs[i].cores for i in node.procs), node.memory_mb) for node in platform.nodes]
    min_ratio = min(mem / cores for cores, mem in per_node)

    @lru_cache(maxsize=4096)
    def capacity(mem: float) -> int:
        return sum(min(cores, int(math.floor(m / mem + 1e-9))) if m < math.inf else cores for cores, m in per_node)

    def fits(size: int, mem: float) -> bool:
        if size > n:
            return False
        if mem <= min_ratio:
            return True
        return size <= capacity(mem)

    return fits
