"""Invariants of any schedule, on random small platforms and workloads (hypothesis)."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from paretosched.config import JOB_POLICIES, RESOURCE_POLICIES, config_from_dict
from paretosched.errors import UserError
from paretosched.sim.readers.platform import build_platform, load_platform_spec
from paretosched.sim.run import simulate as _simulate

EPS = 1e-9


def simulate(cfg, **kw):
    """The twin, with drawn workloads in which no job fits the drawn platform left out (an error now)."""
    try:
        return _simulate(cfg, **kw)
    except UserError as exc:
        if "no job can run" in str(exc):
            reject()
        raise


@st.composite
def platforms(draw):
    ptypes = {}
    for i in range(draw(st.integers(1, 3))):
        ptypes[f"p{i}"] = {
            "cores": draw(st.integers(1, 4)),
            "clock_ghz": draw(st.sampled_from([1.0, 1.5, 2.0])),
            "flops_per_cycle": draw(st.sampled_from([1, 2, 4])),
            "mem_bw_gbs": draw(st.sampled_from([None, 16.0, 32.0])),
            "power_w": draw(st.sampled_from([40.0, 80.0, 100.0])),
        }
    ntypes = {}
    for i in range(draw(st.integers(1, 2))):
        procs = draw(st.lists(st.sampled_from(sorted(ptypes)), min_size=1, max_size=2, unique=True))
        ntypes[f"n{i}"] = {"processors": {p: draw(st.integers(1, 2)) for p in procs},
                           "memory_gb": draw(st.sampled_from([None, 4.0, 16.0]))}
    nodes = {n: draw(st.integers(1, 2)) for n in ntypes}
    return {"name": "rand", "processor_types": ptypes, "node_types": ntypes, "clusters": [{"name": "c",
                                                                                           "nodes": nodes}]}


@st.composite
def workloads(draw, max_cores: int, exact: bool = False, zero_runs: bool = True):
    jobs = []
    for _ in range(draw(st.integers(1, 14))):
        run = draw(st.sampled_from([0, 1, 3, 7, 20, 60] if zero_runs else [1, 3, 7, 20, 60]))
        req = run if exact or run == 0 else draw(st.sampled_from([run, run * 2, max(1, run // 2)]))
        jobs.append({
            "submit_s": draw(st.sampled_from([0, 0, 1, 5, 10, 30])) + len(jobs) * draw(st.sampled_from([0, 2])),
            "cores": draw(st.integers(1, max_cores)),
            "run_s": run, "req_s": req if req > 0 else None,
            "mem_mb": draw(st.sampled_from([0.0, 512.0, 2048.0])),
            "bw_gbs": draw(st.sampled_from([0.0, 4.0, 12.0, 24.0])),
        })
    return jobs


def loose_jobs(data: st.DataObject, plat: str) -> tuple[list[dict], bool]:
    """Jobs for `plat`, some with loose estimates (2x or 5x: they end early), and whether their
    memory was dropped (every job at 0 MB)."""
    n_cores = build_platform(load_platform_spec(plat)).n_cores
    jobs = data.draw(workloads(n_cores, zero_runs=data.draw(st.booleans())))
    no_mem = data.draw(st.booleans())
    for j in jobs:
        if no_mem:
            j["mem_mb"] = 0.0
        if j["req_s"] and data.draw(st.booleans()):
            j["req_s"] = j["req_s"] * data.draw(st.sampled_from([2, 5]))
    return jobs, no_mem


def _check(res, platform_spec, n_loaded, idle_floor=True):
    jobs = res.jobs
    # every job that loaded ends exactly once
    assert len(jobs) == n_loaded == res.metrics["n_jobs"]
    assert len({j["job_id"] for j in jobs}) == len(jobs)
    for j in jobs:
        assert j["start_s"] >= j["submit_s"] - EPS
        assert j["end_s"] >= j["start_s"] - EPS
    # no core runs two jobs at once
    by_core = defaultdict(list)
    for j in jobs:
        cores = [int(c) for c in j["core_ids"].split()]
        assert len(cores) == j["cores"] == len(set(cores))
        for c in cores:
            by_core[c].append((j["start_s"], j["end_s"]))
    for spans in by_core.values():
        spans.sort()
        for (_s0, e0), (s1, _e1) in zip(spans, spans[1:]):
            assert s1 >= e0 - EPS
    # node memory never over-committed: sweep each node's allocations
    plat = build_platform(load_platform_spec(platform_spec))
    core_node = {}
    for p in plat.procs:
        for c in range(p.first_core, p.first_core + p.cores):
            core_node[c] = p.node
    events = defaultdict(list)
    for j in jobs:
        per_node = defaultdict(int)
        for c in j["core_ids"].split():
            per_node[core_node[int(c)]] += 1
        for node, k in per_node.items():
            if j["end_s"] > j["start_s"]:
                events[node] += [(j["start_s"], 1, k * j["mem_mb_per_core"]), (j["end_s"], 0,
                                                                               -k * j["mem_mb_per_core"])]
    for node, evs in events.items():
        used = 0.0
        for _, _, delta in sorted(evs):  # ends (0) before starts (1) at equal times
            used += delta
            assert used <= plat.nodes[node].memory_mb + 1e-6
    # energy at least the idle floor over the makespan (switched-off nodes may draw less)
    if not idle_floor:
        return
    floor_w = sum(p.power_w * 0.05 for p in plat.procs)
    assert res.metrics["energy_j"] >= floor_w * res.metrics["makespan_s"] * (1 - 1e-12)


def _random_run(data, levers: dict | None = None):
    """A random platform, workload, policy pair, interference model (and levers), as a config."""
    plat = data.draw(platforms())
    n_cores = build_platform(load_platform_spec(plat)).n_cores
    jobs = data.draw(workloads(n_cores))
    sched = {"job_policy": data.draw(st.sampled_from(JOB_POLICIES)),
             "resource_policy": data.draw(st.sampled_from(RESOURCE_POLICIES)),
             "backfilling": data.draw(st.sampled_from(["none", "easy", "conservative"])), **(levers or {})}
    model = {"interference": data.draw(st.sampled_from(["thesis", "proportional", "none"]))}
    cfg = config_from_dict({"platform": plat, "workload": {"jobs": jobs}, "scheduler": sched, "model": model})
    return plat, n_cores, cfg


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_schedule_invariants(data):
    plat, _, cfg = _random_run(data)
    res = simulate(cfg, seed=data.draw(st.integers(0, 3)), record_jobs=True)
    _check(res, plat, res.load["loaded"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_easy_never_delays_head_reservation(data):
    # exact estimates and no interference: the head starts no later than its first reservation
    check_reservations_kept(data, {"job_policy": "first", "backfilling": "easy",
                                   "resource_policy": data.draw(st.sampled_from(RESOURCE_POLICIES))})


def check_reservations_kept(data, sched: dict, zero_runs: bool = True) -> None:
    """On a drawn platform and workload with exact estimates and no interference, no job that got a
    reservation starts later than it (and every schedule invariant holds)."""
    plat = data.draw(platforms())
    n_cores = build_platform(load_platform_spec(plat)).n_cores
    jobs = data.draw(workloads(n_cores, exact=True, zero_runs=zero_runs))
    cfg = config_from_dict({"platform": plat, "workload": {"jobs": jobs}, "scheduler": sched,
                            "model": {"interference": "none"}})
    res = simulate(cfg, record_jobs=True)
    starts = {j["job_id"]: j["start_s"] for j in res.jobs}
    for jid, reserved in res.reservations.items():
        assert starts[jid] <= reserved + 1e-6, (jid, starts[jid], reserved)
    _check(res, plat, res.load["loaded"])


def test_same_seed_same_numbers():
    cfg = config_from_dict({"platform": "gaia-mini", "workload": {"path": "builtin:hpc2n-3k.swf.gz", "n_jobs": 300,
                                                                   "mode": "hdeeprm"},
                            "scheduler": {"job_policy": "random", "resource_policy": "random", "backfilling": "easy"}})
    a, b = simulate(cfg, seed=7), simulate(cfg, seed=7)
    c = simulate(cfg, seed=8)
    assert a.metrics == b.metrics
    assert a.metrics != c.metrics


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_schedule_invariants_with_levers(data):
    levers = {"power_off_idle_s": data.draw(st.sampled_from([None, 0.0, 3.0, 25.0])),
              "boot_s": data.draw(st.sampled_from([0.0, 4.0, 30.0])),
              "boot_j": data.draw(st.sampled_from([0.0, 500.0])),
              "min_nodes_on": data.draw(st.integers(0, 2)),
              "freq": data.draw(st.sampled_from([1.0, 0.7, 0.5])),
              "bw_cap": data.draw(st.sampled_from([None, 0.5, 1.0, 1.5]))}
    plat, n_cores, cfg = _random_run(data, levers)
    res = simulate(cfg, seed=data.draw(st.integers(0, 3)), record_jobs=True, timeline=True)
    _check(res, plat, res.load["loaded"], idle_floor=levers["power_off_idle_s"] is None)
    per_job = sum(j["energy_j"] for j in res.jobs)
    total = res.metrics["energy_j"]
    assert abs(per_job + res.energy_unattributed_j - total) <= 1e-9 * max(total, 1.0)
    tl = res.timeline["timeline"]
    instant_boots = res.metrics["boot_energy_kwh"] * 3.6e6 if levers["boot_s"] == 0 else 0.0
    assert abs(tl["energy_j"].sum() + instant_boots - total) <= 1e-9 * max(total, 1.0)
    assert (tl[[c for c in tl.columns if c.startswith("cores_")]].sum(axis=1) == n_cores).all()
