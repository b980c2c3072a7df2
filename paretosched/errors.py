"""The one exception type for user mistakes: the CLI prints it on one line and exits 2."""

from __future__ import annotations

import sys
from typing import Callable


class UserError(Exception):
    """Bad input from the user (file, key, value); the message names where and what."""


class ArgumentError(UserError, TypeError, ValueError):
    """A bad argument to a public Python function (paretosched.api, Run): a UserError, and also
    the TypeError or ValueError a Python caller expects; the message names the argument."""


def run_script(main: Callable[[], int | None], prog: str) -> int:
    """Run a script's `main` as the CLI runs a command: a UserError is one line on stderr, exit code 2."""
    try:
        return main() or 0
    except UserError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2

