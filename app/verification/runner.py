"""What every way of running a finding's test shares: where a run happens (:class:`Place`),
its limits (:class:`Limits`), its environment, and the one method a runner has."""

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from agents.verification import Run
from policies.verification import VerifyConfig

MB = 1024 * 1024
FILE_MB = 1_024
"""Megabytes one file written by a run may have (RLIMIT_FSIZE): no single file fills the
disk."""
OPEN_FILES = 1_024
"""Files one process of a run may have open at once (RLIMIT_NOFILE)."""
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
LANG = "C.UTF-8"

_T = TypeVar("_T")


@dataclass(frozen=True)
class Limits:
    """How long, how large and how many: one run's bounds."""

    timeout_s: float = 60.0
    memory_mb: int = 1_024
    """Address space of each process (RLIMIT_AS), and the size of a sandbox's `/tmp` and
    `/dev/shm`, which live in memory."""
    processes: int = 64
    """Processes (and threads) at once (RLIMIT_NPROC), counted per sandbox."""
    file_mb: int = FILE_MB
    open_files: int = OPEN_FILES

    @classmethod
    def of(cls, config: VerifyConfig) -> "Limits":
        return cls(
            timeout_s=config.timeout_s, memory_mb=config.memory_mb, processes=config.processes
        )

    def prlimit(self, *, processes: bool) -> list[str]:
        """util-linux's `prlimit`, setting soft and hard limits for the command after `--`
        (`processes`: RLIMIT_NPROC too)."""
        limits = [
            f"--as={self.memory_mb * MB}",
            f"--fsize={self.file_mb * MB}",
            "--core=0",
            f"--nofile={self.open_files}",
        ]
        if processes:
            limits.append(f"--nproc={self.processes}")
        return ["prlimit", *limits, "--"]


@dataclass(frozen=True)
class Place:
    """Where one run happens and what it sees of the host."""

    work: Path
    """The run's own copy of a tree: its working directory, the only place it may write to
    that outlives it."""
    read_only: tuple[tuple[Path, Path], ...] = ()
    """Directories the command needs, as (where they are, where the run sees them): the
    checkout's environments (`.venv`), seen inside the copy."""
    hidden: tuple[Path, ...] = ()
    """Directories and files the run must not see: the checkout under review, the other
    trees of the review, whatever holds secrets."""


class Runner(Protocol):
    """Runs one shell command in one place, within limits."""

    @property
    def owner(self) -> int | None:
        """The user a run's copy must belong to, or None: the one Tiebreak runs as."""
        ...

    async def run(self, command: str, place: Place, limits: Limits) -> Run: ...


def interpreters() -> tuple[Path, ...]:
    """The Python Tiebreak runs on: its installation and its virtual environment."""
    return _unique(Path(p).resolve() for p in (sys.base_prefix, sys.prefix))


def environment(home: Path) -> dict[str, str]:
    """All a run's command inherits: Tiebreak's interpreter first on the PATH (so `python`
    is it), a home that is also its temporary directory, a language. Nothing else of
    Tiebreak's environment, whose secrets (`ANTHROPIC_API_KEY`, `GITHUB_PRIVATE_KEY`,
    `AWS_*`...) no test may read."""
    path = [str(prefix / "bin") for prefix in reversed(interpreters())]
    return {
        "PATH": ":".join(_unique([*path, *SYSTEM_PATH])),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": LANG,
    }


def _unique(items: Iterable[_T]) -> tuple[_T, ...]:
    return tuple(dict.fromkeys(items))
