"""SuspendRate / ResumeRate's 60 s window: a retry scheduled at `q[0] + 60` must find q[0] gone.

Before the fix the window test was `q[0] <= now - 60` while a retry was set `q[0] + 60 - now` ahead;
the two disagree by a rounding for some instants, the retry's delay came out 0, and the simulation
fired it forever at one instant (found on a 500-job gaia window with suspend_rate 5)."""

from __future__ import annotations

import math
from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.sim.slurm.power import PowerSaver


def test_the_instant_that_hung() -> None:
    q0, now = 8172.550155146059, 8232.550155146058  # q0 > now - 60 in floats, yet q0 + 60 - now == 0.0
    assert q0 + 60.0 - now == 0.0
    assert PowerSaver._recent(deque([q0]), now) == 0


@settings(max_examples=300, deadline=None)
@given(st.integers(6, 23), st.floats(0.0, 60.0, exclude_max=True), st.integers(-4, 4))
def test_a_kept_entry_means_a_retry_in_the_future(exp: int, past: float, ulps: int) -> None:
    # q0 a few ulps from now - 60 with a power of two between them (their roundings differ there):
    # where the two forms disagree, which independent draws of q0 and now never reach
    now = 2.0 ** exp + past
    q0 = now - 60.0
    for _ in range(abs(ulps)):
        q0 = math.nextafter(q0, math.inf if ulps > 0 else -math.inf)
    q = deque([q0])
    t = now
    for _ in range(8):  # the retries of `_idle_timeout` / `wake_when_budget`, each at `q[0] + 60 - t` ahead
        if not PowerSaver._recent(q, t):
            return
        delay = q[0] + 60.0 - t
        assert delay > 0 and t + delay > t  # a zero delay fires forever at one instant
        t += delay
    raise AssertionError(f"q0={q0!r} still in the window after 8 retries from {now!r}")
