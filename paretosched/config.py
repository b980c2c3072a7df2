"""The scheduler-config schema: what `simulate` reads, what a genome decodes to, what `export` writes.

A config has four sections (platform, workload, model, scheduler) and a seed. Every field is a
plain value so that any of them can become a gene of the optimiser by its dotted path
(e.g. `scheduler.job_policy`, `scheduler.power_off_idle_s`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Callable, ClassVar, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from paretosched.errors import UserError
from paretosched.yamlio import read_yaml, register_union_tags, validate

JobPolicy = Literal["random", "first", "shortest", "smallest", "low_mem", "low_mem_bw"]
ResourcePolicy = Literal["random", "high_gflops", "high_cores", "high_mem", "high_mem_bw", "low_power"]
JOB_POLICIES: tuple[str, ...] = JobPolicy.__args__  # type: ignore[attr-defined]
RESOURCE_POLICIES: tuple[str, ...] = ResourcePolicy.__args__  # type: ignore[attr-defined]

BUILTIN_PREFIX = "builtin:"

# Upper bounds of physical quantities (docs/reliability.md): far beyond any real machine or job,
# low enough that sums of energy and time stay finite (1e308 s x 100 W is inf, then NaN).
MAX_SECONDS = 1e10      # ~300 years
MAX_JOULES = 1e15
MAX_WATTS = 1e9
MAX_CORES = 1_000_000
# Lower bounds of the factors the twin divides by or multiplies into a speed (physically meaningful
# range): a speed or bandwidth factor of 5e-324 made a job's run time, and so the energy, inf (then
# the mean power NaN). 1% of nominal is far below any real P-state or P1 slowdown.
MIN_FACTOR = 0.01
# the shortest boot the twin draws power for: its power is boot_j / boot_s (0 means instantaneous)
MIN_BOOT_S = 1e-3


def zero_or_at_least(low: float, what: str) -> Callable[[float | None], float | None]:
    """A validator: 0 (off, instantaneous) or at least `low`, for a quantity the twin divides by."""

    def check(v: float | None) -> float | None:
        if v is not None and 0 < v < low:
            raise ValueError(f"{what} must be 0 or at least {low:g} (physically meaningful range), got {v!r}")
        return v

    return check


BootSeconds = Annotated[float, AfterValidator(zero_or_at_least(MIN_BOOT_S, "a boot time (s)"))]


class Strict(BaseModel):
    """Base for config sections: unknown keys are errors, values are validated on assignment."""

    # allow_inf_nan=False: `.inf` power or `.nan` seconds would turn every metric into NaN
    model_config = ConfigDict(extra="forbid", validate_assignment=True, strict=True, allow_inf_nan=False)


class InlineJob(Strict):
    """A job written out in the config (synthetic scenarios, tests)."""

    id: int | None = None
    submit_s: float = Field(0.0, ge=0, le=MAX_SECONDS)
    cores: int = Field(1, ge=1, le=MAX_CORES)
    run_s: float = Field(..., ge=0, le=MAX_SECONDS, description="actual run time on a core of the reference speed")
    req_s: float | None = Field(None, gt=0, le=MAX_SECONDS, description="user estimate; defaults to run_s")
    mem_mb: float = Field(0.0, ge=0, le=1e12, description="memory per core, MB")
    bw_gbs: float | None = Field(None, ge=0, le=1e6, description="memory bandwidth per core, GB/s")


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
    p1_speed: float = Field(0.75, ge=MIN_FACTOR, le=1, description="speed fraction of a core in P1")
    p2_power: float = Field(0.25, ge=0, le=1, description="power fraction of an idle core of a busy processor")
    p3_power: float = Field(0.05, ge=0, le=1, description="power fraction of a core of an idle processor")
    static_power: float = Field(0.3, ge=0, le=1, description="static share of full power under DVFS")
    progress: Literal["lockstep", "independent"] = Field(
        "lockstep", description="lockstep: a job advances at its slowest core's speed (Batsim/SimGrid ptask_L07); "
        "independent: each processor's part at its own speed, the job ends with the last")


class Levers(Strict):
    """Energy levers shared by every scheduler kind; all off by default (thesis model)."""

    bw_cap: float | None = Field(None, ge=MIN_FACTOR, le=1e3,
                                 description="skip processors whose bandwidth would exceed cap x capacity")
    power_off_idle_s: float | None = Field(None, ge=0, le=MAX_SECONDS, description="switch a node off after this idle time")
    min_nodes_on: int = Field(0, ge=0, le=MAX_CORES, description="nodes never switched off")
    boot_s: BootSeconds | None = Field(None, ge=0, le=MAX_SECONDS, description="override the platform's boot time")
    boot_j: float | None = Field(None, ge=0, le=MAX_JOULES, description="override the platform's boot energy")
    off_w: float | None = Field(None, ge=0, le=MAX_WATTS, description="override the platform's power of an off node")
    freq: float = Field(1.0, ge=MIN_FACTOR, le=1, description="global DVFS frequency factor")
    freq_by_type: dict[str, Annotated[float, Field(ge=MIN_FACTOR, le=1)]] = Field(default_factory=dict)


class ClassicScheduler(Levers):
    """A policy pair of thesis table 3.2 plus optional EASY or conservative backfilling."""

    kind: Literal["classic"] = "classic"
    job_policy: JobPolicy = "first"
    resource_policy: ResourcePolicy = "high_gflops"
    backfilling: Literal["none", "easy", "conservative"] = "none"


PAIR_NAMES: tuple[str, ...] = tuple(f"{j}-{r}" for j in JOB_POLICIES for r in RESOURCE_POLICIES)


class TrainWindow(Strict):
    """A window of the workload's trace used for training episodes (job lines, as `workload`)."""

    first_job: int = Field(..., ge=0, description="job lines of the trace to skip")
    n_jobs: int = Field(..., ge=1, description="job lines to read after first_job")


class RLScheduler(Levers):
    """A learning scheduler (thesis 3.2): at each decision it picks one policy pair (or the void action).

    Action set: `actions` (explicit "job-resource" pair names) or, when it is null, every pair of the
    allowed job policies x allowed resource policies (`allow_job_*`, `allow_res_*`: plain booleans so a
    genome can switch policies in and out), plus the void action when `void_action` is true.
    Training runs `episodes` simulations over the training windows (default: windows of the same trace
    just before the evaluation window, which is `workload`), then the run evaluates greedily on
    `workload`. With `weights` set, training is skipped and the saved agent is evaluated.
    """

    kind: Literal["rl"] = "rl"
    agent: Literal["reinforce", "actor_critic", "tabular"] = Field(
        "reinforce", description="REINFORCE with a baseline, actor-critic, or tabular epsilon-greedy")
    actions: list[str] | None = Field(None, min_length=1, description="explicit 'job-resource' pairs; null = allow_* flags")
    allow_job_random: bool = True
    allow_job_first: bool = True
    allow_job_shortest: bool = True
    allow_job_smallest: bool = True
    allow_job_low_mem: bool = True
    allow_job_low_mem_bw: bool = True
    allow_res_random: bool = True
    allow_res_high_gflops: bool = True
    allow_res_high_cores: bool = True
    allow_res_high_mem: bool = True
    allow_res_high_mem_bw: bool = True
    allow_res_low_power: bool = True
    void_action: bool = Field(False, description="add the void action (start nothing at this instant)")
    backfilling: Literal["none", "easy"] = Field("none", description="EASY after the chosen pair")
    observation: Literal["minimal", "small", "normal"] = Field(
        "small", description="minimal: queue stats; small: + node memory, processor bandwidth; normal: + per core")
    queue_sensitivity: float = Field(0.05, ge=1e-3, le=10, description="queue change noticed in full (0.05 = +-5%)")
    reward: Literal["slowdown", "completion", "utilisation", "makespan", "energy", "energy_slowdown"] = Field(
        "energy_slowdown", description="thesis 3.2.4 rewards, or w x energy + (1 - w) x slowdown")
    reward_weight: float = Field(0.5, ge=0, le=1, description="w of energy_slowdown: 1 = energy only")
    reward_timing: Literal["job", "interval", "instant"] = Field(
        "job", description="job: each action is credited with the outcome of the jobs it started; interval: "
        "the reward rate integrated until the next decision; instant: the rate right after the action (thesis)")
    hidden_units: int = Field(32, ge=1, le=1024)
    hidden_layers: int = Field(2, ge=0, le=8)
    learning_rate: float = Field(0.005, gt=0, le=1, description="Adam step size")
    gamma: float = Field(0.99, ge=0, le=1, description="discount factor")
    entropy_bonus: float = Field(0.01, ge=0, le=10, description="weight of the policy entropy in the loss")
    episodes: int = Field(20, ge=0, le=100_000, description="training simulations (0 = no training)")
    epsilon_start: float = Field(1.0, ge=0, le=1, description="tabular: exploration rate of the first episode")
    epsilon_end: float = Field(0.05, ge=0, le=1, description="tabular: exploration rate it decays to")
    epsilon_decay: float = Field(0.9, gt=0, le=1, description="tabular: eps = end + (start - end) x decay^episode")
    reward_history: int = Field(100, ge=0, description="tabular: returns averaged per state-action (0 = all)")
    queue_bins: int = Field(4, ge=1, le=64, description="tabular: log2 bins of the queue length")
    occupancy_bins: int = Field(4, ge=1, le=64, description="tabular: bins of the busy-core fraction")
    train_windows: list[TrainWindow] | None = Field(None, description="null = derived before the evaluation window")
    train_window_count: int = Field(3, ge=1, le=1000, description="derived training windows")
    train_window_jobs: int | None = Field(None, ge=1, description="jobs per derived window; null = workload.n_jobs")
    weights: str | None = Field(None, description="saved agent (.npz): skip training")

    @model_validator(mode="after")
    def _action_set(self) -> RLScheduler:
        flags = [getattr(self, f"allow_job_{j}") for j in JOB_POLICIES]
        flags += [getattr(self, f"allow_res_{r}") for r in RESOURCE_POLICIES]
        if self.actions is not None:
            bad = [a for a in self.actions if a not in PAIR_NAMES and a != "void"]
            if bad:
                raise ValueError(f"unknown action {bad[0]!r} (expected 'job-resource', e.g. 'first-high_gflops')")
            if len(set(self.actions)) != len(self.actions):
                raise ValueError("actions: duplicate action")
            if not all(flags):
                raise ValueError("give either 'actions' or allow_* flags, not both")
        elif not any(flags[:len(JOB_POLICIES)]) or not any(flags[len(JOB_POLICIES):]):
            raise ValueError("allow at least one job policy and one resource policy")
        if self.epsilon_end > self.epsilon_start:
            raise ValueError("epsilon_end must not exceed epsilon_start")
        return self

    def action_names(self) -> list[str]:
        """The action set in a fixed order: pairs (job policy major), then 'void' if enabled."""
        if self.actions is not None:
            names = [a for a in self.actions if a != "void"]
            void = self.void_action or "void" in self.actions
        else:
            names = [f"{j}-{r}" for j in JOB_POLICIES if getattr(self, f"allow_job_{j}")
                     for r in RESOURCE_POLICIES if getattr(self, f"allow_res_{r}")]
            void = self.void_action
        return names + (["void"] if void else [])


NodeOrder = Literal["platform", "fastest_first", "lowest_power_first", "efficiency_first"]


class SlurmPartition(Strict):
    """One slurm.conf PartitionName line: the nodes its jobs may run on and its PriorityTier. A job's
    partition is SWF field 16, the 1-based position of the partition in `partitions` (-1 or 0: the
    Default one)."""

    name: str = Field(..., min_length=1, max_length=200, description="PartitionName")
    nodes: str = Field("ALL", min_length=1, description="Nodes: a hostlist of the platform's node names, or ALL")
    priority_tier: int = Field(1, ge=0, le=65533, description="PriorityTier (jobs of higher tiers are "
                               "considered first)")
    priority_job_factor: int = Field(1, ge=0, le=65533, description="PriorityJobFactor (the partition factor: this "
                                     "/ the largest of all partitions, times PriorityWeightPartition)")
    default: bool = Field(False, description="Default=YES: the partition of jobs that name none")


class SlurmScheduler(Strict):
    """Slurm's own parameters (docs/slurm.md): multifactor priority, sched/backfill, node Weight order,
    power saving and CpuFreqDef. Export writes them as a slurm.conf fragment."""

    kind: Literal["slurm"] = "slurm"
    priority_weight_age: int = Field(0, ge=0, le=2**32 - 1, description="PriorityWeightAge")
    priority_weight_job_size: int = Field(0, ge=0, le=2**32 - 1, description="PriorityWeightJobSize")
    priority_favor_small: bool = Field(False, description="PriorityFavorSmall")
    priority_weight_fairshare: int = Field(0, ge=0, le=2**32 - 1, description="PriorityWeightFairshare")
    priority_weight_partition: int = Field(0, ge=0, le=2**32 - 1, description="PriorityWeightPartition")
    priority_decay_half_life_s: float = Field(604800.0, ge=0, le=MAX_SECONDS,
                                              description="PriorityDecayHalfLife (0 = no decay)")
    priority_max_age_s: float = Field(604800.0, ge=1, le=MAX_SECONDS, description="PriorityMaxAge")
    slurmdbd: bool = Field(True, description="AccountingStorageType=accounting_storage/slurmdbd (false: no age "
                           "or fair-share factor, priorities set at submission)")
    scheduler_type: Literal["backfill", "builtin"] = Field("backfill", description="SchedulerType sched/...")
    bf_max_job_test: int = Field(500, ge=1, le=1_000_000, description="SchedulerParameters bf_max_job_test")
    bf_window_min: int = Field(1440, ge=1, description="SchedulerParameters bf_window (minutes)")
    bf_interval_s: int = Field(30, ge=1, le=10800, description="SchedulerParameters bf_interval (s between cycles)")
    bf_resolution_s: int = Field(60, ge=1, le=3600, description="SchedulerParameters bf_resolution (s grid of reservations)")
    batch_sched_delay_s: int = Field(3, ge=0, le=3600, description="SchedulerParameters batch_sched_delay: the least time "
                                     "between two runs of the main scheduler that events ask for")
    sched_tick_s: float = Field(1.0, ge=0, le=3600, description="period of slurmctld's background loop, which runs the main "
                                "scheduler and polls for backfill (0: both at the event itself)")
    bf_last_cycle_s: float | None = Field(None, ge=-MAX_SECONDS, le=0, description="when (s, the twin's clock) the last backfill "
                                          "cycle before the trace ran: the phase of the cycles (null: the first "
                                          "cycle at the first event; not a Slurm parameter)")
    clock_origin_s: float = Field(0.0, ge=0, le=1e11, description="wall-clock (Unix) time of the twin's 0, the first "
                                  "submission: the phase of the bf_resolution grid (not a Slurm parameter)")
    select_type: Literal["cons_tres", "linear"] = Field(
        "cons_tres", description="SelectType select/...: cores within nodes (cons_tres) or whole nodes (linear)")
    node_order: NodeOrder = Field("platform", description="node Weight order (lowest Weight first)")
    suspend_time_s: float | None = Field(None, ge=0, le=MAX_SECONDS,
                                         description="SuspendTime (null = power saving off)")
    suspend_timeout_s: float = Field(30.0, ge=0, le=MAX_SECONDS, description="SuspendTimeout")
    resume_timeout_s: BootSeconds = Field(60.0, gt=0, le=MAX_SECONDS, description="ResumeTimeout")
    suspend_rate: int = Field(60, ge=0, description="SuspendRate (nodes per minute, 0 = no limit)")
    resume_rate: int = Field(300, ge=0, description="ResumeRate (nodes per minute, 0 = no limit)")
    suspend_exc_nodes: int = Field(0, ge=0, description="SuspendExcNodes: the first N nodes of the Weight order")
    cpu_freq_def: Literal["Performance", "PowerSave"] = Field("Performance", description="CpuFreqDef governor")
    partitions: list[SlurmPartition] = Field(default_factory=list, description="PartitionName lines (empty: one "
                                             "partition of all nodes)")

    # the twin's energy levers this kind sets (Twin reads them as it reads a classic scheduler's)
    @property
    def power_off_idle_s(self) -> float | None:
        return self.suspend_time_s

    @property
    def freq(self) -> float:
        # PowerSave: the lowest frequency; the twin clamps a factor below f_min to each type's f_min
        return 1.0 if self.cpu_freq_def == "Performance" else 1e-6

    # the other levers keep their off values: boot time, boot energy and off power are the platform's
    freq_by_type: ClassVar[dict[str, float]] = {}
    bw_cap: ClassVar[None] = None
    min_nodes_on: ClassVar[int] = 0
    boot_s: ClassVar[None] = None
    boot_j: ClassVar[None] = None
    off_w: ClassVar[None] = None


def _scheduler_kind(value: Any) -> str:
    # `kind` may be omitted and then means classic
    if isinstance(value, dict):
        return str(value.get("kind", "classic"))
    return str(getattr(value, "kind", "classic"))


register_union_tags("classic", "rl", "slurm")

SchedulerSpec = Annotated[
    Union[Annotated[ClassicScheduler, Tag("classic")], Annotated[RLScheduler, Tag("rl")],
          Annotated[SlurmScheduler, Tag("slurm")]],
    Discriminator(_scheduler_kind, custom_error_type="unknown_kind",
                  custom_error_message="unknown scheduler kind (expected classic, rl or slurm)"),
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
        data["workload"]["path"] = _resolve(self.workload.path, base, "workload.path")
        if data["scheduler"].get("weights") is not None:  # an RL agent's saved weights
            data["scheduler"]["weights"] = _resolve(data["scheduler"]["weights"], base, "scheduler.weights")
        if isinstance(self.platform, str) and _looks_like_file(self.platform):
            data["platform"] = _resolve(self.platform, base, "platform")
        return SimConfig.model_validate(data)


def _looks_like_file(ref: str) -> bool:
    return ref.endswith((".yaml", ".yml", ".json")) or "/" in ref


def _resolve(ref: str | None, base: Path, key: str) -> str | None:
    if ref is None or ref.startswith(BUILTIN_PREFIX) or Path(ref).is_absolute():
        return ref
    return resolve_path(base / ref, key)


def resolve_path(path: Path, what: str) -> str:
    """`path` made absolute, symlinks followed; a UserError naming `what` for a symlink loop (pathlib
    raises RuntimeError before Python 3.13, OSError after)."""
    try:
        return str(path.resolve())
    except (RuntimeError, OSError) as exc:
        raise UserError(f"{what}: {path}: cannot resolve the path (a symlink loop?): {exc}") from None


def load_config(path: str | Path) -> SimConfig:
    """Read and validate a scheduler config file; relative paths are taken from its folder."""
    p = Path(path)
    cfg = validate(SimConfig, read_yaml(p), str(p))
    try:
        return cfg.resolved(p.parent)
    except UserError as exc:  # a key path alone: say which file it is in
        raise UserError(f"{p}: {exc}") from None


def config_from_dict(data: dict[str, Any], source: str = "<config>") -> SimConfig:
    """Validate an in-memory config (genomes, exports, tests)."""
    return validate(SimConfig, data, source)


def set_path(cfg: dict[str, Any], dotted: str, value: Any) -> None:
    """Set `cfg[a][b][c] = value` for `dotted == "a.b.c"` (in place; parents must exist)."""
    *parents, leaf = dotted.split(".")
    node = cfg
    for part in parents:
        node = node[part]
    node[leaf] = value
