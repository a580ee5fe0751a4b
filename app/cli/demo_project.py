"""The pull request `tiebreak demo` reviews, shipped with Tiebreak in `app/demo/`: a small
project's files at the head, the diff that brought them there and what the pull request says
it does; and, for the findings' tests, the project as a git work tree on disk.

The project's base is never shipped: as with `tiebreak review` of a diff, the findings'
tests run at the base made from the head with the diff reversed.
"""

import hashlib
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from agents.diff import Diff
from policies.errors import TiebreakError

PROJECT_FILES = ("pagination.py",)
"""The project's files, at the pull request's head."""
REPOSITORY = "example/pagination"
NUMBER = 1


class NoWorkTree(TiebreakError):
    """The project could not be made a git work tree (no git here): `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class DemoPull:
    """The bundled pull request."""

    title: str
    body: str
    diff: Diff
    files: dict[str, str]
    """The project's files at the head, by path."""

    @property
    def head_sha(self) -> str:
        """A commit id for the head, as a pull request has one: the diff's digest."""
        return hashlib.sha1(self.diff.text.encode(), usedforsecurity=False).hexdigest()


def bundled() -> DemoPull:
    """The pull request shipped in `app/demo/`."""
    shipped = resources.files("app").joinpath("demo")
    title, _, body = shipped.joinpath("pull_request.md").read_text("utf-8").partition("\n")
    return DemoPull(
        title=title.strip(),
        body=body.strip(),
        diff=Diff.parse(shipped.joinpath("change.diff").read_text("utf-8")),
        files={name: shipped.joinpath(name).read_text("utf-8") for name in PROJECT_FILES},
    )


def work_tree(pull: DemoPull, directory: Path) -> Path:
    """The project at its head in `directory` (new), made a git work tree, as the findings'
    tests take a checkout: nothing is committed, so no identity of the person is needed."""
    directory.mkdir()
    for name, text in pull.files.items():
        (directory / name).write_text(text, encoding="utf-8")
    try:
        done = subprocess.run(
            ["git", "init", "-q", str(directory)], capture_output=True, text=True, check=False
        )
    except OSError as exc:
        raise NoWorkTree(f"git cannot run here: {exc.strerror or exc}") from exc
    if done.returncode:
        raise NoWorkTree(f"git init failed: {done.stderr.strip()}")
    return directory.resolve()
