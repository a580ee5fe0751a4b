"""The code around a diff's changes for `tiebreak review`, read from a local checkout.

The checkout must be at the diff's new side: every line the diff shows there must be in its
file at that line, or the context would show the agents code other than the code under
review. A directory that is not such a checkout gives no context, and says why.

The diff is untrusted, and so is the checkout (often the very change under review): only
regular files of the work tree are read. A path that is absolute, climbs (`..`), reaches into
`.git`, or resolves — symlinks followed, at any component — to a file outside the work tree
is refused by name, and its file gets no context while the others keep theirs.
"""

import stat
import subprocess
from pathlib import Path

from agents.context import changed_files
from agents.diff import Diff, DiffFile
from policies.safety import is_safe_relative

MAX_FILE_BYTES = 1_000_000
"""A larger file is not read (as the App reads no file GitHub will not inline)."""


def checkout_sources(diff: Diff, directory: Path) -> tuple[dict[str, str] | None, str]:
    """Each changed file's text in the checkout at `directory` (or the git work tree it is
    in), and what was read, naming the files refused; None and the reason when it is not at
    the diff's new side."""
    root = work_tree(directory)
    if root is None:
        return None, f"{directory} is not a git work tree"
    sources: dict[str, str] = {}
    refused: list[str] = []
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
            return None, f"{root} has no {diff_file.path}: it is not at the diff's new side"
        if (number := _first_other_line(diff_file, text)) is not None:
            return None, (
                f"{diff_file.path} line {number} in {root} is not the diff's: "
                "the checkout is not at the diff's new side"
            )
        sources[diff_file.path] = text
    read = f"code around the changes read from {root}"
    if refused:
        read += f"; not read, as not a regular file inside it: {', '.join(map(repr, refused))}"
    return sources, read


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


def work_tree(directory: Path) -> Path | None:
    """The root of the git work tree `directory` is in, resolved; None if it is in none."""
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git at all
        return None
    if done.returncode or not done.stdout.strip():
        return None
    # Resolved, as every path read is before it is compared with the root.
    return Path(done.stdout.strip()).resolve()
