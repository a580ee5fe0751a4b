"""The diff `tiebreak review` is given, from a file or standard input, and why it is none
when it is none, in the words of what it is instead: a diff in colour (`git diff
--color=always`), a `--stat` summary, a merge commit's empty `git show`."""

import re
import sys

import click

from agents.diff import Diff, diff_text
from agents.errors import DiffError
from app.cli.exits import fail

MERGE_HINT = (
    "; a merge commit's `git show` shows no diff: use `git show --first-parent` (the changes "
    "the merge brought in) or `git show -m` (a diff per parent)"
)
COLOURED = "the diff has colour escape codes: make it with --no-color (or --color=never)"
STAT = "this is a --stat summary, not a diff: make it without --stat"

_COLOURED_LINE = re.compile(r"^\x1b\[[0-9;]*m(?:diff |index |--- |\+\+\+ |@@ )", re.MULTILINE)
"""A line of a diff's own that `--color=always` opened with an escape: an escape in the code
changed (a test of a terminal's output) is the code's, and reviewed as it is."""
_STAT_TOTAL = re.compile(r"^ \d+ files? changed(, \d+ insertions?\(\+\))?(, \d+ deletions?\(-\))?$")


def parsed_diff(source: str) -> Diff:
    """The diff in the file `source`, or on standard input for `-`; exit 2 when it is none."""
    if source == "-" and sys.stdin.isatty():
        # Nothing piped in: a person may be waiting on a command that waits on them.
        click.echo("tiebreak: reading a diff from standard input (Ctrl-D ends it)", err=True)
    try:
        with click.open_file(source, "rb") as file:
            data: bytes = file.read()
    except OSError as exc:
        fail(f"cannot read {source}: {exc.strerror or exc}")
    try:
        text = diff_text(data)
    except DiffError as exc:
        fail(str(exc))
    if _COLOURED_LINE.search(text):
        fail(COLOURED)
    try:
        return Diff.parse(text)
    except DiffError as exc:
        if any(_STAT_TOTAL.match(line) for line in text.splitlines()):
            fail(STAT)
        fail(str(exc) + (MERGE_HINT if _merge_commit(text) else ""))


def _merge_commit(text: str) -> bool:
    """Whether `text` is `git show`'s (or `git log -p`'s) header of a merge commit."""
    header = text.split("\ndiff ", 1)[0]
    return header.startswith("commit ") and any(
        line.startswith("Merge: ") for line in header.splitlines()
    )
