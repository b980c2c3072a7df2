"""Slurm power saving on the twin: SuspendTime, SuspendTimeout, ResumeTimeout, rates, SuspendExcNodes.

The twin already times idle nodes exactly (`power_off_idle_s`, here SuspendTime) and boots an off
node when a job is given its cores (`boot_s` of the platform). This layer adds Slurm's rules:
- a node in SuspendExcNodes is never suspended;
- at most SuspendRate nodes are suspended in any 60 s (a node over the rate waits for the window);
- a suspended node is unusable for SuspendTimeout (powering down), then may be resumed;
- at most ResumeRate nodes are resumed in any 60 s. As in Slurm, a job given powered-down nodes is
  allocated at once and its nodes are resumed as the rate allows, the rest in later windows
  (power_save.c resumes a job's nodes over several cycles); the job starts when the last is up. Its
  nodes stay off, their cores already given, until their resume (the twin's `boot_hook`);
- a node whose boot takes longer than ResumeTimeout is a failure: Slurm would mark it DOWN and
  requeue its job; the run stops with `ResumeTimeoutError` (the search records a failed evaluation).
Slurm's power-save thread (every 10 s by default) keeps a count that decays linearly over a minute
(power_save.c); the twin's sliding 60 s window is the bound that count approximates, and stricter:
at ResumeRate 1 Slurm may resume a 3-node job's nodes at about 0, 40 and 100 s, the twin at 0, 60
and 120 s.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from paretosched.errors import UserError
from paretosched.sim.engine.state import NodeState


class ResumeTimeoutError(UserError):
    """A node would boot for longer than ResumeTimeout (`simulate`: one line, exit 2; the search: a
    failed evaluation)."""


class PowerSaver:
    def __init__(self, twin: Any, spec: Any, preference: list[int], names: list[str] | None) -> None:
        self.twin = twin
        self.on = spec.suspend_time_s is not None
        self.suspend_timeout = spec.suspend_timeout_s
        self.resume_timeout = spec.resume_timeout_s
        self.resume_timeout_default = type(spec).model_fields["resume_timeout_s"].default
        self.suspend_rate = spec.suspend_rate
        self.resume_rate = spec.resume_rate
        self.excluded = set(preference[:spec.suspend_exc_nodes])
        self.names = names
        self.suspends: deque[float] = deque()
        self.resumes: deque[float] = deque()
        self.down_until: dict[int, float] = {}
        self.suspend_times: list[tuple[float, int]] = []  # (time, node) of every suspension
        self.resume_times: list[tuple[float, int]] = []  # (time, node) of every resume under ResumeRate
        if self.on:
            twin.idle_hook = self._idle_timeout  # Slurm's rules in front of the twin's switch-off
            if self.resume_rate:
                twin.boot_hook = self._resume_at  # ResumeRate in front of the twin's boots

    @staticmethod
    def _recent(q: deque[float], now: float) -> int:
        # `q[0] + 60 <= now`, the very sum a retry is scheduled at (`q[0] + 60 - now` from now): the
        # form `q[0] <= now - 60` can disagree with it by a rounding, and a retry then had a zero
        # delay and fired forever at one instant (a hang, found on a 500-job gaia window)
        while q and q[0] + 60.0 <= now:
            q.popleft()
        return len(q)

    def _idle_timeout(self, node: Any, version: int) -> None:
        twin = self.twin
        if (version != node.idle_version or node.busy or node.power_state != NodeState.ON
                or node.idx in self.excluded):
            return
        now = twin.now
        if self.suspend_rate and self._recent(self.suspends, now) >= self.suspend_rate:
            ev = twin.env.timeout(self.suspends[0] + 60.0 - now)
            ev.callbacks.append(lambda _ev: self._idle_timeout(node, version))
            return
        twin.switch_off_idle(node, version)
        if node.power_state == NodeState.ON:  # kept on by the twin (min_nodes_on)
            return
        self.suspends.append(now)
        self.suspend_times.append((now, node.idx))
        if self.suspend_timeout > 0:
            self.down_until[node.idx] = now + self.suspend_timeout
            ev = twin.env.timeout(self.suspend_timeout)
            ev.callbacks.append(lambda _ev: twin.request_decision())

    def unusable_until(self, node_idx: int) -> float:
        """When a powering-down node may be resumed (the past when it is usable)."""
        return self.down_until.get(node_idx, -1.0)

    def _resume_at(self, node: Any) -> float:
        """The first instant `node` may be resumed with no 60 s holding more than ResumeRate resumes;
        counted now (`resumes` holds the past minute's resumes and those still to come, in order)."""
        now = self.twin.now
        q = self.resumes
        if self._recent(q, now) < self.resume_rate:
            t = now
        else:
            # q[-rate] + 60 is when the rate-th last resume leaves the window (`_recent`'s sum); never
            # before q[-1], so the queue stays in order
            t = max(now, q[-self.resume_rate] + 60.0)
        q.append(t)
        self.resume_times.append((t, node.idx))
        return t

    def check_resume(self, nodes: list[Any]) -> None:
        """Nodes about to be given to a job while powered down: each must boot within ResumeTimeout."""
        for node in nodes:
            if node.boot_s > self.resume_timeout:
                name = self.names[node.idx] if self.names else f"node {node.idx}"
                raise ResumeTimeoutError(
                    f"{name} boots in {node.boot_s:g} s, longer than ResumeTimeout={self.resume_timeout:g} s "
                    f"(scheduler.resume_timeout_s, default {self.resume_timeout_default:g}; "
                    "Slurm would set it DOWN and requeue the job)")
