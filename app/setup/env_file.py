"""The dotenv file `tiebreak setup` writes: the App's credentials, readable by their owner only.

Tiebreak's commands read it from the working directory (:func:`app.settings.get_settings`), and
Docker Compose's `env_file` reads the same syntax: a single-quoted value is taken literally, a
double-quoted one decodes `\\n`, which keeps the private key's lines on one line of the file.
"""

import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

MODE = 0o600


def render(values: Mapping[str, str], *, comments: Iterable[str] = ()) -> str:
    """The file's text: the comments, then one `NAME=value` line per value."""
    lines = [f"# {comment}" if comment else "#" for comment in comments]
    lines += [f"{name}={_quoted(value)}" for name, value in values.items()]
    return "\n".join(lines) + "\n"


def _quoted(value: str) -> str:
    if "\n" in value:
        # Double quotes interpolate `$` and decode backslashes: a PEM has neither.
        if any(c in value for c in '"\\$\r'):
            raise ValueError("a multi-line value may not hold quotes, backslashes or $")
        return '"' + value.replace("\n", "\\n") + '"'
    if "'" in value or "\r" in value:
        raise ValueError("a value may not hold a single quote or a carriage return")
    return f"'{value}'"


def write_private(path: Path, text: str, *, replace: bool = False) -> None:
    """Write `text` to a new file at `path`, created with mode 0600: never readable by anyone
    else, not even for a moment.

    Without `replace`, an existing `path` (a symbolic link included) raises
    `FileExistsError`; with it, the old file is replaced in one step, so no reader ever sees
    half a file.
    """
    if not replace:
        _create(path, text)
        return
    staged = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
    _create(staged, text)
    try:
        os.replace(staged, path)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise


def _create(path: Path, text: str) -> None:
    # O_EXCL: never through a link, never into a file that exists.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            os.fchmod(stream.fileno(), MODE)  # exactly 0600, whatever the umask
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise
