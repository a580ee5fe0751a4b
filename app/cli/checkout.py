"""The code around a diff's changes for `tiebreak review`, read from a local checkout.

The checkout must be at the diff's new side: every line the diff shows there must be in its
file at that line, or the context would show the agents code other than the code under
review. A directory that is not such a checkout gives no context, and says why.
"""

import subprocess
from pathlib import Path

from agents.context import changed_files
from agents.diff import Diff

MAX_FILE_BYTES = 1_000_000
"""A larger file is not read (as the App reads no file GitHub will not inline)."""


def checkout_sources(diff: Diff, directory: Path) -> tuple[dict[str, str] | None, str]:
    """Each changed file's text in the checkout at `directory` (or the git work tree it is
    in), and what was read; None and the reason when it is not at the diff's new side."""
    root = _work_tree(directory)
    if root is None:
        return None, f"{directory} is not a git work tree"
    sources: dict[str, str] = {}
    for diff_file in changed_files(diff):
        path = root / diff_file.path
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None, f"{root} has no {diff_file.path}: it is not at the diff's new side"
        lines = text.splitlines()
        for hunk in diff_file.hunks:
            for number, line in hunk.lines.items():
                if number > len(lines) or lines[number - 1].rstrip("\r") != line:
                    return None, (
                        f"{diff_file.path} line {number} in {root} is not the diff's: "
                        "the checkout is not at the diff's new side"
                    )
        sources[diff_file.path] = text
    return sources, f"code around the changes read from {root}"


def _work_tree(directory: Path) -> Path | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git at all
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None
