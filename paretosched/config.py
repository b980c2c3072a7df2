"""The scheduler-config schema: what `simulate` reads, what a genome decodes to, what `export` writes.

A config has four sections (platform, workload, model, scheduler) and a seed. Every field is a
plain value so that any of them can become a gene of the optimiser by its dotted path
(e.g. `scheduler.job_policy`, `scheduler.power_off_idle_s`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from paretosched.yamlio import read_yaml, register_union_tags, validate

JobPolicy = Literal["random", "first", "shortest", "smallest", "low_mem", "low_mem_bw"]
ResourcePolicy = Literal["random", "high_gflops", "high_cores", "high_mem", "high_mem_bw", "low_power"]
JOB_POLICIES: tuple[str, ...] = JobPolicy.__args__  # type: ignore[attr-defined]
RESOURCE_POLICIES: tuple[str, ...] = ResourcePolicy.__args__  # type: ignore[attr-defined]

BUILTIN_PREFIX = "builtin:"


class Strict(BaseModel):
    """Base for config sections: unknown keys are errors, values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class InlineJob(Strict):
    """A job written out in the config (synthetic scenarios, tests)."""

    id: int | None = None
    submit_s: float = Field(0.0, ge=0)
    cores: int = Field(1, ge=1)
    run_s: float = Field(..., ge=0, description="actual run time on a core of the reference speed")
    req_s: float | None = Field(None, gt=0, description="user estimate; defaults to run_s")
    mem_mb: float = Field(0.0, ge=0, description="memory per core, MB")
    bw_gbs: float | None = Field(None, ge=0, description="memory bandwidth per core, GB/s")


class WorkloadSpec(Strict):
    """Where the jobs come from: an SWF trace window, or jobs written inline."""

    path: str | None = None
    jobs: list[InlineJob] | None = None
    mode: Literal["trace", "hdeeprm"] = "trace"
    first_job: int = Field(0, ge=0, description="job lines of the trace to skip")
    n_jobs: int | None = Field(None, ge=1, description="job lines to read after first_job")
    seed: int | None = Field(None, ge=0, description="enrichment seed; null = derived from the run seed")

    @model_validator(mode="after")
    def _one_source(self) -> WorkloadSpec:
        if (self.path is None) == (self.jobs is None):
            raise ValueError("give exactly one of 'path' (an SWF trace) or 'jobs' (inline jobs)")
        return self


class ModelSpec(Strict):
    """The twin's physics: interference model and P-state fractions (thesis defaults)."""

    interference: Literal["thesis", "proportional", "none"] = "thesis"
    p1_speed: float = Field(0.75, gt=0, le=1, description="speed fraction of a core in P1")
    p2_power: float = Field(0.25, ge=0, le=1, description="power fraction of an idle core of a busy processor")
    p3_power: float = Field(0.05, ge=0, le=1, description="power fraction of a core of an idle processor")
    static_power: float = Field(0.3, ge=0, le=1, description="static share of full power under DVFS")


class Levers(Strict):
    """Energy levers shared by every scheduler kind; all off by default (thesis model)."""

    bw_cap: float | None = Field(None, gt=0, description="skip processors whose bandwidth would exceed cap x capacity")
    power_off_idle_s: float | None = Field(None, ge=0, description="switch a node off after this idle time")
    min_nodes_on: int = Field(0, ge=0, description="nodes never switched off")
    boot_s: float | None = Field(None, ge=0, description="override the platform's boot time")
    boot_j: float | None = Field(None, ge=0, description="override the platform's boot energy")
    off_w: float | None = Field(None, ge=0, description="override the platform's power of an off node")
    freq: float = Field(1.0, gt=0, le=1, description="global DVFS frequency factor")
    freq_by_type: dict[str, Annotated[float, Field(gt=0, le=1)]] = Field(default_factory=dict)


class ClassicScheduler(Levers):
    """A policy pair of thesis table 3.2 plus optional EASY backfilling."""

    kind: Literal["classic"] = "classic"
    job_policy: JobPolicy = "first"
    resource_policy: ResourcePolicy = "high_gflops"
    backfilling: Literal["none", "easy"] = "none"


def _scheduler_kind(value: Any) -> str:
    # `kind` may be omitted and then means classic
    if isinstance(value, dict):
        return str(value.get("kind", "classic"))
    return str(getattr(value, "kind", "classic"))


register_union_tags("classic")

SchedulerSpec = Annotated[
    Union[Annotated[ClassicScheduler, Tag("classic")]],
    Discriminator(_scheduler_kind, custom_error_type="unknown_kind",
                  custom_error_message="unknown scheduler kind (expected classic)"),
]


class SimConfig(Strict):
    """One complete, reproducible simulation: platform x workload x model x scheduler x seed."""

    platform: str | dict[str, Any] = Field(..., description="built-in name, homogeneous-N, a file path, or inline")
    workload: WorkloadSpec
    model: ModelSpec = Field(default_factory=ModelSpec)
    scheduler: SchedulerSpec = Field(default_factory=ClassicScheduler)
    seed: int = Field(0, ge=0)
    timeline: bool = Field(False, description="record power/state/queue timelines (slower)")
    provenance: dict[str, Any] | None = Field(None, description="written by export; ignored by the twin")

    def resolved(self, base_dir: str | Path) -> SimConfig:
        """Copy with relative file paths made absolute against `base_dir`."""
        base = Path(base_dir)
        data = self.model_dump()
        data["workload"]["path"] = _resolve(self.workload.path, base)
        if isinstance(self.platform, str):
            data["platform"] = _resolve(self.platform, base) if _looks_like_file(self.platform) else self.platform
        return SimConfig.model_validate(data)


def _looks_like_file(ref: str) -> bool:
    return ref.endswith((".yaml", ".yml", ".json")) or "/" in ref


def _resolve(ref: str | None, base: Path) -> str | None:
    if ref is None or ref.startswith(BUILTIN_PREFIX) or Path(ref).is_absolute():
        return ref
    return str((base / ref).resolve())


def load_config(path: str | Path) -> SimConfig:
    """Read and validate a scheduler config file; relative paths are taken from its folder."""
    p = Path(path)
    cfg = validate(SimConfig, read_yaml(p), str(p))
    return cfg.resolved(p.parent)


def config_from_dict(data: dict[str, Any], source: str = "<config>") -> SimConfig:
    """Validate an in-memory config (genomes, exports, tests)."""
    return validate(SimConfig, data, source)
