"""What every way of running a finding's test shares: where a run happens (:class:`Place`),
its limits (:class:`Limits`), its environment, and what a runner does.

The Python a run's command finds first is the project's (:mod:`app.verification.environments`),
never Tiebreak's: its virtual environment's `bin` first on the `PATH` (:func:`environment`),
then the toolchains' it needs from outside the system (:mod:`app.verification.toolchains`),
then the system's directories alone.

A run has no network and a home of its own (in the sandbox, in memory and bounded): Go keeps
its build cache and module path there and never downloads a module or a toolchain
(`GOPROXY=off`, `GOTOOLCHAIN=local`, `GOSUMDB=off`; `GOFLAGS=-mod=mod`, so that a go.sum to
bring up to date is no failure of its own), and npm works offline. A stdlib-only Go module
runs its tests; one whose tests need a module from the network fails to build, which the
reading of its output says (:mod:`agents.failures.go_test`)."""

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from agents.verification import Run
from policies.verify import VerifyConfig

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
    """Memory of the whole run, its files in memory included: its cgroup's limit. Where no
    cgroup holds the run, the address space of each of its processes (RLIMIT_AS) instead,
    which is no measure of memory where a cgroup can be had: runtimes reserve far more than
    they use (the go tool ≈0.8–1.3 GB for 100 MB, and more with each thread it starts)."""
    disk_mb: int = 512
    """The size of each file system a sandbox's run may write: its copy of the tree, `/tmp`
    and `/dev/shm`, all in memory."""
    processes: int = 64
    """Processes (and threads) at once (RLIMIT_NPROC, counted per sandbox; and its cgroup's
    limit, where it has one)."""
    file_mb: int = FILE_MB
    open_files: int = OPEN_FILES

    @classmethod
    def of(cls, config: VerifyConfig) -> "Limits":
        return cls(
            timeout_s=config.timeout_s,
            memory_mb=config.memory_mb,
            disk_mb=config.disk_mb,
            processes=config.processes,
        )

    def prlimit(self, *, processes: bool, address_space: bool) -> list[str]:
        """util-linux's `prlimit`, setting soft and hard limits for the command after `--`
        (`processes`: RLIMIT_NPROC too; `address_space`: RLIMIT_AS too, where no cgroup holds
        the run's memory)."""
        limits = [f"--fsize={self.file_mb * MB}", "--core=0", f"--nofile={self.open_files}"]
        if address_space:
            limits.append(f"--as={self.memory_mb * MB}")
        if processes:
            limits.append(f"--nproc={self.processes}")
        return ["prlimit", *limits, "--"]


@dataclass(frozen=True)
class Place:
    """Where one run happens and what it sees of the host.

    A run works in a tree of its own as it starts: `tree` (or empty) with the files of
    `additions` written over it, in a layer over `tree` (the sandbox's) or a copy of it. What
    the run wrote is gone when it ends, unless `keep` asks for a copy of it."""

    work: Path
    """Where the run sees its copy: its working directory. A sandbox's run sees it there
    whatever the host has at that path; a run without a sandbox works in a directory of
    its own beside it."""
    tree: Path | None = None
    """The tree the copy is made of (None: the copy starts empty). The run cannot change it."""
    additions: Path | None = None
    """Files written over the copy before the command (a test, patched files), at the same
    paths; None: none."""
    keep: Path | None = None
    """An empty directory the copy is kept in if the command passes (a tree's setup); None:
    the copy is dropped."""
    read_only: tuple[tuple[Path, Path], ...] = ()
    """Directories the command needs, as (where they are, where the run sees them): the
    checkout's environments (`.venv`), seen inside the copy, and the installations they were
    made from, where the environments name them."""
    venv: Path | None = None
    """The virtual environment the run's Python is, where the run sees it (inside its copy):
    its `bin` first on the PATH, as activating it would. None: the system's Python."""
    tools: tuple[Path, ...] = ()
    """The `bin` directories of the toolchains the command needs from outside the system's
    directories (Go's, Node's), on the PATH after the environment's."""
    hidden: tuple[Path, ...] = ()
    """Directories and files the run must not see even where they lie inside what it is
    shown: the checkout under review, the review's trees, Tiebreak's data and secrets."""


class Runner(Protocol):
    """Runs one shell command in one place, within limits."""

    @property
    def owner(self) -> int | None:
        """The user a run's copy must belong to, or None: the one Tiebreak runs as."""
        ...

    def sees_copy_at(self, path: Path) -> bool:
        """Whether a run can see its copy at `path`, whatever the host has there (so that
        what names the checkout's path, an editable install, leads to the copy)."""
        ...

    async def run(self, command: str, place: Place, limits: Limits) -> Run: ...


def environment(home: Path, venv: Path | None, tools: Iterable[Path] = ()) -> dict[str, str]:
    """All a run's command inherits: the project's virtual environment `venv` (as the run
    sees it) first on the PATH, as activating it would, then the toolchains' `tools`, then
    the system's directories; a home that is also its temporary directory; a language; what
    Go and npm are told of a run without a network (see the module's docstring). Nothing of
    Tiebreak's environment, neither its Python nor its secrets (`ANTHROPIC_API_KEY`,
    `GITHUB_PRIVATE_KEY`, `AWS_*`...), which no test may read."""
    path = [str(venv / "bin")] if venv is not None else []
    activated = {"VIRTUAL_ENV": str(venv)} if venv is not None else {}
    return {
        "PATH": ":".join(_unique([*path, *map(str, tools), *SYSTEM_PATH])),
        **activated,
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": LANG,
        **offline(home),
    }


def offline(home: Path) -> dict[str, str]:
    """What Go and npm are told in a run whose home is `home`: their caches there, and that
    there is no network."""
    return {
        "GOCACHE": str(home / ".cache" / "go-build"),
        "GOPATH": str(home / "go"),
        "GOPROXY": "off",
        "GOSUMDB": "off",
        "GOTOOLCHAIN": "local",
        "GOTELEMETRY": "off",
        "GOFLAGS": "-mod=mod",
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        "NPM_CONFIG_OFFLINE": "true",
    }


def _unique(items: Iterable[_T]) -> tuple[_T, ...]:
    return tuple(dict.fromkeys(items))
