"""The git work tree a directory is in, found by git itself: light, for the commands that
start without the review's libraries (`check-config`) as for those that load them."""

import subprocess
from pathlib import Path


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
