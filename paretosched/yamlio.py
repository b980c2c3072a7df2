"""Safe YAML reading and one-line error messages for validated files (used by every layer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from paretosched.errors import UserError

M = TypeVar("M", bound=BaseModel)


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
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserError(f"{p}{where}: invalid YAML: {problem}") from None


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
