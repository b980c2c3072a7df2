"""The optimiser's state as plain JSON, for the checkpoint (never a pickle: a run directory is data
people share, and loading it must not run anything).

A resumed session builds the algorithm afresh from the study (`problem.build_algorithm`: its
operators, problem and settings are the study's) and then sets only what a run changes, from
the file: the counters, the populations (`pop`, `off`, `opt`, NSGA-III's survival state), the
random generator's bit state. `STATE` lists those attribute paths; nothing else is ever set,
and every value is data (numbers, strings, arrays of numbers, pymoo individuals), so a damaged
or hostile file can at worst be refused.

Values keep their exact type and bits (a numpy int64 stays one, floats travel as float.hex), and
individuals shared between populations stay shared (one table, referenced by index), so the
resumed algorithm is the one that was saved (tests/search/test_checkpoint_json.py compares the
whole object graphs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pymoo.core.individual import Individual
from pymoo.core.population import Population

# what a run changes in pymoo's NSGA-II / NSGA-III (pymoo 0.6): attribute paths from the algorithm
STATE = ("n_iter", "n_gen", "n_offsprings", "is_initialized", "start_time", "data", "pop", "off", "opt", "random_state",
         "evaluator.n_eval", "termination.force_termination", "termination.perc",
         "display.is_initialized", "display.data", "callback.is_initialized", "callback.data",
         "survival.opt", "survival.norm.ideal_point", "survival.norm.worst_point", "survival.norm.nadir_point",
         "survival.norm.extreme_points")
# an individual's values: what pymoo's Individual.reset sets
_IND = ("_X", "_F", "_G", "_H", "_dF", "_dG", "_dH", "_ddF", "_ddG", "_ddH", "_CV")
_DTYPES = {np.dtype(t).str: np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                                   "uint32", "uint64", "float32", "float64")}
_MISSING = object()


class StateError(ValueError):
    """The saved state is not one this code writes (damaged, or another version's)."""


# ---------------------------------------------------------------------------------------------
# encoding

class Encoder:
    """Values to JSON; individuals go to one table (`individuals`), referenced by index."""

    def __init__(self) -> None:
        self.individuals: list[dict[str, Any]] = []
        self._index: dict[int, int] = {}
        self._pops: dict[int, int] = {}  # populations met so far, by id: their order
        self._keep: list[Any] = []  # alive while encoding, so ids stay unique

    def ind(self, ind: Individual) -> int:
        k = self._index.get(id(ind))
        if k is None:
            k = self._index[id(ind)] = len(self.individuals)
            self._keep.append(ind)
            vals: dict[str, Any] = {}
            first: dict[int, str] = {}  # pymoo shares one empty array between an individual's unset values
            for a in _IND:
                v = ind.__dict__[a]
                if isinstance(v, np.ndarray) and id(v) in first:
                    vals[a] = {"same": first[id(v)]}
                else:
                    first[id(v)] = a
                    vals[a] = self.value(v)
            self.individuals.append({"values": vals, "evaluated": self.value(ind.evaluated),
                                     "data": self.value(ind.data)})
        return k

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, str)) or type(v) is int:
            return v
        if type(v) is float:
            return {"f": v.hex()}
        if isinstance(v, Individual):
            return {"ind": self.ind(v)}
        if isinstance(v, Population):  # NSGA-III's opt is its survival's: shared, as individuals are
            if id(v) in self._pops:
                return {"same_pop": self._pops[id(v)]}
            self._pops[id(v)] = len(self._pops)
            self._keep.append(v)
            return {"pop": [self.ind(i) for i in v]}
        if isinstance(v, np.generic) and v.dtype.str in _DTYPES:
            return {"n": v.dtype.str, "v": _scalar(v.item())}
        if isinstance(v, np.ndarray) and v.dtype.str in _DTYPES:
            return {"a": v.dtype.str, "s": list(v.shape), "v": [_scalar(x) for x in v.ravel().tolist()]}
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"d": {k: self.value(x) for k, x in v.items()}}
        if isinstance(v, (set, frozenset)):
            return {"set": sorted((self.value(x) for x in v), key=repr)}
        if isinstance(v, tuple):
            return {"t": [self.value(x) for x in v]}
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, np.random.Generator):
            return {"rng": v.bit_generator.state}
        raise TypeError(f"the checkpoint cannot hold a {type(v).__name__}")  # a bug: a new kind of state


def _scalar(x: Any) -> Any:
    return {"f": x.hex()} if isinstance(x, float) else x


def capture(algo: Any, enc: Encoder) -> dict[str, Any]:
    """The state of a live algorithm (`STATE`), as JSON."""
    out = {}
    for path in STATE:
        v = _get(algo, path)
        if v is not _MISSING:
            out[path] = enc.value(v)
    return out


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part, _MISSING)
        if obj is _MISSING:
            return _MISSING
    return obj


# ---------------------------------------------------------------------------------------------
# decoding

class Decoder:
    """JSON back to values; the individuals' table first (`Decoder(table)`)."""

    def __init__(self, table: Any) -> None:
        if not isinstance(table, list):
            raise StateError("individuals: expected a list")
        self.individuals: list[Individual] = []
        self.pops: list[Population] = []  # in the order `Encoder` met them
        for k, d in enumerate(table):
            if not isinstance(d, dict) or set(d) != {"values", "evaluated", "data"} or not isinstance(d["values"], dict):
                raise StateError(f"individuals.{k}: expected values, evaluated and data")
            ind, done = Individual(), set()
            for a, v in d["values"].items():
                if a not in _IND:
                    raise StateError(f"individuals.{k}: unknown value {a!r}")
                if isinstance(v, dict) and set(v) == {"same"}:
                    if v["same"] not in done:
                        raise StateError(f"individuals.{k}: {a} is the same as an unknown value")
                    ind.__dict__[a] = ind.__dict__[v["same"]]
                else:
                    ind.__dict__[a] = self.value(v)
                done.add(a)
            evaluated, data = self.value(d["evaluated"]), self.value(d["data"])
            if not isinstance(evaluated, set) or not isinstance(data, dict):
                raise StateError(f"individuals.{k}: evaluated must be a set and data a mapping")
            ind.evaluated, ind.data = evaluated, data
            self.individuals.append(ind)

    def ind(self, k: Any) -> Individual:
        if type(k) is not int or not 0 <= k < len(self.individuals):
            raise StateError(f"no individual {k!r}")
        return self.individuals[k]

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, str)) or type(v) is int:
            return v
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if not isinstance(v, dict) or len(v) not in (1, 2, 3):
            raise StateError(f"not a saved value: {str(v)[:40]}")
        if "f" in v and len(v) == 1:
            return _float(v["f"])
        if "ind" in v and len(v) == 1:
            return self.ind(v["ind"])
        if "pop" in v and len(v) == 1 and isinstance(v["pop"], list):
            self.pops.append(Population.create(*[self.ind(k) for k in v["pop"]]))
            return self.pops[-1]
        if "same_pop" in v and len(v) == 1:
            k = v["same_pop"]
            if type(k) is not int or not 0 <= k < len(self.pops):
                raise StateError(f"no population {k!r}")
            return self.pops[k]
        if set(v) == {"n", "v"}:
            return _dtype(v["n"]).type(_plain(v["v"]))
        if set(v) == {"a", "s", "v"}:
            return _array(v)
        if "d" in v and len(v) == 1 and isinstance(v["d"], dict):
            return {k: self.value(x) for k, x in v["d"].items()}
        if "set" in v and len(v) == 1 and isinstance(v["set"], list):
            return {self.value(x) for x in v["set"]}
        if "t" in v and len(v) == 1 and isinstance(v["t"], list):
            return tuple(self.value(x) for x in v["t"])
        if "rng" in v and len(v) == 1:
            return _rng(v["rng"])
        raise StateError(f"not a saved value: {str(v)[:40]}")


def _float(h: Any) -> float:
    if not isinstance(h, str):
        raise StateError("a float is saved as its hex string")
    try:
        return float.fromhex(h)
    except (ValueError, OverflowError):
        raise StateError(f"not a float: {h[:30]!r}") from None


def _plain(x: Any) -> Any:
    if isinstance(x, dict) and set(x) == {"f"}:
        return _float(x["f"])
    if isinstance(x, (bool, int)):
        return x
    raise StateError(f"not a number: {str(x)[:30]}")


def _dtype(name: Any) -> np.dtype:
    if name not in _DTYPES:
        raise StateError(f"not a numeric dtype: {str(name)[:20]!r}")
    return _DTYPES[name]


def _array(v: dict[str, Any]) -> np.ndarray:
    shape, flat = v["s"], v["v"]
    if not isinstance(shape, list) or not all(type(n) is int and 0 <= n < 2**31 for n in shape) \
            or not isinstance(flat, list) or int(np.prod(shape)) != len(flat):
        raise StateError("an array's shape and values disagree")
    try:
        return np.array([_plain(x) for x in flat], dtype=_dtype(v["a"])).reshape(shape)
    except OverflowError:
        raise StateError("an array value is out of its type's range") from None


def _rng(state: Any) -> np.random.Generator:
    if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
        raise StateError("the random generator is not a PCG64 state")
    gen = np.random.Generator(np.random.PCG64())
    try:
        gen.bit_generator.state = state
    except (TypeError, ValueError, KeyError, OverflowError):
        raise StateError("the random generator's state is damaged") from None
    return gen


def decode_state(d: Any, dec: Decoder) -> dict[str, Any]:
    """The algorithm's saved state (`capture`), decoded (still to be applied with `restore`)."""
    if not isinstance(d, dict) or not set(d) <= set(STATE):
        raise StateError("algorithm: expected the saved attributes of NSGA-II/III")
    return {path: dec.value(v) for path, v in d.items()}


def restore(algo: Any, state: dict[str, Any]) -> None:
    """Set the decoded `state` on a freshly built algorithm (the study's)."""
    for path, value in state.items():
        *parents, name = path.split(".")
        owner = algo
        for part in parents:
            owner = getattr(owner, part, _MISSING)
        if owner is _MISSING or not hasattr(owner, name):
            raise StateError(f"algorithm: {path} does not exist in this study's algorithm")
        if isinstance(value, np.random.Generator):
            # in place: pymoo's operators hold the algorithm's generator, not a copy
            getattr(owner, name).bit_generator.state = value.bit_generator.state
        else:
            setattr(owner, name, value)
