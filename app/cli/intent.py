"""What a diff says it does, for `tiebreak review`: the description given with
`--description TEXT|@FILE`, or else, with `--base REF`, the messages of the commits between the
base and the head of the local checkout. (A pull request reviewed by its address says it in
its own title and description, read from GitHub.)

The words are the author's, untrusted like the diff: :mod:`agents.intent` cleans and bounds
them, and the agents read them as data. A file is read up to a bound; git runs with a timeout,
and commits git cannot list (git missing, an error, a timeout) are said once on standard
error, the review going on without them.
"""

import subprocess
from pathlib import Path

import click

from agents.intent import commits_intent, given_intent
from app.cli.exits import fail
from app.cli.printable import printable

MAX_COMMITS = 100
"""The newest commits whose messages are read: more say more than the agents read anyway."""
GIT_TIMEOUT_SECONDS = 30.0
MAX_FILE_CHARS = 1_000_000
"""Characters of a description file read at most: far past what the agents read, so that what
is cut is counted, yet a file that never ends (a device, a pipe) is read no further."""


def diff_intent(description: str | None, base: str | None, checkout: Path | None) -> str:
    """What the agents read of what the diff says it does: the description given (TEXT, or
    @FILE), else the messages of the commits between `base` and the head of `checkout`, else
    nothing. Said on standard error; exit 2 when a description file cannot be read."""
    if description is not None:
        intent = given_intent(_given(description))
        _say("the agents read the description given" if intent else "the description is empty")
        return intent
    if base is None or checkout is None:
        return ""
    listed = _messages(checkout, base)
    if isinstance(listed, str):
        _say(f"the commits between {base} and HEAD were not read ({listed}): no description")
        return ""
    if not listed:
        _say(f"no commit between {base} and HEAD: the agents read no description")
        return ""
    newest = f"the newest {MAX_COMMITS} " if len(listed) > MAX_COMMITS else ""
    count = min(len(listed), MAX_COMMITS)
    _say(
        f"the agents read the messages of {newest}{count} commit{'' if count == 1 else 's'} "
        f"between {base} and HEAD"
    )
    return commits_intent(listed[-MAX_COMMITS:])


def _given(description: str) -> str:
    """The text of `--description`: itself, or the file it names after `@`."""
    if not description.startswith("@"):
        return description
    name = description[1:]
    try:
        with open(name, encoding="utf-8", errors="replace") as file:
            return file.read(MAX_FILE_CHARS)
    except OSError as exc:
        fail(f"--description: cannot read {name}: {exc.strerror or exc}")


def _messages(checkout: Path, base: str) -> list[str] | str:
    """The messages of the commits between `base` and the checkout's head, oldest first, up
    to one more than :data:`MAX_COMMITS` (merges left out: their messages name branches);
    or why git could not list them."""
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "log", "--no-merges", "--reverse",
             f"--max-count={MAX_COMMITS + 1}", "--format=%B%x00", "--end-of-options",
             f"{base}..HEAD"],
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"git log took over {GIT_TIMEOUT_SECONDS:g} s"
    except OSError as exc:
        return f"git cannot run: {exc.strerror or exc}"
    if done.returncode:
        said = printable(done.stderr, one_line=True)
        return f"git log failed: {said}" if said else f"git log exited {done.returncode}"
    return [message for part in done.stdout.split("\x00") if (message := part.strip())]


def _say(line: str) -> None:
    click.echo(f"tiebreak: {printable(line, one_line=True)}", err=True)
