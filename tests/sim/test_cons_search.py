"""Conservative backfilling's slot search on a group profile, against a brute-force count per row.

Each primitive may rule rows out only when they are short: `core_bound` is an upper bound on every
earlier start's free cores, `candidates` and `earliest` keep every row with enough cores (and give
an upper bound for each row they drop), `earliest` yields the rows in order with exact counts.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.sim.backfill.conservative import slots
from paretosched.sim.backfill.conservative.profile import Profile


@st.composite
def profiles(draw):
    """A profile (times with repeats, free cores per group >= 0) and a job: size, duration."""
    m = draw(st.integers(1, 30))
    g = draw(st.integers(1, 6))
    steps = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=m - 1, max_size=m - 1))
    times = [10.0]
    for d in steps:
        times.append(times[-1] + d)
    cores = np.array(draw(st.lists(st.lists(st.integers(0, 4), min_size=g, max_size=g), min_size=m, max_size=m)),
                     dtype=np.int64).reshape(m, g)
    prof = Profile.__new__(Profile)
    prof.times = times
    prof.cores = cores
    prof.totals = cores.sum(axis=1).tolist()
    size = draw(st.integers(1, 4 * g))
    duration = draw(st.sampled_from([0.0, 0.5, 1.0, 2.5, 4.0, 9.0]))
    return prof, size, duration


def exact(prof: Profile, duration: float) -> list[int]:
    """Each row's free cores (each group's least over the row's window, summed), the slow way."""
    return [int(prof.cores[i:bisect_left(prof.times, prof.times[i] + duration, lo=i + 1)].min(axis=0).sum())
            for i in range(len(prof.times))]


@settings(max_examples=400, deadline=None)
@given(case=profiles(), data=st.data())
def test_core_bound_is_an_upper_bound_on_every_earlier_start(case, data):
    prof, size, duration = case
    m = len(prof.times)
    if m < 2:
        return
    before = data.draw(st.integers(1, m - 1))
    b = data.draw(st.integers(before, m))
    g = prof.cores.shape[1]
    groups = np.array(sorted(data.draw(st.sets(st.integers(0, g - 1), min_size=1))), dtype=np.int64)
    ks = np.array([data.draw(st.integers(1, 3)) for _ in groups], dtype=np.int64)
    kept = prof.cores.copy()
    dense = np.zeros(g, dtype=np.int64)
    dense[groups] = ks
    size = int(ks.sum())  # a reservation holds exactly its job's cores (the bound counts them by `size`)
    bound, first, below = prof.core_bound(size, duration, before, (before, b, dense))
    assert np.array_equal(prof.cores, kept)  # given back while counting, then held again
    prof.cores[before:b, groups] += ks       # the job's own reservation counts as free
    counts = exact(prof, duration)[:before]
    if first < before:  # it stopped at the first run whose stretch has the cores
        assert bound >= size
    else:
        assert bound >= max(counts) and bound < size
    assert all(n <= below < size for n in counts[:first])


@settings(max_examples=400, deadline=None)
@given(case=profiles())
def test_earliest_yields_every_row_with_the_cores_in_order_with_exact_counts(case):
    prof, size, duration = case
    m = len(prof.times)
    counts = exact(prof, duration)
    short = [-1] * m
    seen = list(prof.earliest(size, duration, short))
    rows = [i for i, _, _, _ in seen]
    assert rows == sorted(rows)
    for i, j, n, cap in seen:
        assert j == bisect_left(prof.times, prof.times[i] + duration, lo=i + 1)
        assert n == counts[i]
        if cap is not None:
            assert cap.tolist() == prof.cores[i:j].min(axis=0).tolist()
    assert [i for i in range(m) if counts[i] >= size] == [i for i in rows if counts[i] >= size]
    for i in set(range(m)) - set(rows):  # ruled out: short, with an upper bound on its count
        assert counts[i] < size and counts[i] <= short[i] < size


@settings(max_examples=400, deadline=None)
@given(case=profiles(), data=st.data())
def test_candidates_keep_every_row_with_the_cores(case, data):
    prof, size, duration = case
    m = len(prof.times)
    before = data.draw(st.integers(0, m))
    counts = exact(prof, duration)
    start = data.draw(st.integers(0, before))
    below = max(counts[:start], default=-1)
    if below >= size:
        start, below = 0, -1
    rows, ends, short = prof.candidates(size, duration, before, None, start, below)
    assert [i for i in range(before) if counts[i] >= size] == [i for i in rows if counts[i] >= size]
    assert ends == [bisect_left(prof.times, prof.times[i] + duration, lo=i + 1) for i in rows]
    for i in set(range(before)) - set(rows):
        assert counts[i] < size and counts[i] <= short[i] < size


def test_the_checks_catch_a_bound_that_misses_the_own_reservation(monkeypatch):
    # a core bound that forgets to give the job's own cores back is too low: the first test fails
    real = Profile.core_bound
    monkeypatch.setattr(Profile, "core_bound", lambda self, size, d, before, own:
                        real(self, size, d, before, (own[0], own[0], own[2])))
    with pytest.raises((AssertionError, ExceptionGroup)):  # (hypothesis groups distinct failures)
        test_core_bound_is_an_upper_bound_on_every_earlier_start()


def test_the_checks_catch_a_search_that_samples_a_row_away(monkeypatch):
    # a sampled bound one core too low rules out a row with exactly the cores: caught
    real = Profile.sampled
    monkeypatch.setattr(Profile, "sampled", lambda self, rows, ends: [n - 1 for n in real(self, rows, ends)])
    monkeypatch.setattr(slots, "SAMPLE_FROM", 1)
    with pytest.raises((AssertionError, ExceptionGroup)):  # (hypothesis groups distinct failures)
        test_earliest_yields_every_row_with_the_cores_in_order_with_exact_counts()
