"""Safe YAML reading and one-line error messages for validated files (used by every layer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

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
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except _DuplicateKey as exc:
        raise UserError(f"{p}:{exc}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{p}{_yaml_error(exc)}") from None


def _yaml_error(exc: yaml.YAMLError) -> str:
    """`:line: invalid YAML: problem`; `:start-line: ...` when the broken construct began earlier."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return f": invalid YAML: {problem}"
    line = mark.line + 1
    start = getattr(exc, "context_mark", None)
    context = getattr(exc, "context", None)
    if start is not None and context and start.line + 1 < line:
        # e.g. an unclosed `[` or quote: PyYAML notices only where the next token does not fit
        return f":{start.line + 1}-{line}: invalid YAML: {context} (line {start.line + 1}): {problem} (line {line})"
    return f":{line}: invalid YAML: {problem}"


def describe_validation_error(err: ValidationError, source: str) -> str:
    """First pydantic error as `source: key.path: message` (one line)."""
    first = err.errors()[0]
    loc = ".".join(str(part) for part in first["loc"] if not _is_union_tag(part))
    msg = first["msg"]
    if first["type"] == "extra_forbidden":
        msg = "unknown key"
    elif first["type"] == "missing":
        msg = "required key is missing"
    inp = first.get("input")
    shown = "" if first["type"] in ("missing", "extra_forbidden") or isinstance(inp, (dict, list)) else f" (got {inp!r})"
    more = len(err.errors()) - 1
    tail = f" [+{more} more]" if more > 0 else ""
    return f"{source}: {loc or '<root>'}: {msg}{shown}{tail}"


def _is_union_tag(part: Any) -> bool:
    # pydantic puts the discriminator value ('classic', 'rl') or function-validator names in loc
    return isinstance(part, str) and (part.startswith("function-") or part in _TAGS)


_TAGS: set[str] = set()


def register_union_tags(*tags: str) -> None:
    """Discriminator values that pydantic inserts in error locations and users never typed."""
    _TAGS.update(tags)


def validate(model: type[M], data: Any, source: str) -> M:
    """Validate `data` into `model`, raising a one-line UserError naming source and key."""
    if data is None:
        raise UserError(f"{source}: file is empty")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(describe_validation_error(exc, source)) from None
