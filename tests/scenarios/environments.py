"""The Python environments of the scenarios' small projects, which findings' tests run on,
made as a project's people make theirs, and without the network.

A project's `.venv` is made by uv from Tiebreak's own lock: `uv sync --frozen --offline` of
its `test-project` group (pytest alone) into the project's directory. `.ci/run`'s `uv sync`
has cached every file that lock names, so this needs nothing more on a fresh machine, where
`uv pip install --offline pytest` would fail: `uv sync` caches the lock's wheels, not the
index pages and metadata `uv pip` resolves with. An editable install of the project itself is
built by uv with hatchling, which that same `uv sync` cached to build Tiebreak.

Tiebreak itself is installed the way `uv tool install .` installs it (:func:`tool_install`):
an environment of its own, its runtime dependencies only (no pytest), not editable.
"""

import os
import shutil
import subprocess
import sys
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
    """`project/name` made a virtual environment holding pytest; its path."""
    environment = project / name
    _sync(environment, "--only-group", GROUP, "--no-install-project")
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
