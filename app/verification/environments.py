"""The project's own Python, which its tests run on: never Tiebreak's.

A checkout's virtual environments are found by what makes one, a `pyvenv.cfg`, in its top
directories: `.venv`, then `venv`, then any other by name. Not by whether git ignores them:
`uv venv` ignores its environment from inside it (a `.gitignore` of `*`), which git does not
report for the directory itself. None is copied into a run's tree: each is shown read-only
where it is in the copy, with the installation it was made from (`home` in its `pyvenv.cfg`,
and where its `python` leads) where it is on the host. The first is the run's: its `bin`
first on the `PATH`, as activating it would. Without one, a run has the system's Python:
what `/usr/local/bin`, `/usr/bin` and `/bin` hold, and nothing the host's `PATH` adds there
(Tiebreak's own environment, a version manager's shims that need a home the sandbox does not
show).

An editable install (`direct_url.json` saying `editable`, PEP 610) of a directory inside the
checkout names the checkout's path (in a `.pth` file, a finder, a script's `#!` line): a
sandbox's run sees its copy at that path, and so imports the copy. A run that sees its copy
elsewhere (without a sandbox) would import the checkout itself, whatever the run changed: that
is refused (:meth:`ProjectPython.problem`). An editable install of a directory outside the
checkout is not shown to a run at all, which is said (:attr:`ProjectPython.notes`).

What an environment names of the host is only a file's word, and the checkout is the change's:
a test must not read a directory because a `pyvenv.cfg` names it. So an environment git tracks
(one the repository brings, whose `home` could name any directory) is refused whole, and of
an environment made on this machine, what it names outside the checkout is shown only if it is
an installation of Python, read-only: a directory every run sees already (`/usr`), or one that
holds its own Python (a `bin/python…` that is an executable file inside it) and its standard
library (`lib/python…/os.py`), as pyenv's, uv's and conda's do, and is neither a top directory
of the host (`/root`, `/var`) nor a home directory. Only that installation's own tree is
shown, never what holds it. Anything else it names refuses the environment, saying what and
why (:meth:`ProjectPython.problem`): runs that did not see it would fail anyway, less clearly.
`/` is never shown: a `home` right under it (`/bin`) is a directory every run sees.
"""

import json
import os
import pwd
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from app.verification.toolchains import SHOWN
from app.verification.trees import GIT_TIMEOUT_S

FIRST = (".venv", "venv")
"""The names an environment is looked for under first, in this order."""
CONFIG = "pyvenv.cfg"
PYTHON = re.compile(r"python[\d.]*")
"""The names of an installation's Python in its `bin` (PyPy's too: `python` leads to `pypy`)."""


@dataclass(frozen=True)
class Editable:
    """A distribution installed in an environment in editable mode, from `source`."""

    name: str
    environment: str
    source: Path


@dataclass(frozen=True)
class ProjectPython:
    """The Python environments of the project at `checkout`, and what a run needs of the
    host to use them."""

    checkout: Path
    environments: tuple[str, ...] = ()
    """The top directories holding a `pyvenv.cfg`, the run's first."""
    installations: tuple[tuple[Path, Path], ...] = ()
    """The installations they were made from: (where it is, the path the environment names)."""
    editables: tuple[Editable, ...] = ()
    refusals: tuple[str, ...] = ()
    """Why an environment may not be used, each in words: what it names is not shown."""

    @classmethod
    def of(cls, checkout: Path) -> "ProjectPython":
        root = checkout.resolve()
        names = _environments(root)
        committed = _committed(root, names)
        refusals = [
            f"{n} is a virtual environment committed to the repository: tests run in an "
            "environment made on this machine, never in one the repository brings, which "
            "could name any directory of the host"
            for n in committed
        ]
        made = [n for n in names if n not in committed]
        installations: dict[tuple[Path, Path], None] = {}
        for name in made:
            for where, named, by in _installations(root / name, root):
                if (why := _not_installation(where)) is None:
                    installations[where, named] = None
                else:
                    refusals.append(
                        f"{name} names {where} as the Python it was made from ({by}), which "
                        f"{why}: a test is shown only a Python installation from outside the "
                        "checkout; make the environment from one (`uv venv`, `python3 -m venv`)"
                    )
        editables = tuple(e for n in made for e in _editables(root / n, n))
        return cls(root, names, tuple(installations), editables, tuple(refusals))

    @property
    def described(self) -> str:
        """Where a run's Python comes from, in words."""
        if not self.environments:
            return "the system's Python (the checkout has no virtual environment)"
        return f"the virtual environment {self.environments[0]}"

    def shown(self, work: Path) -> tuple[tuple[Path, Path], ...]:
        """What a run whose copy is at `work` is shown read-only, as (where it is, where the
        run sees it): each environment inside the copy, each installation where it is named."""
        inside = [(self.checkout / name, work / name) for name in self.environments]
        return (*inside, *self.installations)

    def venv(self, work: Path) -> Path | None:
        """The run's environment, where a run whose copy is at `work` sees it."""
        return work / self.environments[0] if self.environments else None

    def problem(self, seen_at_checkout: bool) -> str | None:
        """Why runs cannot use this environment, or None: one refused, or, when runs do not
        see their copy at the checkout's path (`seen_at_checkout` off), an editable install of
        the checkout."""
        if self.refusals:
            return self.refusals[0]
        if seen_at_checkout:
            return None
        for editable in self.editables:
            if editable.source.is_relative_to(self.checkout):
                return (
                    f"{editable.environment} has {editable.name} installed in editable mode "
                    f"from the checkout, so a run would import the checkout itself, not the "
                    f"copy it tests: only a sandbox shows the copy at the checkout's path "
                    f"(and not right under /); run the tests in the sandbox, or install "
                    f"{editable.name} without -e"
                )
        return None

    @property
    def notes(self) -> tuple[str, ...]:
        """What a run will not see of the environment, in words."""
        return tuple(
            f"{e.environment} has {e.name} installed in editable mode from {e.source}, outside "
            f"the checkout, which a run does not see: a test importing {e.name} fails"
            for e in self.editables
            if not e.source.is_relative_to(self.checkout)
        )


def _environments(root: Path) -> tuple[str, ...]:
    """The top directories of `root` holding a `pyvenv.cfg`, :data:`FIRST` first."""
    try:
        names = sorted(entry.name for entry in os.scandir(root) if entry.is_dir())
    except OSError:
        return ()
    found = [n for n in names if n != ".git" and (root / n / CONFIG).is_file()]
    return tuple(sorted(found, key=lambda n: (FIRST.index(n) if n in FIRST else len(FIRST), n)))


def _committed(root: Path, names: tuple[str, ...]) -> tuple[str, ...]:
    """Those of `names` (top directories of `root`) holding what git tracks there: the
    repository's, not made on this machine. None where git cannot say (no repository: nothing
    of it is the repository's)."""
    if not names:
        return ()
    try:
        listed = subprocess.run(
            ["git", "--literal-pathspecs", "-C", str(root), "ls-files", "-z", "--", *names],
            capture_output=True,
            check=False,
            timeout=GIT_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if listed.returncode:
        return ()
    paths = listed.stdout.decode("utf-8", "surrogateescape").split("\0")
    tracked = {PurePosixPath(path).parts[0] for path in paths if path}
    return tuple(n for n in names if n in tracked)


def _installations(environment: Path, root: Path) -> list[tuple[Path, Path, str]]:
    """What `environment` names as the installation it was made from, each a directory
    holding `bin` (a prefix): (where it is, the path the environment names, what names it),
    from its `home` (in `pyvenv.cfg`) and where its `python` leads. None inside the checkout
    (the copy shows that), nor `/` (see the module's docstring)."""
    named: list[tuple[Path, str]] = []
    if (home := _home(environment)) is not None:
        named.append((home.parent, f"its {CONFIG}'s home"))
    python = environment / "bin" / "python"
    if python.is_symlink():
        target = Path(os.path.join(python.parent, os.readlink(python)))
        named.append((Path(os.path.normpath(target)).parent.parent, "where its bin/python leads"))
        named.append((python.resolve().parent.parent, "where its bin/python leads"))
    found = []
    for prefix, by in named:
        where = prefix.resolve()
        if where != Path("/") and where.is_dir() and not where.is_relative_to(root):
            found.append((where, prefix, by))
    return found


def _not_installation(where: Path) -> str | None:
    """Why the directory `where` (real) may not be shown to a run as an installation of
    Python, in words, or None."""
    if any(where.is_relative_to(shown) for shown in SHOWN):
        return None  # every run sees it already
    if where in _homes():
        return "is a home directory"
    if len(where.parts) < 3:
        return "is a top directory of the host"
    named = [
        path.resolve() for path in (where / "bin").glob("python*") if PYTHON.fullmatch(path.name)
    ]
    python = any(
        path.is_relative_to(where) and path.is_file() and os.access(path, os.X_OK) for path in named
    )
    if not python or not any(where.glob("lib*/*/os.py")):
        return "holds no installation of Python (its own `bin/python…` and `lib/python…/os.py`)"
    return None


def _homes() -> set[Path]:
    """The users' home directories, real: the current one's, and each the system knows."""
    homes = [user.pw_dir for user in pwd.getpwall()] + [os.path.expanduser("~")]
    return {Path(home).resolve() for home in homes if os.path.isabs(home)}


def _home(environment: Path) -> Path | None:
    try:
        config = (environment / CONFIG).read_text(errors="replace")
    except OSError:
        return None
    for line in config.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(value.strip())
            return home if home.is_absolute() else None
    return None


def _editables(environment: Path, name: str) -> list[Editable]:
    """The distributions installed in `environment` in editable mode, by their
    `direct_url.json` (PEP 610)."""
    found = []
    for record in sorted(environment.glob("lib/python*/site-packages/*.dist-info/direct_url.json")):
        try:
            url = json.loads(record.read_text(errors="replace"))
        except (OSError, ValueError):
            continue
        if not isinstance(url, dict) or not isinstance(url.get("dir_info"), dict):
            continue
        address = url.get("url")
        if url["dir_info"].get("editable") is not True or not isinstance(address, str):
            continue
        parts = urlsplit(address)
        if parts.scheme != "file":
            continue
        distribution = record.parent.name.removesuffix(".dist-info").rpartition("-")[0]
        source = Path(unquote(parts.path)).resolve()
        found.append(Editable(distribution or record.parent.name, name, source))
    return found
