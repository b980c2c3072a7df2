"""Training an RL scheduler: episodes over training windows, per-episode curves, saved agents.

An episode is one simulation of one training window with a fresh twin; the agent samples its
actions and learns at the episode's end. Windows are used in turn (episode e runs window e mod n).
Default windows (when `train_windows` is null): `train_window_count` disjoint windows of
`train_window_jobs` job lines (default: the evaluation window's size, else 500) just before the
evaluation window, else after it; an inline workload trains on its own jobs (thesis 5.4 does).

Randomness: the scheduler stream of the run is split (SeedSequence.spawn) into network init,
action sampling, window enrichment and random-policy streams, so a seed fixes every curve.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from paretosched.config import SimConfig
from paretosched.errors import UserError
from paretosched.sim.engine.metrics import compute_metrics
from paretosched.sim.engine.twin import Twin, make_rng
from paretosched.sim.readers.inputs import trace_path
from paretosched.sim.readers.platform import fits_factory
from paretosched.sim.readers.workload import RawJobs, build_jobs, read_swf
from paretosched.sim.rl.agents import Agent, build_agent
from paretosched.sim.rl.env import RLScheduler, observation_size

FORMAT_VERSION = 1
DEFAULT_WINDOW_JOBS = 500


@dataclass
class TrainingLog:
    """Per-episode curves: the thesis's `losses`, `rewards` and `action_preferences` views (+ metrics)."""

    actions: list[str]
    episode: list[int] = field(default_factory=list)
    window: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    reward: list[float] = field(default_factory=list)       # sum of the episode's rewards
    steps: list[int] = field(default_factory=list)          # decisions
    preferences: list[list[float]] = field(default_factory=list)  # mean probability per action
    energy_kwh: list[float] = field(default_factory=list)
    mean_bsld: list[float] = field(default_factory=list)
    makespan_s: list[float] = field(default_factory=list)

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per episode (preference columns `pref_<action>`), e.g. for a CSV."""
        out = []
        for i, ep in enumerate(self.episode):
            row: dict[str, Any] = {"episode": ep, "window": self.window[i], "loss": self.loss[i],
                                   "reward": self.reward[i], "steps": self.steps[i],
                                   "energy_kwh": self.energy_kwh[i], "mean_bsld": self.mean_bsld[i],
                                   "makespan_s": self.makespan_s[i]}
            row.update({f"pref_{a}": p for a, p in zip(self.actions, self.preferences[i])})
            out.append(row)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"actions": list(self.actions), "episode": list(self.episode), "window": list(self.window),
                "loss": list(self.loss), "reward": list(self.reward), "steps": list(self.steps),
                "preferences": [list(p) for p in self.preferences], "energy_kwh": list(self.energy_kwh),
                "mean_bsld": list(self.mean_bsld), "makespan_s": list(self.makespan_s)}


def training_windows(cfg: SimConfig, raw_eval: RawJobs) -> list[RawJobs]:
    """The raw job windows the agent trains on (see the module doc)."""
    spec, wl = cfg.scheduler, cfg.workload
    if wl.jobs is not None:
        if spec.train_windows:
            raise UserError("scheduler.train_windows: an inline workload has no trace to take windows from")
        return [raw_eval]
    path = trace_path(wl.path or "")
    raws = [r for r in (read_swf(path, f, n) for f, n in training_spans(cfg)) if len(r)]
    if not raws:
        raise UserError("scheduler: no training window has jobs (set scheduler.train_windows, or leave room "
                        "before workload.first_job)")
    return raws


def training_spans(cfg: SimConfig) -> list[tuple[int, int]]:
    """(first job line, job lines) of each training window of a trace workload (see the module doc)."""
    spec, wl = cfg.scheduler, cfg.workload
    if spec.train_windows:
        spans = [(w.first_job, w.n_jobs) for w in spec.train_windows]
    else:
        size = spec.train_window_jobs or wl.n_jobs or DEFAULT_WINDOW_JOBS
        spans = []
        start = wl.first_job - size
        while start >= 0 and len(spans) < spec.train_window_count:
            spans.insert(0, (start, size))  # chronological, the last one right before evaluation
            start -= size
        if len(spans) < spec.train_window_count and wl.n_jobs is not None:
            after = wl.first_job + wl.n_jobs
            while len(spans) < spec.train_window_count:
                spans.append((after, size))
                after += size
    return spans


def train(cfg: SimConfig, prepared: Any, ss: np.random.SeedSequence,
          progress: Callable[[int, dict[str, Any]], None] | None = None) -> tuple[Agent, TrainingLog]:
    """Train a fresh agent for `cfg.scheduler` (an RLScheduler); same `ss`, same agent and curves."""
    spec = cfg.scheduler
    platform = prepared.platform
    ss_init, ss_sample, ss_windows, ss_policy = ss.spawn(4)
    windows = training_windows(cfg, prepared.raw) if spec.episodes else []
    window_ss = ss_windows.spawn(len(windows))
    names = spec.action_names()
    agent = new_agent(cfg, platform, np.random.default_rng(ss_init))
    sample_rng = np.random.default_rng(ss_sample)
    policy_rng = make_rng(ss_policy)
    fits = fits_factory(platform)
    log = TrainingLog(actions=names)
    for e in range(spec.episodes):
        w = e % len(windows)
        jobs, _ = build_jobs(windows[w], cfg.workload.mode, platform.ref_speed,
                             np.random.default_rng(window_ss[w]), fits)
        if hasattr(agent, "set_episode"):
            agent.set_episode(e)
        # job-credited energy needs the twin's per-job energy attribution (record mode)
        twin = Twin(platform, jobs, cfg.model, spec, record=spec.reward_timing == "job")
        sched = RLScheduler(twin, spec, agent, policy_rng, sample_rng)
        twin.decide = sched.decide
        twin.run()
        sched.finish(twin)
        n = len(sched.actions)
        loss = agent.update(np.array(sched.obs), np.array(sched.actions), np.array(sched.rewards), w) if n else math.nan
        m = compute_metrics(twin.done, twin.energy, platform.n_cores)
        log.episode.append(e)
        log.window.append(w)
        log.loss.append(float(loss))
        log.reward.append(float(sum(sched.rewards)))
        log.steps.append(n)
        log.preferences.append([float(v) for v in (sched.prob_sum / max(n, 1))])
        log.energy_kwh.append(m["energy_kwh"])
        log.mean_bsld.append(m["mean_bsld"])
        log.makespan_s.append(m["makespan_s"])
        if progress is not None:
            progress(e, {k: v[-1] for k, v in log.as_dict().items() if k not in ("actions",)})
    return agent, log


def new_agent(cfg: SimConfig, platform: Any, rng: np.random.Generator) -> Agent:
    spec = cfg.scheduler
    n_obs = observation_size(spec.observation, spec.agent, len(platform.nodes), len(platform.procs),
                             platform.n_cores)
    return build_agent(spec, n_obs, len(spec.action_names()), rng)


def _meta(cfg: SimConfig, agent: Agent) -> dict[str, Any]:
    spec = cfg.scheduler
    meta = {"format": FORMAT_VERSION, "agent": spec.agent, "actions": spec.action_names(),
            "observation": spec.observation, "n_obs": agent.n_obs}
    if spec.agent == "tabular":
        meta.update(queue_bins=spec.queue_bins, occupancy_bins=spec.occupancy_bins)
    else:
        meta.update(hidden_units=spec.hidden_units, hidden_layers=spec.hidden_layers)
    return meta


def save_agent(path: str | Path, cfg: SimConfig, agent: Agent) -> Path:
    """Write the agent's arrays and what it was built for (checked on load) to a `.npz` file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    arrays = dict(agent.arrays())
    arrays["meta"] = np.array(json.dumps(_meta(cfg, agent)))
    with open(p, "wb") as fh:  # a file handle: numpy would append `.npz` to a bare name
        np.savez(fh, **arrays)
    return p


def load_agent(path: str | Path, cfg: SimConfig, platform: Any) -> Agent:
    """An agent from a `.npz` written by `save_agent`, checked against `cfg` and the platform."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"scheduler.weights: {p}: file not found")
    arrays = _read_npz(p)
    agent = new_agent(cfg, platform, np.random.default_rng(0))
    want = _meta(cfg, agent)
    meta = _saved_meta(p, arrays.pop("meta", None))
    for key, value in want.items():
        if meta.get(key) != value:
            raise UserError(f"scheduler.weights: {p}: saved {key} {meta.get(key)!r} does not match "
                            f"the config's {value!r}")
    for name, a in arrays.items():
        if a.dtype.kind not in "fiu" or not np.all(np.isfinite(a)):
            raise UserError(f"scheduler.weights: {p}: array {name!r} is not finite numbers")
    try:
        agent.load_arrays(arrays)
    except (ValueError, KeyError) as exc:  # a missing or mis-shaped layer
        raise UserError(f"scheduler.weights: {p}: {str(exc).strip(chr(39))} (not saved by `paretosched train` "
                        "for this config?)") from None
    return agent


def _read_npz(p: Path) -> dict[str, np.ndarray]:
    """The arrays of a `.npz`; a file that is not one (random bytes, a truncated zip, pickled
    objects, which allow_pickle=False refuses) is a one-line error."""
    import zipfile

    try:
        data = np.load(p, allow_pickle=False)
        if not hasattr(data, "files"):  # a plain .npy array, not an archive
            raise ValueError("a single array, not a .npz archive")
        with data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise UserError(f"scheduler.weights: {p}: not a weights file saved by `paretosched train` "
                        f"({type(exc).__name__}: {str(exc)[:120]})") from None


def _saved_meta(p: Path, raw: Any) -> dict[str, Any]:
    try:
        meta = json.loads(str(raw)) if raw is not None else None
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise UserError(f"scheduler.weights: {p}: no readable 'meta' entry (not saved by `paretosched train`?)")
    return meta


def agent_for(cfg: SimConfig, prepared: Any, ss: np.random.SeedSequence) -> tuple[Agent, TrainingLog | None]:
    """The agent a run evaluates: loaded from `weights`, else trained now."""
    if cfg.scheduler.weights is not None:
        return load_agent(cfg.scheduler.weights, cfg, prepared.platform), None
    return train(cfg, prepared, ss)
