"""The argument kinds of the Python API: one validator per kind, applied by `@checked`.

A notebook passes what it has at hand: numpy scalars (a numpy integer is an int, a numpy bool
a bool), tuples, ranges or arrays for lists, `Path`s for file names. Anything else that is not
the documented type is refused before any work, as one `ArgumentError` line naming the
argument: a bool is not a count, a float is not a seed (1.5 would silently run seed 1), `"2"`
is not a number of workers. The seed rules are the study file's own (`search.study.Seeds`).
"""

from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import Annotated, Any, Callable, Optional, TypeVar

import numpy as np
from pydantic import ConfigDict, Field, PlainValidator, TypeAdapter, ValidationError

from paretosched.config import SimConfig
from paretosched.errors import ArgumentError
from paretosched.search.guards import MAX_WORKERS
from paretosched.search.study import Seeds, Study

F = TypeVar("F", bound=Callable[..., Any])


def plain(value: Any) -> Any:
    """`value` with numpy scalars as the Python numbers they hold and sequences (tuples,
    ranges, arrays) as lists, recursively: what YAML or JSON would have given."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()] if value.ndim else plain(value[()])
    if isinstance(value, (list, tuple, range)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _path(value: Any) -> Path:
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise ValueError("expected")
    text = os.fspath(value)
    if not isinstance(text, str) or not text:
        raise ValueError("expected")
    if any(c in text for c in "\0\n\r"):  # NUL: no such file; a line break would split every message naming it
        raise ValueError("a path cannot hold a NUL character or a line break")
    return Path(text)


def _source(model: type) -> Callable[[Any], Any]:
    """A dict, a path, or an instance of the validated class `model`."""
    def check(value: Any) -> Any:
        return value if isinstance(value, (model, dict)) else _path(value)
    return check


class Kind:
    """One kind of argument: its type (validated strictly) and how an error says what it expects."""

    def __init__(self, expected: str, tp: Any) -> None:
        self.expected = expected
        self._adapter: TypeAdapter[Any] = TypeAdapter(tp, config=ConfigDict(strict=True))

    def check(self, value: Any, name: str) -> Any:
        """The validated value, or a one-line ArgumentError naming `name`."""
        try:
            return self._adapter.validate_python(plain(value))
        except ValidationError as exc:
            raise ArgumentError(self._message(name, value, exc)) from None

    def _message(self, name: str, value: Any, exc: ValidationError) -> str:
        err = exc.errors()[0]
        index = [p for p in err["loc"] if isinstance(p, int)]
        where = name + "".join(f"[{i}]" for i in index)
        msg = str(err["msg"]).removeprefix("Value error, ")
        if (err["type"] != "value_error" and not index) or msg == "expected":
            return f"{where}: expected {self.expected}, got {_short(value)}"
        return f"{where}: {msg[:1].lower()}{msg[1:]} (got {_short(err.get('input', value))})"


def _short(value: Any) -> str:
    text = " ".join(repr(value).split())  # one line, whatever the object's repr
    return f"{text[:60]}..." if len(text) > 63 else text


SEEDS = Kind("None, a number of seeds or a list of distinct seeds", Optional[Seeds])
FLAG = Kind("True or False", bool)
WORKERS = Kind(f"None or a number of workers from 1 to {MAX_WORKERS}",
               Optional[Annotated[int, Field(ge=1, le=MAX_WORKERS)]])
PATH = Kind("a path (a non-empty str or os.PathLike)", Annotated[Any, PlainValidator(_path)])
OPTIONAL_PATH = Kind("None or a path (a non-empty str or os.PathLike)",
                     Annotated[Any, PlainValidator(lambda v: v if v is None else _path(v))])
PICK = Kind('a pick expression (a string such as "balanced", "knee" or "min:energy_kwh")',
            Annotated[str, Field(min_length=1)])
ADDRESS = Kind("None or a Dask scheduler address (a string)", Optional[Annotated[str, Field(min_length=1)]])
CONFIG = Kind("a dict, a file path or a SimConfig", Annotated[Any, PlainValidator(_source(SimConfig))])
STUDY = Kind("a file path, a dict or a Study", Annotated[Any, PlainValidator(_source(Study))])


def checked(**kinds: Kind) -> Callable[[F], F]:
    """Validate the named arguments of a public function by their kinds before it runs."""
    def wrap(fn: F) -> F:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:  # an unknown keyword or a missing argument
                raise ArgumentError(f"{fn.__name__}(): {exc}") from None
            bound.apply_defaults()
            for name, kind in kinds.items():
                bound.arguments[name] = kind.check(bound.arguments[name], name)
            return fn(*bound.args, **bound.kwargs)
        return call  # type: ignore[return-value]
    return wrap
