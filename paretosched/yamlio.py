"""Safe YAML reading and one-line error messages for validated files (used by every layer)."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Iterable, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from paretosched.errors import UserError

M = TypeVar("M", bound=BaseModel)


class _DuplicateKey(Exception):
    def __init__(self, line: int, key: Any, first: int) -> None:
        super().__init__(f"{line}: duplicate key {key!r} (first on line {first})")
        self.line, self.key, self.first = line, key, first


class _Loader(yaml.SafeLoader):
    """The safe loader, refusing a key given twice in one mapping (PyYAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *defaults` then overriding a merged key is the point of merging
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:
                        raise _DuplicateKey(key_node.start_mark.line + 1, key, seen[key])
                    seen[key] = key_node.start_mark.line + 1
                except TypeError:
                    pass  # unhashable key: the base constructor reports it
        return super().construct_mapping(node, deep)


# YAML 1.1 (PyYAML) reads `1e4`, `1.0e3` and `.5e3` as strings (it wants a dot and a signed
# exponent); YAML 1.2 and JSON read them as numbers, as a user writing `wall_time_s: 1e4` expects.
# The dumper knows the same rule, so a string such as '1e4' is written quoted and reads back a string.
_FLOAT_1_2 = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)[eE][-+]?[0-9]+$")
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_1_2, list("-+.0123456789"))


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The safe dumper (libyaml's when present: ~10x faster), quoting what `_Loader` would misread."""


_Dumper.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_1_2, list("-+.0123456789"))


def dump_yaml(obj: Any, **kwargs: Any) -> str:
    """YAML text that `read_yaml` reads back as the same values."""
    return yaml.dump(obj, Dumper=_Dumper, **kwargs)


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML (or JSON) file with the safe loader; errors name the file and line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{p}: file not found") from None
    except IsADirectoryError:
        raise UserError(f"{p}: is a directory, expected a YAML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{p}: cannot read: {exc}") from None
    try:
        return _load_bounded(text)
    except _AliasBomb as exc:
        raise UserError(f"{p}{exc}") from None
    except _DuplicateKey as exc:
        raise UserError(f"{p}:{exc}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{p}{_yaml_error(exc)}") from None


# Nodes that aliases may add once expanded. PyYAML shares an aliased node's value, but
# validation, dumps and hashing walk it as a tree: nine aliases of nine aliases... of a list
# (a "billion laughs") is a few hundred bytes that expand to gigabytes. Real configs and
# studies reuse a section a few times (a few hundred nodes).
MAX_ALIAS_NODES = 10_000


class _AliasBomb(Exception):
    pass


def _load_bounded(text: str) -> Any:
    """`yaml.load` with the safe `_Loader`, refusing documents whose aliases expand too far."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_aliases(node)
        return loader.construct_document(node)
    except RecursionError:  # PyYAML composes and constructs recursively
        raise _AliasBomb(": nested too deeply") from None
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[tuple[yaml.Node, int]]:
    """(child, line where the parent refers to it): an alias node is the anchored node itself,
    so its own position is lost; a mapping value is reported at its key's line."""
    if isinstance(node, yaml.SequenceNode):
        return [(n, node.start_mark.line + 1) for n in node.value]
    if isinstance(node, yaml.MappingNode):
        return [(n, k.start_mark.line + 1) for k, v in node.value for n in (k, v)]
    return []


def _check_aliases(root: yaml.Node) -> None:
    """Raise `_AliasBomb` (':line: ...') when aliases add more than MAX_ALIAS_NODES values or
    refer to a node that contains them. Linear in the number of distinct nodes: an aliased
    node's expanded size is computed once."""
    size: dict[int, int] = {}
    active: set[int] = set()
    extra = 0

    def walk(node: yaml.Node, line: int) -> int:
        nonlocal extra
        key = id(node)
        if key in active:
            raise _AliasBomb(f":{line}: an alias refers to a node that contains it")
        if key in size:  # a second occurrence: an alias, expanded by every reader downstream
            extra += size[key]
            if extra > MAX_ALIAS_NODES:
                raise _AliasBomb(f":{line}: aliases (*name) expand to more than {MAX_ALIAS_NODES} values; "
                                 "write the values out or use fewer aliases")
            return size[key]
        active.add(key)
        total = 1 + sum(walk(child, at) for child, at in _children(node))
        active.discard(key)
        size[key] = total
        return total

    walk(root, root.start_mark.line + 1)


def _yaml_error(exc: yaml.YAMLError) -> str:
    """`:line: invalid YAML: problem`; `:start-line: ...` when the broken construct began earlier."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return f": invalid YAML: {problem}"
    line = mark.line + 1
    start = getattr(exc, "context_mark", None)
    context = getattr(exc, "context", None)
    # only for constructs that may span lines unnoticed (an unclosed bracket or quote); a block
    # mapping's context is where the mapping began, often the top of the file
    spans = context is not None and ("flow" in context or "quoted" in context)
    if start is not None and spans and start.line + 1 < line:
        # e.g. an unclosed `[` or quote: PyYAML notices only where the next token does not fit
        return f":{start.line + 1}-{line}: invalid YAML: {context} (line {start.line + 1}): {problem} (line {line})"
    return f":{line}: invalid YAML: {problem}"


def describe_validation_error(err: ValidationError, source: str, model: type[BaseModel] | None = None) -> str:
    """First pydantic error as `source: key.path: message` (one line).

    `model` (the validated class) lets a section given as a scalar or a list be answered with
    the keys it expects instead of pydantic's class name.
    """
    # a misspelt key first: the missing required key it caused is only its consequence
    errors = sorted(err.errors(), key=lambda e: e["type"] != "extra_forbidden")
    first = errors[0]
    path, section = _user_loc(first["loc"], model)
    loc = ".".join(str(part) for part in path)
    msg = first["msg"]
    inp = first.get("input")
    shown = "" if first["type"] in ("missing", "extra_forbidden") or isinstance(inp, (dict, list)) else f" (got {inp!r})"
    if first["type"] == "extra_forbidden":
        msg = "unknown key" + _did_you_mean(path[-1] if path else None, model, first["loc"])
    elif first["type"] == "missing":
        msg = "required key is missing"
    elif first["type"] == "model_type":  # "Input should be a valid dictionary or instance of <Class>"
        keys = ""
        if isinstance(section, type) and issubclass(section, BaseModel):
            names = [f.alias or n for n, f in section.model_fields.items()]
            keys = " of keys (" + ", ".join(names if len(names) <= 4 else [*names[:3], "..."]) + ")"
        # a whole document that is not a mapping may be any file: name its kind, never its text
        msg, shown = f"expected a mapping{keys}, got {_kind(inp)}", _short(inp) if loc else ""
    elif first["type"] == "value_error":  # our validators' own words; pydantic's prefix adds nothing
        msg = str(msg).removeprefix("Value error, ")
        if not loc:  # a whole-model check names its keys itself
            return f"{source}: {msg}"
    tail = ""
    if len(errors) > 1:  # name every other problem: "[+1 more]" alone sent users round the loop again
        rest = []
        for nxt in errors[1:]:
            nxt_path = _user_loc(nxt["loc"], model)[0]
            where = ".".join(str(part) for part in nxt_path) or "<root>"
            what = ("unknown key" + _did_you_mean(nxt_path[-1] if nxt_path else None, model, nxt["loc"])
                    if nxt["type"] == "extra_forbidden" else "required key is missing" if nxt["type"] == "missing"
                    else str(nxt["msg"]).removeprefix("Value error, "))
            rest.append(f"{where}: {what}")
        tail = f" [+{len(rest)} more: {'; '.join(rest)}]"
    if not loc and first["type"] == "model_type":
        return f"{source}: {msg}{shown}{tail}"
    return f"{source}: {loc or '<root>'}: {msg}{shown}{tail}"


def _did_you_mean(key: Any, model: type[BaseModel] | None, loc: tuple[Any, ...] = ()) -> str:
    """' (did you mean 'job_policy'?)' for a misspelt key: the closest key of its own section when
    the path leads to one (`focus.extra` must not suggest `algorithm.crossover.eta`), else of
    any section of `model`."""
    if not isinstance(key, str) or model is None:
        return ""
    parent = _user_loc(tuple(loc[:-1]), model)[1] if loc else None
    if isinstance(parent, type) and issubclass(parent, BaseModel):
        return did_you_mean(key, {f.alias or n for n, f in parent.model_fields.items()}, cutoff=0.75)
    return did_you_mean(key, _known_keys(model), cutoff=0.75)


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """' (did you mean 'x'?)' naming the closest of `choices` to a misspelt `word`, or ''."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=cutoff)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _known_keys(model: Any, seen: set[Any] | None = None) -> set[str]:
    """Every key of `model` and of the models its fields hold (unions and containers followed)."""
    seen = set() if seen is None else seen
    if model in seen:
        return set()
    seen.add(model)
    keys: set[str] = set()
    if isinstance(model, type) and issubclass(model, BaseModel):
        for name, f in model.model_fields.items():
            keys.add(f.alias or name)
            keys |= _known_keys(f.annotation, seen)
    else:
        for arg in get_args(model):
            keys |= _known_keys(arg, seen)
    return keys


def _kind(value: Any) -> str:
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


def _short(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    text = repr(value)
    return f" ({text[:40]}...)" if len(text) > 43 else f" ({text})"


def _user_loc(loc: tuple[Any, ...], model: type[BaseModel] | None) -> tuple[list[Any], Any]:
    """The key path the user wrote: without the discriminator values, validator names and
    union-member labels ('str', 'list[int]', a class name) pydantic inserts. A member label is
    recognised by position (right after a field whose type is a union), so a user key that
    happens to read 'none' or 'int' (a baseline's name, say) stays. Also returns the type the
    path leads to (a model class, or None when unknown), to name the keys a section expects."""
    out: list[Any] = []
    ann: Any = model
    for part in loc:
        if _is_union_tag(part) or ann is _UNION:
            ann = None if ann is _UNION else ann  # a member's own type is not followed further
            continue
        out.append(part)
        ann = _step(ann, part)
    return out, None if ann is _UNION else ann


_UNION = object()  # marker: the previous key's type is a union, the next loc part is a label


def _step(ann: Any, part: Any) -> Any:
    """The annotation one key (or list index) below `ann`; `_UNION` for a union; None if unknown."""
    if ann is None:
        return None
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        fields = {f.alias or n: f for n, f in ann.model_fields.items()}
        return _unwrap(fields[part].annotation) if part in fields else None
    origin, args = get_origin(ann), get_args(ann)
    if origin is dict and len(args) == 2:
        return _unwrap(args[1])
    if origin in (list, tuple) and args:
        return _unwrap(args[0])
    return None


def _unwrap(ann: Any) -> Any:
    if get_origin(ann) is Annotated:
        return _unwrap(get_args(ann)[0])
    if get_origin(ann) in (Union, UnionType):
        members = [a for a in get_args(ann) if a is not type(None)]
        # `X | None` validates as a nullable X (no label); other unions put a member label or,
        # when discriminated, the tag in loc next
        if len(members) == 1:
            return _unwrap(members[0])
        return _UNION
    return ann


def _is_union_tag(part: Any) -> bool:
    # pydantic puts the discriminator value ('classic', 'rl') or function-validator names in loc
    return isinstance(part, str) and (part.startswith("function-") or part in _TAGS)


_TAGS: set[str] = set()


def register_union_tags(*tags: str) -> None:
    """Discriminator values that pydantic inserts in error locations and users never typed."""
    _TAGS.update(tags)


def _foreign(model: type[BaseModel], data: Any) -> bool:
    """A mapping none of whose keys `model` takes nor nearly spells (a model refusing unknown
    keys): some other file that happens to parse as YAML, not a mistyped one of ours."""
    if not isinstance(data, dict) or not data or model.model_config.get("extra") != "forbid":
        return False
    names = {f.alias or n for n, f in model.model_fields.items()}
    return not any(isinstance(k, str) and (k in names or did_you_mean(k, names, cutoff=0.75)) for k in data)


def validate(model: type[M], data: Any, source: str) -> M:
    """Validate `data` into `model`, raising a one-line UserError naming source and key."""
    if data is None:
        raise UserError(f"{source}: file is empty")
    if _foreign(model, data):  # e.g. /etc/passwd read as YAML: its lines are keys, never to be echoed
        names = [f.alias or n for n, f in model.model_fields.items()]
        raise UserError(f"{source}: not a file of this kind: none of its {len(data)} top-level keys is one of "
                        f"{', '.join(names)}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(describe_validation_error(exc, source, model)) from None
