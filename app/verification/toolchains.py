"""The toolchains a run's command uses beside Python: Go's and Node's, and what they need to
run tests without a network.

Debian's (`golang-go`, `nodejs`) are in `/usr`, which every run sees, their programs on the
run's `PATH`. A toolchain installed elsewhere is found where Tiebreak's own `PATH` finds the
program the command names (`go`; `node`, and Node's `npm`, `npx`, `yarn` and `pnpm` beside
it): its installation (the directory holding its `bin`) is shown to the run read-only where
it is, unless the system's directories show it already (`/usr/local/go`), and its `bin` is put
on the run's `PATH` after the project's environment's.

What they are told of a run without a network is the run's environment's
(:func:`app.verification.runner.environment`).
"""

import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from app.verification.runner import SYSTEM_PATH

PROGRAMS = {"go": "go", "gofmt": "go", "node": "node", "npm": "node", "npx": "node"}
PROGRAMS |= {"yarn": "node", "pnpm": "node"}
"""A command's program, and the toolchain's program it needs found."""
SHOWN = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Where every run sees the host's files already."""


@dataclass(frozen=True)
class Toolchains:
    """The toolchains a command needs from outside the system's directories."""

    shown: tuple[Path, ...] = ()
    """Installations a run sees read-only where they are."""
    path: tuple[Path, ...] = ()
    """Their `bin` directories, on the run's `PATH`."""

    @classmethod
    def of(cls, command: str, search: str | None = None) -> "Toolchains":
        """What `command` needs, its programs looked for on `search` (default: Tiebreak's
        `PATH`)."""
        shown: dict[Path, None] = {}
        path: dict[Path, None] = {}
        for program in _programs(command):
            found = shutil.which(program, path=search)
            if found is None:
                continue  # the run says it is not found, as the pre-flight does
            real = Path(found).resolve()
            if str(real.parent) in SYSTEM_PATH:
                continue
            installation = real.parent.parent
            path[real.parent] = None
            if not any(installation.is_relative_to(p) for p in SHOWN):
                shown[installation] = None
        return cls(tuple(shown), tuple(path))

    def read_only(self) -> tuple[tuple[Path, Path], ...]:
        """What a run is shown of them: each installation where it is."""
        return tuple((where, where) for where in self.shown)


def _programs(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    named = [PROGRAMS.get(os.path.basename(word)) for word in words]
    return list(dict.fromkeys(p for p in named if p is not None))
