"""In-place edits of a slurm.conf's text: one value, one SchedulerParameters option, one appended line.

Everything the edits do not touch stays byte for byte (comments, order, blank lines, spacing,
continuations): `export --against` diffs the result against the original, so an edit must change
only the line that sets the parameter. Lines are split as `conf.read_slurm_conf` splits them: `#`
starts a comment, a trailing backslash continues the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"(?:(?<=\s)|^)([A-Za-z][A-Za-z0-9_]*)=(\S*)")


@dataclass(frozen=True)
class Token:
    line: int  # physical line index (0-based)
    key: str  # lower case
    start: int  # value start / end in the physical line
    end: int

    def value(self, lines: list[str]) -> str:
        return lines[self.line][self.start:self.end]


def _code(line: str) -> str:
    """The part of a physical line before its comment, without the newline and continuation mark."""
    code = line.split("#", 1)[0].rstrip("\r\n")
    stripped = code.rstrip()
    return stripped[:-1] if stripped.endswith("\\") else code


class ConfText:
    """A slurm.conf as physical lines (ends kept) with the edits made so far."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def logical(self) -> list[list[Token]]:
        """The tokens of each logical line (continuations joined), in file order."""
        out: list[list[Token]] = []
        cur: list[Token] = []
        for i, line in enumerate(self.lines):
            code = _code(line)
            cur += [Token(i, m.group(1).lower(), m.start(2), m.end(2)) for m in _TOKEN.finditer(code)]
            if line.split("#", 1)[0].rstrip().endswith("\\"):
                continue
            if cur:
                out.append(cur)
            cur = []
        if cur:
            out.append(cur)
        return out

    def line_of(self, physical: int) -> list[Token]:
        """The logical line that starts at or spans physical line index `physical`."""
        for toks in self.logical():
            if toks[0].line <= physical <= toks[-1].line:
                return toks
        raise KeyError(physical)

    def last_setting(self, key: str) -> list[Token] | None:
        """The last logical line, other than node and partition lines, that sets `key`."""
        hit = None
        for toks in self.logical():
            if toks[0].key in ("nodename", "partitionname", "nodeset", "frontendname", "downnodes", "switchname"):
                continue
            if any(t.key == key.lower() for t in toks):
                hit = toks
        return hit

    def replace(self, tok: Token, value: str) -> None:
        line = self.lines[tok.line]
        self.lines[tok.line] = line[:tok.start] + value + line[tok.end:]

    def add_token(self, toks: list[Token], key: str, value: str) -> None:
        """`Key=value` at the end of a logical line's code (before its comment)."""
        i = toks[-1].line
        line = self.lines[i]
        code = line.split("#", 1)[0].rstrip("\r\n").rstrip()
        self.lines[i] = code + f" {key}={value}" + line[len(code):]

    def remove_token(self, tok: Token) -> None:
        """Drop `Key=value` from its line; a line left with no setting becomes a comment."""
        line = self.lines[tok.line]
        start = tok.start - len(tok.key) - 1  # the key's first character
        rest = line[:start].rstrip() + line[tok.end:]
        if not _TOKEN.search(_code(rest)):
            self.lines[tok.line] = "#" + line
        else:
            self.lines[tok.line] = rest

    def append(self, line: str) -> None:
        if self.lines and not self.lines[-1].endswith("\n"):
            self.lines[-1] += "\n"
        self.lines.append(line + "\n")

    def set_param(self, key: str, value: str) -> str:
        """Set a top-level parameter where the file last sets it, else append it; returns where."""
        toks = self.last_setting(key)
        if toks is None:
            self.append(f"{key}={value}")
            return "appended"
        tok = [t for t in toks if t.key == key.lower()][-1]
        self.replace(tok, value)
        return f"line {tok.line + 1}"

    def set_option(self, option: str, value: str) -> str:
        """Set `option=value` inside the last SchedulerParameters, keeping its other options."""
        toks = self.last_setting("schedulerparameters")
        if toks is None:
            self.append(f"SchedulerParameters={option}={value}")
            return "appended"
        tok = [t for t in toks if t.key == "schedulerparameters"][-1]
        items = [x for x in tok.value(self.lines).split(",") if x]
        names = [x.partition("=")[0].lower() for x in items]
        if option.lower() in names:  # every occurrence: Slurm reads the first, the importer the last
            items = [f"{option}={value}" if n == option.lower() else x for x, n in zip(items, names)]
        else:
            items.append(f"{option}={value}")
        self.replace(tok, ",".join(items))
        return f"line {tok.line + 1}"

    def unset_param(self, key: str) -> list[str]:
        """Remove every setting of `key` (Slurm's default applies); returns where."""
        where = []
        while (toks := self.last_setting(key)) is not None:
            tok = [t for t in toks if t.key == key.lower()][-1]
            where.append(f"line {tok.line + 1}")
            self.remove_token(tok)
        return where
