"""Interference re-timing of the twin: a processor's speed factor changes, the jobs on it re-pace.

A busy core runs at its peak x DVFS factor x interference factor (twin.py states the model);
under `lockstep` all parts of a job advance at its slowest processor's speed, so a factor change
re-paces every job with a part on that processor, else each part keeps its own speed and the
job ends with its last part. `Pacing` is a base class of the Twin, as `NodePower` is, so these
run as the twin's own methods on the hot path (no extra hop), and twin.py stays a size one reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from paretosched.sim.engine.state import ProcState


class Pacing:
    """Speed factors and job end times; needs the twin's env, model switches, watchers and `_on_end`."""

    env: Any
    interference: str
    p1_speed: float
    lockstep: bool
    timeline: Any
    job_watchers: list[dict[Any, None]]
    _on_end: Callable[[Any, int], None]

    def _factor(self, p: ProcState) -> float:
        used = p.bw_used
        if used <= p.bw_cap or self.interference == "none":
            return 1.0
        if self.interference == "thesis":
            return self.p1_speed
        return p.bw_cap / used

    def _refresh_speed(self, p: ProcState) -> None:
        """Re-time every job part on `p` after its interference factor may have changed."""
        f = self._factor(p)
        if f == p.factor:
            return
        if self.timeline is not None:
            self.timeline.factor_change(p, p.factor, f)
        old_speed = p.speed * p.factor
        p.factor = f
        now = self.env.now
        speed = p.speed * f
        if self.lockstep:
            for g in p.groups:  # _set_pace re-times jobs; it never changes p.groups
                pace = g.speed
                if speed < pace:
                    self._set_pace(g.job, speed, now)
                elif speed > pace and old_speed == pace:  # p was (one of) the job's slowest: rescan
                    self._set_pace(g.job, min(h.proc.speed * h.proc.factor for h in g.job.groups), now)
            return
        for g in p.groups:
            old = g.end
            if g.rem > 0:
                g.rem -= g.speed * (now - g.t_last)
                if g.rem <= 0:
                    g.rem = 0.0
                    g.end = now
                else:
                    g.end = now + g.rem / speed
            g.t_last = now
            g.speed = speed
            for w in self.job_watchers:
                w[g.job] = None
            # a job ends with its last group: rescan its groups only when the one that ended it
            # finishes earlier now (a spread job has a group on every processor it touches, and
            # rescanning all of them at every change of every one was most of such runs' cost)
            job = g.job
            if g.end > job.end:
                job.end = g.end
                job.version += 1
                self._schedule_end(job)
            elif g.end < old and old == job.end:
                self._retime(job)

    def _set_pace(self, job: Any, pace: float, now: float) -> None:
        """Lockstep: every part of `job` advances at `pace` (its slowest processor's speed) from now."""
        g0 = job.groups[0]
        if pace == g0.speed:
            return
        rem = g0.rem - g0.speed * (now - g0.t_last)
        if rem <= 0:
            rem = 0.0
        end = now + rem / pace
        for g in job.groups:
            g.rem = rem
            g.t_last = now
            g.speed = pace
            g.end = end
        for w in self.job_watchers:  # its estimated end moved: the backfill's end order re-files it
            w[job] = None
        job.end = end
        job.version += 1
        self._schedule_end(job)

    def _retime(self, job: Any) -> None:
        end = max(g.end for g in job.groups)
        if end != job.end:
            job.end = end
            job.version += 1
            self._schedule_end(job)

    def _schedule_end(self, job: Any) -> None:
        version = job.version
        ev = self.env.timeout(max(job.end - self.env.now, 0.0))
        ev.callbacks.append(lambda _ev: self._on_end(job, version))
