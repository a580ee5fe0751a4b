"""The code around a diff's changes for `tiebreak review`, read from a local checkout.

A file of the diff is read only where the checkout holds it at the diff's new side: every line
the diff shows there must be in the file at that line, or the context would show the agents
code other than the code under review. The files that match are read and the others named (a
changelog the checkout lacks, a page whose lines differ); a directory that is not a git work
tree, or where no file matches, gives no context and says why. The findings' tests run only on
a checkout where every file of the diff matches.

The diff is untrusted, and so is the checkout (often the very change under review): only
regular files of the work tree are read. A path that is absolute, climbs (`..`), reaches into
`.git`, or resolves — symlinks followed, at any component — to a file outside the work tree
is refused by name, and its file gets no context while the others keep theirs.
"""

import stat
from dataclasses import dataclass
from pathlib import Path

from agents.context.reading import changed_files
from agents.diff import Diff, DiffFile
from app.cli.work_tree import work_tree
from policies.safety import is_safe_relative

MAX_FILE_BYTES = 1_000_000
"""A larger file is not read (as the App reads no file GitHub will not inline)."""


@dataclass(frozen=True)
class Checkout:
    """What `tiebreak review` read of a local checkout for a diff."""

    sources: dict[str, str] | None
    """Each changed file's text, for the files the checkout holds at the diff's new side;
    None when there is no context at all."""
    said: str
    """What was read and what was not; when nothing was, why."""
    root: Path | None = None
    """The work tree, when every file of the diff is at its new side there (the findings'
    tests can run on it); None otherwise."""
    unfit: str = ""
    """Why the findings' tests cannot run on it, when `root` is None."""


def checkout_sources(diff: Diff, directory: Path) -> Checkout:
    """The changed files' texts in the checkout at `directory` (or the git work tree it is
    in), each file that is not at the diff's new side there named and left out."""
    root = work_tree(directory)
    if root is None:
        why = f"{directory} is not a git work tree"
        return Checkout(None, why, unfit=why)
    sources: dict[str, str] = {}
    refused: list[str] = []
    other: list[str] = []
    for diff_file in changed_files(diff):
        path = _inside(root, diff_file.path)
        if path is None:
            refused.append(diff_file.path)
            continue
        try:
            status = path.stat()
            if not stat.S_ISREG(status.st_mode):  # a fifo would never end, a device neither
                refused.append(diff_file.path)
                continue
            if status.st_size > MAX_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            other.append(f"{diff_file.path!r} (missing)")
            continue
        if (number := _first_other_line(diff_file, text)) is not None:
            other.append(f"{diff_file.path!r} (line {number} differs)")
            continue
        sources[diff_file.path] = text
    differs = f"{root} differs from the diff's new side: {', '.join(other)}"
    if other and not sources:
        return Checkout(None, differs, unfit=differs)
    said = f"code around the changes read from {root}"
    if refused:
        said += f"; not read, as not a regular file inside it: {', '.join(map(repr, refused))}"
    if other:
        said += f"; not read, as not at the diff's new side there: {', '.join(other)}"
    return Checkout(sources, said, None, differs) if other else Checkout(sources, said, root)


def _inside(root: Path, relative: str) -> Path | None:
    """The file `relative` names in the work tree at `root`, every symlink on the way
    followed; None when that path or the file it resolves to is not plainly inside it."""
    if not is_safe_relative(relative):
        return None
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or not is_safe_relative(path.relative_to(root).as_posix()):
        return None
    return path


def _first_other_line(diff_file: DiffFile, text: str) -> int | None:
    """The first new-side line of the diff that `text` does not hold, if any."""
    lines = text.splitlines()
    for hunk in diff_file.hunks:
        for number, line in hunk.lines.items():
            if number > len(lines) or lines[number - 1].rstrip("\r") != line:
                return number
    return None


def named_fault(directory: Path) -> str | None:
    """Why `directory`, named by a person (`--repo`), is no checkout to read: it does not
    exist, is no directory, or is in no git work tree; None when it is one."""
    if not directory.exists():
        return f"{directory} does not exist"
    if not directory.is_dir():
        return f"{directory} is not a directory"
    if work_tree(directory) is None:
        return f"{directory} is not in a git work tree"
    return None
