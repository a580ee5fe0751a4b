"""What the verifier's tests look at around a run: the files under some directories, the
processes still running, a copy a runner may write in. The project the runs are on is
:mod:`tests.scenarios.shop`."""

import os
from pathlib import Path
from typing import Any

from app.verification.environments import ProjectPython
from app.verification.runner import Place, Runner


def snapshot(*directories: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry under `directories`: its mode, size and modification time."""
    seen: dict[str, tuple[int, int, int]] = {}
    for directory in directories:
        for path in [directory, *directory.rglob("*")]:
            status = path.lstat()
            seen[str(path)] = (status.st_mode, status.st_size, status.st_mtime_ns)
    return seen


def place(python: ProjectPython, work: Path, **fields: Any) -> Place:
    """A place whose runs have `python`'s environment (`python` is its), their copy at
    `work`, as a verifier makes it for a project."""
    return Place(work, read_only=python.shown(work), venv=python.venv(work), **fields)


def work_for(runner: Runner, tmp_path: Path) -> Path:
    """A directory in `tmp_path` owned as the runner wants a run's trees: one a run copies, or
    one it keeps its copy in; a run without a tree works beside it."""
    work = tmp_path / "copy"
    work.mkdir()
    if runner.owner is not None:
        os.chown(work, runner.owner, runner.owner)
    return work


def existing(*paths: Path) -> list[Path]:
    """Those of `paths` that exist, symlinks included (a directory Tiebreak's user may not
    look into hides nothing from this)."""
    return [path for path in paths if os.path.lexists(path)]


def processes_running(name: str) -> list[str]:
    """The processes whose command line names `name` (a test file's name is on every
    process a test runs, forks included)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if name.encode() in cmdline:
            found.append(proc.name + ": " + cmdline.replace(b"\0", b" ").decode(errors="replace"))
    return found
