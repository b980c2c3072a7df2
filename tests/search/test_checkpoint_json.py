"""checkpoint.json (search/checkpoint.py, search/algostate.py): the optimiser's state as plain JSON.

The resumed algorithm must be the saved one, not one close to it: at every checkpoint of runs of each
shape (NSGA-II, its focus variant, NSGA-III, steady with resampling, screening), the state written to
JSON, read back and set on an algorithm built afresh from the study is compared with the live
algorithm as a whole object graph: every attribute, value, type, float bit and shared object."""

from __future__ import annotations

import json
import math
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from paretosched.search import optimise as optimise_module
from paretosched.search.checkpoint import CHECKPOINT, from_json, restore_into, to_json

from conftest import run_quiet, write_study
from test_steady_replay import NOISY

_ATOMS = (int, float, str, bool, bytes, type(None), np.generic)
_SAME_OBJECT = (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType, np.ufunc)


def same_graph(a: Any, b: Any, where: str, seen: dict[int, int], back: dict[int, int]) -> None:
    """Assert that `a` and `b` are the same object graph: types, values (floats bit for bit) and
    which objects are shared (`seen`/`back` map each object of one graph to its twin)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, _ATOMS):
        same = (a == b) or (isinstance(a, (float, np.floating)) and math.isnan(a) and math.isnan(b))
        assert same and repr(a) == repr(b), f"{where}: {a!r} != {b!r}"
        return
    if isinstance(a, _SAME_OBJECT):
        assert a is b, f"{where}: {a!r} is not {b!r}"
        return
    if id(a) in seen or id(b) in back:
        assert seen.get(id(a)) == id(b) and back.get(id(b)) == id(a), f"{where}: shared differently"
        return
    seen[id(a)], back[id(b)] = id(b), id(a)
    if isinstance(a, types.MethodType):
        assert a.__func__ is b.__func__, where
        same_graph(a.__self__, b.__self__, f"{where}.__self__", seen, back)
    elif isinstance(a, np.random.Generator):
        assert a.bit_generator.state == b.bit_generator.state, where
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        if a.dtype == object:
            for k, (x, y) in enumerate(zip(a.ravel(), b.ravel())):
                same_graph(x, y, f"{where}[{k}]", seen, back)
        else:
            assert a.tobytes() == b.tobytes(), f"{where}: {a} != {b}"
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for k in a:
            same_graph(a[k], b[k], f"{where}[{k!r}]", seen, back)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{where}: {len(a)} != {len(b)} items"
        for k, (x, y) in enumerate(zip(a, b)):
            same_graph(x, y, f"{where}[{k}]", seen, back)
    elif isinstance(a, (set, frozenset)):
        assert a == b, f"{where}: {a} != {b}"
    elif hasattr(a, "__dict__"):
        same_graph(vars(a), vars(b), where, seen, back)
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


SHAPES = {
    "nsga2": dict(budget={"generations": 4}, algorithm={"pop_size": 8}, seeds=2, recheck=2),
    "focus": dict(baselines={"prod": {"scheduler": {"freq": 0.55, "power_off_idle_s": 100.0, "min_nodes_on": 3,
                                                    "job_policy": "first", "backfilling": "easy"}}},
                  focus={"baseline": "prod"}, budget={"evaluations": 40}, algorithm={"pop_size": 8}),
    "nsga3": dict(objectives=["energy_kwh", "mean_bsld", {"max": "utilisation"}], reference_point=None,
                  budget={"generations": 4}, algorithm={"pop_size": 10}),
    "steady": dict(NOISY, budget={"generations": 4}, algorithm={"pop_size": 8, "schedule": "steady", "lag": 3}),
    "screening": dict(budget={"evaluations": 50}, algorithm={"pop_size": 8}, screening={"factor": 3, "min_log": 10}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_checkpoint_restores_the_algorithm_it_saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          shape: str) -> None:
    real = optimise_module.SearchRun._checkpoint
    checked: list[int] = []

    def checkpoint(run: Any) -> None:
        real(run)
        saved = json.loads((run.run_dir / CHECKPOINT).read_text())
        state = from_json(saved, run.run_dir / CHECKPOINT)
        restore_into(state, run._algorithm([]), run.run_dir)
        same_graph(run.algo, state.algorithm, "algorithm", {}, {})
        if run.state.steady is not None:  # the genomes bred and not told, shared as in the live run
            same_graph([run.algo, run.state.steady.get("queue", [])], [state.algorithm, state.steady["queue"]],
                       "steady", {}, {})
        assert to_json(state) == saved  # and read back, it writes the same file
        checked.append(run.state.n_told)

    monkeypatch.setattr(optimise_module.SearchRun, "_checkpoint", checkpoint)
    run_quiet(write_study(tmp_path, **SHAPES[shape]), tmp_path / "run")
    assert len(checked) >= 4 and checked[-1] >= 32  # generation 0 to the end
