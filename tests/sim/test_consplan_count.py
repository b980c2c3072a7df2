"""`backfill/conservative/plan.py`'s hand-written shortcuts against the plain walks they replace."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import example, given, settings
from hypothesis import strategies as st

from paretosched.sim.backfill.conservative.plan import _earliest, limits_in_rank


def _walk(members: list[list[SimpleNamespace]], cap: list[int]) -> dict[int, int]:
    out = {}
    for g in range(len(members)):
        left = cap[g]
        for p in members[g]:
            n = len(p.free)
            if n:
                k = n if n < left else left
                if k < n:
                    out[p.idx] = k
                left -= k
    return out


@given(st.lists(st.lists(st.integers(0, 4), max_size=6), min_size=1, max_size=3), st.data())
def test_limits_in_rank_lists_what_the_full_walk_lists_in_its_order(frees: list[list[int]],
                                                                    data: st.DataObject) -> None:
    idx = iter(range(100))
    members = [[SimpleNamespace(idx=next(idx), free=[0] * n) for n in group] for group in frees]
    cap = [data.draw(st.integers(-1, sum(g) + 1)) for g in frees]
    got = limits_in_rank(members, cap)
    want = _walk(members, cap)
    assert list(got.items()) == list(want.items())


def _first_fit(times: list[float], free: list[int], size: int, duration: float, before: int) -> int:
    for i in range(before):
        if all(free[j] >= size for j in range(i, len(times)) if j == i or times[j] < times[i] + duration):
            return i
    return -1


@given(st.lists(st.integers(-2, 8), min_size=1, max_size=10), st.integers(1, 8), st.integers(1, 6),
       st.lists(st.integers(0, 12), min_size=10, max_size=10), st.integers(0, 10))
@example([5, 0, 5], 1, 5, [0, 1, 2] + [3] * 7, 3)  # the first fit just past a short row
@settings(max_examples=400)
def test_earliest_is_the_first_row_whose_window_has_the_cores(free: list[int], size: int, duration: int,
                                                              ts: list[int], before: int) -> None:
    times = [float(t) for t in sorted(ts[:len(free)])]
    before = min(before, len(free))
    found = _earliest(times, free, size, float(duration), before, 10**6)
    assert found == _first_fit(times, free, size, float(duration), before)
