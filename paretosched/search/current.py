"""A baseline read from the slurm.conf a cluster runs today (`from_slurm_conf`, docs/slurm.md).

    baselines:
      current: {from_slurm_conf: slurm.conf}                            # path relative to the study file
      current: {from_slurm_conf: {path: slurm.conf, cpu_map: cpus.yaml}}  # when its nodes need a cpu map

The scheduler section is decoded by the same calls as `paretosched platform import slurm.conf
--scheduler s.yaml` (sim/slurm: read the file, import its nodes for their Weight order, decode
its Slurm parameters), so the baseline is exactly that file's `scheduler:`. Only the scheduler
section comes from the file: the platform, workload and model stay the study's base. The
resolved study (a run directory's study.yaml) holds the decoded section, not the path, so a run
resumes and re-reads the same baseline after the file changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paretosched.errors import UserError

KEY = "from_slurm_conf"


def decode_scheduler(conf: str | Path, cpu_map: str | Path | None = None, notes: list[str] | None = None) -> dict[str, Any]:
    """The `scheduler` section `platform import CONF [--cpu-map MAP] --scheduler` writes."""
    from paretosched.sim.readers.slurm.conf import load_cpu_map, read_slurm_conf
    from paretosched.sim.readers.slurm.platform_import import default_name, platform_from_conf
    from paretosched.sim.readers.slurm.sched_import import scheduler_from_conf

    parsed = read_slurm_conf([conf])
    data, report = platform_from_conf(parsed, load_cpu_map(cpu_map), default_name(conf, parsed))
    return scheduler_from_conf(parsed, data, report.weights, notes)


def resolve_baseline(name: str, override: dict[str, Any], study_dir: Path, src: str,
                     confs: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """A baseline override with `from_slurm_conf` replaced by the scheduler section it decodes
    (other keys, e.g. a `model`, stay); any other override is returned as it is. `confs` gets
    the file's (and cpu map's) absolute path under the baseline's name; `src` names the study file in errors."""
    if KEY not in override:
        return override
    where = f"{src}: baselines.{name}"
    spec = override[KEY]
    if isinstance(spec, str):
        spec = {"path": spec}
    if not isinstance(spec, dict) or not isinstance(spec.get("path"), str) or \
            set(spec) - {"path", "cpu_map"} or not isinstance(spec.get("cpu_map", ""), str):
        raise UserError(f"{where}.{KEY}: expected the path of a slurm.conf, or {{path: slurm.conf, cpu_map: cpus.yaml}}")
    if "scheduler" in override:
        raise UserError(f"{where}: {KEY} and scheduler: the slurm.conf gives the scheduler section; give one of them")

    def _path(p: str) -> Path:
        return Path(p) if Path(p).is_absolute() else study_dir / p

    conf = _path(spec["path"])
    if not conf.is_file():
        raise UserError(f"{where}.{KEY}: {conf}: no such file")
    try:
        sched = decode_scheduler(conf, _path(spec["cpu_map"]) if spec.get("cpu_map") else None)
    except UserError as exc:
        raise UserError(f"{where}.{KEY}: {exc}") from None
    if confs is not None:
        confs[name] = {"path": str(conf.resolve()),
                       **({"cpu_map": str(_path(spec["cpu_map"]).resolve())} if spec.get("cpu_map") else {})}
    return {**{k: v for k, v in override.items() if k != KEY}, "scheduler": sched}
