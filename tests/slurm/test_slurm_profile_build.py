"""The `slurm` kind's profile build (flat lists and `np.add.at`) against the per-element loop it
replaced, bit for bit: numpy does not document the order in which `add.at` sums repeated indices, and
the memory rows are float sums whose value depends on it (found worth pinning by review)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from paretosched.sim.slurm.plan import Profile


def _loop_build(now, free_cores, free_mem, proc_node, releases):
    """The build before session 13: one scalar update per processor and node of each release."""
    times = sorted({max(t, now) for t, _, _ in releases} | {now})
    row = {t: i for i, t in enumerate(times)}
    c = np.zeros((len(times), len(free_cores)), dtype=np.int64)
    m = np.zeros((len(times), len(free_mem)), dtype=np.float64)
    n = np.zeros((len(times), len(free_mem)), dtype=np.int64)
    c[0], m[0] = free_cores, free_mem
    np.add.at(n[0], proc_node, free_cores)
    for t, cores, mem in releases:
        k = row[max(t, now)]
        for p, k_p in cores.items():
            c[k, p] += k_p
            n[k, proc_node[p]] += k_p
        for node, v in mem.items():
            m[k, node] += v
    with np.errstate(invalid="ignore"):
        return times, np.cumsum(c, axis=0), np.cumsum(n, axis=0), np.cumsum(m, axis=0)


MEM = st.one_of(st.floats(0, 1e12, allow_nan=False), st.sampled_from([0.1, 0.2, 0.3, 1e-17, 1e16, math.inf, 0.0]))


@settings(max_examples=300, deadline=None)
@given(n_nodes=st.integers(1, 4), per=st.integers(1, 3), now=st.sampled_from([0.0, 5.0, 0.1]), data=st.data())
def test_the_build_equals_the_per_element_loop(n_nodes, per, now, data):
    n_procs = n_nodes * per
    proc_node = np.array([i // per for i in range(n_procs)], dtype=np.int64)
    free_cores = np.array(data.draw(st.lists(st.integers(0, 8), min_size=n_procs, max_size=n_procs)), dtype=np.int64)
    free_mem = np.array(data.draw(st.lists(MEM, min_size=n_nodes, max_size=n_nodes)), dtype=np.float64)
    releases = data.draw(st.lists(st.tuples(
        st.sampled_from([0.0, 1.0, 5.0, 7.5, 100.0, math.nextafter(5.0, 9)]),
        st.dictionaries(st.integers(0, n_procs - 1), st.integers(0, 5)),
        st.dictionaries(st.integers(0, n_nodes - 1), MEM)), max_size=12))
    prof = Profile(now, free_cores.copy(), free_mem.copy(), proc_node, releases)
    times, c, n, m = _loop_build(now, free_cores, free_mem, proc_node, releases)
    k = len(times)
    assert prof.t == times
    assert np.array_equal(prof.cores, c) and np.array_equal(prof._n[:k], n)
    assert prof.mem.tobytes() == m.tobytes()  # bit for bit, infinities and roundings included
