"""Progress display: a tqdm bar per run on a terminal, or plain log lines (`quiet`, or output
to a file or pipe, where a bar's carriage-return redraws would fill a batch job's log)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from paretosched.search.runlog import Generation


class Progress:
    """Reports each generation (generation, evaluations, failures, best value per objective,
    hypervolume; the bar adds the ETA and also moves as simulations finish)."""

    def __init__(self, name: str, total: int | None, quiet: bool, stream: TextIO | None = None,
                 initial: int = 0) -> None:
        """`initial`: evaluations done by earlier sessions (a resumed run), so the rate and ETA
        count only this session's work."""
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet or not _is_terminal(self.stream)
        self.name = name
        self._bar: Any = None
        self._carry = 0.0
        if not self.quiet:
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=initial, desc=name, unit="eval", file=self.stream,
                             dynamic_ncols=True)

    def update(self, done: int, record: Generation) -> None:
        best = _point(record)
        hv_s = f"{record.hv:.4g}" if record.hv is not None else "-"
        if self._bar is not None:
            self._bar.n, self._carry = done, 0.0
            self._bar.set_postfix_str(
                f"gen {record.generation} fail {record.failures_total} {best} HV {hv_s}", refresh=False)
            self._bar.refresh()
        else:
            print(f"{self.name}: gen {record.generation} evals {done} failed {record.failures_total} "
                  f"{best} HV {hv_s}", file=self.stream, flush=True)

    def advance(self, evaluations: float) -> None:
        """Move the bar within a generation (whole evaluations, or fractions as seeds finish)."""
        if self._bar is not None:
            # whole evaluations on the bar (tqdm would print 7.5/16); the remainder is carried
            self._carry += evaluations
            whole = int(self._carry + 1e-9)
            if whole:
                self._carry -= whole
                self._bar.update(whole)

    def stage(self, text: str) -> None:
        """Say what runs before the first generation's numbers exist (e.g. the baselines)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def message(self, text: str) -> None:
        if self._bar is not None:
            self._bar.write(f"{self.name}: {text}", file=self.stream)
        else:
            print(f"{self.name}: {text}", file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _point(record: Generation) -> str:
    """'front 7, eval 41: energy_kwh=12.3 mean_bsld=4.5': one front point's own values (never
    the best of each objective side by side: those come from different points)."""
    p = record.point
    if not p:
        return f"front {record.front_size}"
    values = " ".join(f"{k}={v:.4g}" for k, v in p.items() if k not in ("eval_id", "feasible") and isinstance(v, (int, float)))
    flag = " (infeasible: none meets the constraints yet)" if p.get("feasible") is False else ""
    return f"front {record.front_size}, eval {p.get('eval_id')}: {values}{flag}"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False
