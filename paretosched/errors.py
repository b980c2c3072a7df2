"""The one exception type for user mistakes: the CLI prints it on one line and exits 2."""


class UserError(Exception):
    """Bad input from the user (file, key, value); the message names where and what."""
