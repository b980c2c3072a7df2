"""`export --format slurm --against slurm.conf`: the smallest edit of the operator's slurm.conf.

The operator's file is decoded as `platform import --scheduler` decodes it; every scheduler field
whose value differs from the pick's is set where the file sets it (a `SchedulerParameters` option
in place, the other options kept), appended when the file does not set it, and the node Weights
on the NodeName lines that define them. Nothing else changes. The result is re-imported before it
is written: it must decode to the picked section, or the export fails (it never writes a diff
that does not deploy the pick). The output is a unified diff (`patch slurm.conf < FILE`) whose
leading comment lines, which `patch` skips, say how each change takes effect (slurm_params).
"""

from __future__ import annotations

import difflib
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paretosched.analysis.conf_edit import ConfText
from paretosched.analysis.slurm_export import first_nodes
from paretosched.analysis.slurm_params import PARAMS, UNMAPPED, takes_effect
from paretosched.errors import UserError
from paretosched.sim.readers.platform import PlatformSpec, build_platform, load_platform
from paretosched.sim.readers.slurm.conf import NodeLine, SlurmConf, load_cpu_map, read_slurm_conf
from paretosched.sim.readers.slurm.platform_import import node_names, platform_from_conf
from paretosched.sim.readers.slurm.sched_import import scheduler_from_conf
from paretosched.sim.readers.slurm.weights import node_weights, order_of_weights


@dataclass(frozen=True)
class Change:
    """One changed parameter: what, from, to, where in the file, and how it takes effect."""

    param: str  # "PriorityWeightJobSize", "SchedulerParameters bf_window", "NodeName=cpu[01-08] Weight"
    old: str | None  # None: not set in the file (Slurm's default)
    new: str | None  # None: removed (Slurm's default)
    where: str
    takes_effect: str

    def line(self) -> str:
        old = "(not set)" if self.old is None else self.old
        new = "(removed: Slurm's default)" if self.new is None else self.new
        return f"{self.param}: {old} -> {new} ({self.where}); takes effect: {self.takes_effect}"


@dataclass
class Imported:
    """A slurm.conf as `platform import --scheduler` reads it."""

    conf: SlurmConf
    platform: dict[str, Any]
    weights: dict[str, int]
    scheduler: dict[str, Any]


def import_conf(path: str | Path, cpu_map: str | None) -> Imported:
    conf = read_slurm_conf([path])
    data, report = platform_from_conf(conf, load_cpu_map(cpu_map), "against")
    return Imported(conf, data, report.weights, scheduler_from_conf(conf, data, report.weights))


def canonical(sched: dict[str, Any], plat: Any) -> dict[str, Any]:
    """`sched` with node_order as the importer names its Weights (orders that rank the nodes alike,
    e.g. every order on identical nodes, are one setting)."""
    out = dict(sched)
    if "node_order" in out:
        out["node_order"] = order_of_weights(plat, node_weights(plat, out["node_order"])) or out["node_order"]
    return out


def _names(plat: Any, what: str) -> list[str]:
    names = node_names(plat.spec)
    if names is None:
        raise UserError(f"{what}: its clusters are not Slurm hostlists; import the platform from the slurm.conf "
                        "you pass to --against (`platform import`)")
    return names


def _weight_line(conf: SlurmConf, node: str) -> NodeLine:
    """The line whose Weight a node gets: its last Weight-only update, else its definition."""
    for upd in reversed(conf.weight_updates):
        if node in upd.names:
            return upd
    return next(line for line in conf.nodes if node in line.names)


def kept_weights(lines: list[tuple[int, int]]) -> list[int]:
    """New Weights for lines given as (rank in the wanted order, current Weight): Weights rise strictly
    with the rank and are equal within one, changing as few lines as possible of two candidates: the
    ranks themselves, or each rank keeping its most common current Weight above the previous rank's."""
    last, kept = 0, {}
    for r in sorted({r for r, _ in lines}):
        counts = Counter(w for rr, w in lines if rr == r and w > last)
        kept[r] = min(counts, key=lambda w: (-counts[w], w)) if counts else last + 1
        last = kept[r]
    greedy, ranks = [kept[r] for r, _ in lines], [r for r, _ in lines]

    def n_changed(new: list[int]) -> int:
        return sum(n != w for n, (_, w) in zip(new, lines))

    return greedy if n_changed(greedy) <= n_changed(ranks) else ranks


def _edit_weights(text: ConfText, imp: Imported, plat: Any, names: list[str], order: str) -> list[Change]:
    want = dict(zip(names, node_weights(plat, order)))
    by_line: dict[tuple[str, int], tuple[NodeLine, list[str]]] = {}
    for n in names:
        line = _weight_line(imp.conf, n)
        by_line.setdefault((line.source, line.line), (line, []))[1].append(n)
    groups = list(by_line.values())
    for line, nodes in groups:
        if len({want[n] for n in nodes}) > 1:
            raise UserError(f"{line.where()}: node order {order} gives its nodes different Weights "
                            f"({', '.join(f'{n}={want[n]}' for n in nodes)}); split the line")
    # a line's nodes share the Weight the line gives them
    weights = kept_weights([(want[nodes[0]], imp.weights[nodes[0]]) for _, nodes in groups])
    changes = []
    for (line, nodes), w in zip(groups, weights):
        old = {imp.weights[n] for n in nodes}
        if old == {w}:
            continue
        toks = text.line_of(line.line - 1)
        wt = [t for t in toks if t.key == "weight"]
        if wt:
            text.replace(wt[-1], str(w))
        else:
            text.add_token(toks, "Weight", str(w))
        changes.append(Change(f"NodeName={line.expr} Weight", ",".join(map(str, sorted(old))), str(w),
                              f"line {line.line}", takes_effect("nodename")))
    return changes


def edit_conf(text: ConfText, imp: Imported, picked: dict[str, Any]) -> list[Change]:
    """Edit `text` (the file `imp` was read from) so it configures `picked`; the changes made."""
    plat = build_platform(PlatformSpec.model_validate(imp.platform))
    names = _names(plat, "--against")
    cur, new = canonical(imp.scheduler, plat), canonical(picked, plat)
    differ = [f for f in new if f != "kind" and cur.get(f) != new[f]]
    bad = [f for f in differ if f in UNMAPPED or f not in PARAMS]
    if bad:
        raise UserError(f"--against: scheduler field {bad[0]} differs from the file ({cur.get(bad[0])!r} -> "
                        f"{new[bad[0]]!r}) but nothing maps it to slurm.conf (analysis/slurm_params.py)")
    changes: list[Change] = []
    conf = imp.conf
    for f in differ:
        p = PARAMS[f]
        if p.kind != "plain":
            continue
        value = p.encode(new[f])
        if p.option:
            old_opts = dict(x.partition("=")[::2] for x in (conf.param("schedulerparameters") or "").split(",") if x)
            where = text.set_option(p.key, value)
            changes.append(Change(f"SchedulerParameters {p.key}", old_opts.get(p.key), value, where,
                                  takes_effect(p.conf_key)))
        else:
            old = conf.param(p.key)
            where = text.set_param(p.key, value)
            changes.append(Change(p.key, old, value, where, takes_effect(p.conf_key)))
    if any(f.startswith("priority_") for f in differ) and (conf.param("prioritytype") or "").lower() != "priority/multifactor":
        # the weights mean nothing under priority/basic (Slurm's default): the twin's kind is multifactor
        where = text.set_param("PriorityType", "priority/multifactor")
        changes.append(Change("PriorityType", conf.param("prioritytype"), "priority/multifactor", where,
                              takes_effect("prioritytype")))
    if "node_order" in differ:
        changes += _edit_weights(text, imp, plat, names, new["node_order"])
    n_exc = new.get("suspend_exc_nodes", 0)
    listed = conf.param("suspendexcnodes") or ""
    # the excluded nodes are the first of the Weight order: a new order moves them unless counted (`nodes:N`)
    moved = "node_order" in differ and n_exc > 0 and ":" not in listed
    if "suspend_exc_nodes" in differ or moved:
        if n_exc == 0:
            where = "; ".join(text.unset_param("SuspendExcNodes"))
            changes.append(Change("SuspendExcNodes", listed or None, None, where, takes_effect("suspendexcnodes")))
        else:
            value = first_nodes(plat, new["node_order"], names, n_exc)
            where = text.set_param("SuspendExcNodes", value)
            changes.append(Change("SuspendExcNodes", listed or None, value, where, takes_effect("suspendexcnodes")))
    return changes


def check_round_trip(path: Path, new_text: str, cpu_map: str | None, picked: dict[str, Any]) -> None:
    """The edited file must import to the picked section (else this module has a bug: say so)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / path.name
        p.write_text(new_text, encoding="utf-8")
        again = import_conf(p, cpu_map)
    plat = build_platform(PlatformSpec.model_validate(again.platform))
    got, want = canonical(again.scheduler, plat), canonical(picked, plat)
    if got != want:
        f = next(k for k in want if got.get(k) != want[k])
        raise UserError(f"--against {path}: the edited file imports {f}={got.get(f)!r}, not the pick's {want[f]!r} "
                        "(a bug in export --against: please report it with the file)")


def unified(old: str, new: str, name: str) -> str:
    """difflib's unified diff, with GNU diff's marker for a last line without a newline."""
    out = []
    for line in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile=f"a/{name}", tofile=f"b/{name}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def against_diff(doc: dict[str, Any], conf_path: str | Path, cpu_map: str | None = None) -> tuple[str, list[Change]]:
    """(the diff file's text, the changes) for an exported config document `doc` (config + provenance)."""
    s = doc["scheduler"]
    prov = doc.get("provenance") or {}
    if s.get("kind") != "slurm":
        raise UserError(f"--against: pick {prov.get('pick')} (eval {prov.get('eval_id')}) has scheduler kind "
                        f"{s.get('kind', 'classic')}; a diff of slurm.conf needs a slurm-kind run (without "
                        "--against, --format slurm writes a fragment)")
    path = Path(conf_path)
    try:
        original = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"--against {path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:  # the diff must reproduce the file's bytes: no replacement characters
        raise UserError(f"--against {path}: not UTF-8 text (byte {exc.start}); convert it before diffing") from None
    imp = import_conf(path, cpu_map)
    run_names = _names(load_platform(doc["platform"]), f"the run's platform {doc['platform']!r}")
    conf_names = _names(build_platform(PlatformSpec.model_validate(imp.platform)), str(path))
    if run_names != conf_names:
        raise UserError(f"--against {path}: its nodes ({len(conf_names)}, {conf_names[0]}..) are not the run's "
                        f"platform's ({len(run_names)}, {run_names[0]}..)")
    text = ConfText(original)
    changes = edit_conf(text, imp, s)
    check_round_trip(path, text.text, cpu_map, s)
    head = [f"# paretosched export --format slurm --against {path}: study {prov.get('study')}, pick "
            f"{prov.get('pick')} (eval {prov.get('eval_id')})",
            f"# apply: patch {path} < THIS_FILE   (patch skips these comment lines)",
            "# how each change takes effect (slurm.conf(5)):"]
    head += [f"#   {c.line()}" for c in changes] or ["#   nothing: the file already configures this pick"]
    return "\n".join(head) + "\n" + unified(original, text.text, path.name), changes
