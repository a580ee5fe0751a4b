"""The Python environments of the scenarios' small projects, which findings' tests run on,
made as a project's people make theirs, and without the network.

A project's `.venv` is made by uv from Tiebreak's own lock: `uv sync --frozen --offline` of
its `test-project` group (pytest alone) into the project's directory. `.ci/run`'s `uv sync`
has cached every file that lock names, so this needs nothing more on a fresh machine, where
`uv pip install --offline pytest` would fail: `uv sync` caches the lock's wheels, not the
index pages and metadata `uv pip` resolves with. An editable install of the project itself is
built by uv with hatchling, which that same `uv sync` cached to build Tiebreak.

Each such `.venv` holds its modules' bytecode, as `uv sync --compile-bytecode` leaves an
environment, and as a project's own is once its tests have run: compiled once per test process
(:func:`_compiled`) and linked into each new environment beside the same sources (uv links
both from its cache, so their times and sizes match what each bytecode file records). A
finding's test runs with its environment read-only: without the bytecode, each run would
compile pytest again, a fifth of a second of its time.

Tiebreak itself is installed the way `uv tool install .` installs it (:func:`tool_install`):
an environment of its own, its runtime dependencies only (no pytest), not editable.
"""

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

TIEBREAK = Path(__file__).resolve().parents[2]
"""Tiebreak's own checkout, whose lock the environments are made from."""
GROUP = "test-project"


def uv() -> str:
    """The uv that runs the tests (`uv run` names itself in `UV`), else the PATH's."""
    found = os.environ.get("UV") or shutil.which("uv")
    if found is None:
        pytest.fail("uv is not found: run the tests with `python3 -m uv run --frozen pytest`")
    return found


def with_pytest(project: Path, name: str = ".venv") -> Path:
    """`project/name` made a virtual environment holding pytest, its bytecode compiled; its
    path."""
    environment = project / name
    _sync(environment, "--only-group", GROUP, "--no-install-project")
    compiled, modules = _compiled()
    for module in modules:
        (environment / module.parent).mkdir(exist_ok=True)
        try:
            os.link(compiled / module, environment / module)
        except OSError:  # another file system than the temporary directory's
            shutil.copy2(compiled / module, environment / module)
    return environment


def without_pytest(project: Path, name: str = ".venv") -> Path:
    """`project/name` made a virtual environment holding nothing; its path."""
    environment = project / name
    _uv("venv", "--quiet", "--python", sys.executable, str(environment))
    return environment


def install_editable(environment: Path, project: Path) -> None:
    """`project` installed in `environment` in editable mode, as `pip install -e` does."""
    python = str(environment / "bin" / "python")
    _uv("pip", "install", "--quiet", "--offline", "--no-deps", "--python", python,
        "-e", str(project))  # fmt: skip


def tool_install(directory: Path) -> Path:
    """Tiebreak installed in `directory` (new) as `uv tool install .` installs it; the path of
    its `tiebreak` command."""
    _sync(directory, "--no-dev", "--no-editable")
    return directory / "bin" / "tiebreak"


@functools.cache
def _compiled() -> tuple[Path, tuple[Path, ...]]:
    """An environment made as :func:`with_pytest` makes one, its bytecode compiled by uv, and
    where each bytecode file is in it; made once per process, removed as it exits."""
    directory = Path(tempfile.mkdtemp(prefix="tiebreak-test-bytecode-"))
    atexit.register(_remove, directory, os.getpid())
    environment = directory / ".venv"
    _sync(environment, "--only-group", GROUP, "--no-install-project", "--compile-bytecode")
    modules = sorted(p.relative_to(environment) for p in environment.rglob("__pycache__/*.pyc"))
    return environment, tuple(modules)


def _remove(directory: Path, owner: int) -> None:
    """`directory` removed by the process that made it (not by a child forked from it)."""
    if os.getpid() == owner:
        shutil.rmtree(directory, ignore_errors=True)


def _sync(environment: Path, *options: str) -> None:
    _uv(
        "sync", "--quiet", "--frozen", "--offline", "--project", str(TIEBREAK),
        "--python", sys.executable, *options,
        env={"UV_PROJECT_ENVIRONMENT": str(environment)},
    )  # fmt: skip


def _uv(*args: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        [uv(), *args],
        env={**os.environ, "UV_PYTHON_DOWNLOADS": "never", **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        pytest.fail(f"uv {args[0]} failed: {done.stderr.strip()}")
