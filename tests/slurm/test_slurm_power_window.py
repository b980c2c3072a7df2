"""SuspendRate / ResumeRate's 60 s window: a retry scheduled at `q[0] + 60` must find q[0] gone.

Before the fix the window test was `q[0] <= now - 60` while a retry was set `q[0] + 60 - now` ahead;
the two disagree by a rounding for some instants, the retry's delay came out 0, and the simulation
fired it forever at one instant (found on a 500-job gaia window with suspend_rate 5)."""

from __future__ import annotations

from collections import deque

from hypothesis import given
from hypothesis import strategies as st

from paretosched.sim.slurm_power import PowerSaver


def test_the_instant_that_hung() -> None:
    q0, now = 8172.550155146059, 8232.550155146058  # q0 > now - 60 in floats, yet q0 + 60 - now == 0.0
    assert q0 + 60.0 - now == 0.0
    assert PowerSaver._recent(deque([q0]), now) == 0


@given(st.floats(0.0, 1e7, allow_nan=False), st.floats(0.0, 1e7, allow_nan=False))
def test_a_kept_entry_means_a_retry_in_the_future(q0: float, now: float) -> None:
    q = deque([q0])
    if PowerSaver._recent(q, now):
        delay = q[0] + 60.0 - now
        assert delay > 0
        assert PowerSaver._recent(q, now + delay) == 0 or now + delay > now
