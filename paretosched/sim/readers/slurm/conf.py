"""slurm.conf reading: `NodeName=` lines to a platform, other parameters kept for the scheduler.

Syntax handled (slurm.conf(5)): `Key=Value` pairs separated by blanks, keys case-insensitive;
`#` starts a comment; a line ending in `\\` continues on the next; `NodeName=DEFAULT` sets defaults
for the node lines after it; `Include` lines are reported, not followed (their files live on the
cluster, not here); hostlist expressions name many nodes at once. slurm.conf says nothing of clocks,
flops or power: each node is mapped to a processor of the library (`data/slurm/cpus.yaml`) by a
Feature tag or a node-name pattern (a cpu-map file), and a node that maps to nothing is an error
naming its line.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paretosched.errors import UserError
from paretosched.sim.readers.inputs import bundled
from paretosched.sim.readers.platform import MAX_NODES
from paretosched.sim.readers.slurm.hostlist import expand
from paretosched.yamlio import read_yaml

# NodeName keys that shape the platform; others (NodeAddr, Gres, Port, ...) are listed as ignored
_NODE_KEYS = {"nodename", "cpus", "boards", "socketsperboard", "sockets", "corespersocket", "threadspercore",
              "realmemory", "feature", "features", "weight", "state"}
_INT_KEYS = {"cpus", "boards", "socketsperboard", "sockets", "corespersocket", "threadspercore", "realmemory",
             "weight"}


@dataclass
class NodeLine:
    """One `NodeName=` line with the DEFAULT values in force merged in."""

    source: str
    line: int
    expr: str
    names: list[str]
    attrs: dict[str, str]

    def where(self) -> str:
        return f"{self.source}:{self.line}"

    def int_attr(self, key: str, default: int | None = None) -> int | None:
        raw = self.attrs.get(key)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise UserError(f"{self.where()}: {key} must be an integer, got {raw!r}") from None
        if value < 0 or (value == 0 and key != "weight"):
            raise UserError(f"{self.where()}: {key} must be positive, got {raw!r}")
        return value

    @property
    def features(self) -> list[str]:
        raw = self.attrs.get("features", self.attrs.get("feature", ""))
        return [f.strip() for f in raw.split(",") if f.strip()]


@dataclass
class SlurmConf:
    """What one or more slurm.conf files say: node lines, other parameters, notes for the user."""

    nodes: list[NodeLine] = field(default_factory=list)
    params: dict[str, tuple[str, str]] = field(default_factory=dict)  # lower key -> (value, file:line)
    weight_updates: list[NodeLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # the files read, for errors about all of them
    partitions: list[tuple[dict[str, str], str]] = field(default_factory=list)  # (keys, file:line)

    def param(self, key: str) -> str | None:
        hit = self.params.get(key.lower())
        return hit[0] if hit else None

    def where(self, key: str) -> str:
        hit = self.params.get(key.lower())
        return hit[1] if hit else key

    def partition_names(self) -> list[str]:
        """The partitions in slurm.conf order (not `PartitionName=DEFAULT`): SWF field 16 numbers them from 1."""
        return [keys["partitionname"] for keys, _ in self.partitions if keys["partitionname"].upper() != "DEFAULT"]


def _logical_lines(text: str, source: str) -> list[tuple[int, str]]:
    """(first physical line number, text) with comments removed and continuations joined."""
    out: list[tuple[int, str]] = []
    buf, start, no = "", 0, 0
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not buf:
            start = no
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        if buf.strip():
            out.append((start, buf.strip()))
        buf = ""
    if buf:
        # Slurm would join the line with nothing: a truncated file, most likely
        raise UserError(f"{source}:{no}: line ends in '\\' but the file ends (continuation of nothing)")
    return out


# shlex builds each token a character at a time, in time quadratic in its length: a NodeName of 3
# million comma-separated names (25 MB) ran for minutes. A line without quotes or escapes splits on
# blanks alike; one with them is bounded.
_QUOTED = re.compile(r"[\"'\\]")
MAX_QUOTED_LINE = 100_000


def _pairs(text: str, where: str) -> list[tuple[str, str]]:
    if _QUOTED.search(text) is None:
        tokens = text.split()
    elif len(text) > MAX_QUOTED_LINE:
        raise UserError(f"{where}: a line of {len(text)} characters with quotes or escapes (at most "
                        f"{MAX_QUOTED_LINE})")
    else:
        try:
            tokens = shlex.split(text, posix=True)
        except ValueError as exc:
            raise UserError(f"{where}: {exc}") from None
    pairs = []
    for tok in tokens:
        key, eq, value = tok.partition("=")
        if not eq or not key:
            raise UserError(f"{where}: expected Key=Value, got {tok!r}")
        pairs.append((key.lower(), value))
    return pairs


def read_slurm_conf(paths: list[str | Path]) -> SlurmConf:
    """Parse slurm.conf files in order (later files override parameters, as an appended fragment)."""
    conf = SlurmConf()
    seen: dict[str, str] = {}
    for path in paths:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UserError(f"{p}: cannot read: {exc.strerror or exc}") from None
        conf.sources.append(str(p))
        defaults: dict[str, str] = {}
        for no, line in _logical_lines(text, str(p)):
            where = f"{p}:{no}"
            if line.split(None, 1)[0].lower() == "include":
                conf.notes.append(f"{where}: Include not followed ({line.split(None, 1)[1] if ' ' in line else ''}); "
                                  "append the file's node lines to this one if they matter")
                continue
            pairs = _pairs(line, where)
            first = pairs[0][0]
            if first != "nodename":
                if first == "partitionname":  # not part of the platform; the scheduler import reads them
                    conf.partitions.append((dict(pairs), where))
                    continue
                if first in ("nodeset", "frontendname", "downnodes", "switchname"):
                    continue  # topology: not part of the platform model
                for key, value in pairs:
                    conf.params[key] = (value, where)
                continue
            attrs = dict(pairs)
            expr = attrs.pop("nodename")
            if expr.upper() == "DEFAULT":
                defaults.update(attrs)
                continue
            merged = {**defaults, **attrs}
            try:
                names = expand(expr)
            except ValueError as exc:
                raise UserError(f"{where}: NodeName: {exc}") from None
            if set(attrs) == {"weight"} and all(n in seen for n in names):
                # a Weight-only line for defined nodes (as `export --format slurm` writes): an update
                conf.weight_updates.append(NodeLine(str(p), no, expr, names, attrs))
                continue
            if len(seen) + len(names) > MAX_NODES:  # each line is bounded; their sum must be too
                raise UserError(f"{where}: NodeName: the node lines name more than {MAX_NODES} nodes (the largest "
                                "platform the twin simulates)")
            for n in names:
                if n in seen:
                    raise UserError(f"{where}: node {n} already defined at {seen[n]}")
                seen[n] = where
            ignored = sorted(k for k in merged if k not in _NODE_KEYS)
            if ignored:
                conf.notes.append(f"{where}: ignored {', '.join(ignored)} (not part of the platform model)")
            conf.nodes.append(NodeLine(str(p), no, expr, names, merged))
    return conf


@dataclass
class CpuMap:
    """Feature tag -> model, node-name pattern -> model, extra models, platform power defaults."""

    library: dict[str, dict[str, Any]]
    features: dict[str, str]
    patterns: list[tuple[re.Pattern[str], str]]
    power: dict[str, Any] | None
    source: str


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def load_library() -> dict[str, dict[str, Any]]:
    """The bundled processor library (data/slurm/cpus.yaml)."""
    path = bundled("slurm", "cpus.yaml")
    assert path is not None, "package data data/slurm/cpus.yaml is missing"
    return dict(read_yaml(path))


_MODEL_KEYS = {"model", "cores", "clock_ghz", "flops_per_cycle", "mem_bw_gbs", "tdp_w", "min_ghz"}


def load_cpu_map(path: str | Path | None) -> CpuMap:
    """A cpu-map YAML (`features`, `patterns`, `processors`, `power`), or the library alone."""
    library = load_library()
    if path is None:
        return CpuMap(library, {}, [], None, "<library>")
    src = str(path)
    data = read_yaml(Path(path))
    if not isinstance(data, dict):
        raise UserError(f"{src}: expected a mapping with features, patterns, processors, power")
    unknown = set(data) - {"features", "patterns", "processors", "power"}
    if unknown:
        raise UserError(f"{src}: unknown key {sorted(unknown)[0]!r} (expected features, patterns, processors, power)")
    for key in ("features", "patterns", "processors", "power"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise UserError(f"{src}: {key}: expected a mapping, got {type(data[key]).__name__} "
                            f"(e.g. {key}: {{name: value}})")
    for key in ("features", "patterns"):
        for tag, model in (data.get(key) or {}).items():
            if not isinstance(model, str):
                raise UserError(f"{src}: {key}.{tag}: expected a processor model name, got {type(model).__name__}")
    for name, spec in (data.get("processors") or {}).items():
        if not isinstance(spec, dict) or set(spec) - _MODEL_KEYS or {"cores", "clock_ghz", "flops_per_cycle",
                                                                    "tdp_w"} - set(spec):
            raise UserError(f"{src}: processors.{name}: expected cores, clock_ghz, flops_per_cycle, tdp_w "
                            "(and optionally mem_bw_gbs, min_ghz, model)")
        library[name] = spec
    features = {}
    for tag, model in (data.get("features") or {}).items():
        if model not in library:
            raise UserError(f"{src}: features.{tag}: unknown processor model {model!r}")
        features[_norm(str(tag))] = model
    patterns = []
    for pat, model in (data.get("patterns") or {}).items():
        if model not in library:
            raise UserError(f"{src}: patterns.{pat}: unknown processor model {model!r}")
        try:
            compiled = re.compile(str(pat))
        except (re.error, RecursionError, OverflowError) as exc:
            raise UserError(f"{src}: patterns.{pat}: not a regular expression ({exc})") from None
        problem = _backtracking_risk(str(pat))
        if problem:
            raise UserError(f"{src}: patterns.{pat}: {problem}")
        patterns.append((compiled, model))
    return CpuMap(library, features, patterns, data.get("power"), src)


# Python's `re` backtracks: `(a+)+c` against a 35-character name ran past 60 s. A cpu-map pattern is
# therefore a safe subset of regular expressions: a quantifier applies to one character, class or `.`
# only (no quantified group: nested or alternated repetition is what grows exponentially), at most
# MAX_VARIABLE of them vary in length (backtracking then costs at most ~n^2 steps), no
# backreference, no longer than MAX_PATTERN characters, matched against names of at most MAX_NAME
# characters (Linux's HOST_NAME_MAX): under a millisecond per node whatever the pattern.
MAX_PATTERN = 200
MAX_VARIABLE = 2
MAX_NAME = 64


def _backtracking_risk(pattern: str) -> str | None:
    """Why `pattern` is outside the safe subset above, or None."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser as sre

    if len(pattern) > MAX_PATTERN:
        return f"a pattern of {len(pattern)} characters (at most {MAX_PATTERN})"
    single = {c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.CATEGORY}
    variable = 0

    def walk(items: Any) -> str | None:
        nonlocal variable
        for op, av in items:
            if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                low, high, body = av
                if len(body) != 1 or body[0][0] not in single:
                    return "a quantifier on a group (write it on one character or class, e.g. 'node\\d+')"
                variable += low != high
            elif op in (c.GROUPREF, c.GROUPREF_EXISTS):
                return "a backreference"
            elif op == c.SUBPATTERN:
                found = walk(av[-1])
                if found:
                    return found
            elif op in (c.ASSERT, c.ASSERT_NOT):
                found = walk(av[1])
                if found:
                    return found
            elif op == c.ATOMIC_GROUP:
                found = walk(av)
                if found:
                    return found
            elif op == c.BRANCH:
                for alt in av[1]:
                    found = walk(alt)
                    if found:
                        return found
        return None

    found = walk(sre.parse(pattern))
    if found is None and variable > MAX_VARIABLE:
        found = f"{variable} quantifiers of variable length (at most {MAX_VARIABLE})"
    return None if found is None else (f"{found}: cpu-map patterns are a safe subset of regular expressions, "
                                       "matched without exponential backtracking")


def model_of(line: NodeLine, name: str, cmap: CpuMap) -> str:
    """The library model of one node: a mapped Feature, a Feature naming a model, a name pattern."""
    by_norm = {_norm(k): k for k in cmap.library}
    for tag in line.features:
        t = _norm(tag)
        if t in cmap.features:
            return cmap.features[t]
        if t in by_norm:
            return by_norm[t]
    if cmap.patterns and len(name) > MAX_NAME:
        raise UserError(f"{line.where()}: node name {name[:40]}... has {len(name)} characters; a host name has at "
                        f"most {MAX_NAME} (cpu-map patterns match names up to that length)")
    for pat, model in cmap.patterns:
        if pat.fullmatch(name):
            return model
    raise UserError(f"{line.where()}: node {name} maps to no processor model (Features: "
                    f"{','.join(line.features) or 'none'}); add a Feature naming a library model or a "
                    f"features/patterns entry to the cpu-map ({cmap.source})")
