"""The project's own Python, found in its checkout: its virtual environments by `pyvenv.cfg`
whatever git says of them, the installations they were made from (and only such), and what an
editable install of the checkout means for a run. Real environments, made by uv."""

import json
import os
import sys
from pathlib import Path

import pytest

from agents.verification import UNFIT, Evidence
from app.verification.environments import ProjectPython
from app.verification.local import LocalVerifier
from app.verification.sandbox import Bwrap
from app.verification.trees import copy_checkout
from tests.app.verification.conftest import needs_bwrap
from tests.kits.hostile import var_tmp
from tests.scenarios.environments import install_editable, with_pytest, without_pytest
from tests.scenarios.shop import Project, config, git, reproduction

BASE_PREFIX = Path(sys.base_prefix).resolve()
"""The installation the scenarios' environments are made from (Tiebreak's own, here)."""


def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "module.py").write_text("VALUE = 1\n")
    git(root, "init", "-q")
    return root


async def test_an_environment_that_ignores_itself_is_found_and_never_copied(
    tmp_path: Path,
) -> None:
    root = checkout(tmp_path)
    with_pytest(root)  # uv writes `.venv/.gitignore`: `*`
    assert (root / ".venv" / ".gitignore").read_text().strip() == "*"

    python = ProjectPython.of(root)
    await copy_checkout(root, tmp_path / "copy", leave_out=[root / ".venv"])

    assert python.environments == (".venv",)
    assert python.described == "the virtual environment .venv"
    assert python.venv(tmp_path / "seen") == tmp_path / "seen" / ".venv"
    assert (root / ".venv", tmp_path / "seen" / ".venv") in python.shown(tmp_path / "seen")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["module.py"]


async def test_an_environment_git_does_not_ignore_is_found_and_left_out_of_the_copy(
    tmp_path: Path,
) -> None:
    root = checkout(tmp_path)
    without_pytest(root, "env")
    (root / "env" / ".gitignore").unlink()

    python = ProjectPython.of(root)
    names = [root / name for name in python.environments]
    await copy_checkout(root, tmp_path / "copy", leave_out=names)

    assert python.environments == ("env",)
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["module.py"]


def test_the_run_has_venv_first_then_venv_then_any_other_by_name(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    for name in ("zenv", "venv", "aenv", ".venv"):
        without_pytest(root, name)
    (root / "not-an-environment").mkdir()
    (root / "not-an-environment" / "bin").mkdir()

    assert ProjectPython.of(root).environments == (".venv", "venv", "aenv", "zenv")


def test_without_an_environment_the_run_has_the_systems_python(tmp_path: Path) -> None:
    python = ProjectPython.of(checkout(tmp_path))

    assert python.environments == ()
    assert python.venv(tmp_path / "seen") is None
    assert python.shown(tmp_path / "seen") == ()
    assert python.described == "the system's Python (the checkout has no virtual environment)"


def test_the_installation_an_environment_was_made_from_is_shown_where_it_names_it(
    tmp_path: Path,
) -> None:
    root = checkout(tmp_path)
    without_pytest(root)

    python = ProjectPython.of(root)

    home = next(line for line in (root / ".venv" / "pyvenv.cfg").read_text().splitlines()
                if line.startswith("home"))  # fmt: skip
    named = Path(home.partition("=")[2].strip()).parent
    assert (named.resolve(), named) in python.installations
    assert all(where.resolve() == where for where, _ in python.installations)
    assert BASE_PREFIX in [where for where, _ in python.installations]


def test_an_editable_install_of_the_checkout_needs_the_copy_where_the_checkout_is(
    tmp_path: Path,
) -> None:
    root = checkout(tmp_path)
    (root / "src" / "ledger").mkdir(parents=True)
    (root / "src" / "ledger" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "ledger"\nversion = "1"\n\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    install_editable(with_pytest(root), root)

    python = ProjectPython.of(root)

    assert [(e.name, e.environment, e.source) for e in python.editables] == [
        ("ledger", ".venv", root.resolve())
    ]
    assert python.problem(seen_at_checkout=True) is None
    assert python.problem(seen_at_checkout=False) == (
        ".venv has ledger installed in editable mode from the checkout, so a run would import "
        "the checkout itself, not the copy it tests: only a sandbox shows the copy at the "
        "checkout's path (and not right under /); run the tests in the sandbox, or install "
        "ledger without -e"
    )
    assert python.notes == ()


def test_an_editable_install_from_outside_the_checkout_is_said_not_to_be_seen(
    tmp_path: Path,
) -> None:
    root = checkout(tmp_path)
    environment = without_pytest(root)
    elsewhere = tmp_path / "elsewhere"
    (site,) = environment.glob("lib/python*/site-packages")
    record = site / "helpers-2.0.dist-info"
    record.mkdir()
    url = {"url": elsewhere.as_uri(), "dir_info": {"editable": True}}
    (record / "direct_url.json").write_text(json.dumps(url))
    broken = site / "other-1.0.dist-info"
    broken.mkdir()
    (broken / "direct_url.json").write_text("{not json")

    python = ProjectPython.of(root)

    assert python.problem(seen_at_checkout=False) is None
    assert python.notes == (
        f".venv has helpers installed in editable mode from {elsewhere}, outside the "
        "checkout, which a run does not see: a test importing helpers fails",
    )


def test_an_installation_reached_through_a_link_is_shown_where_the_environment_names_it(
    tmp_path: Path,
) -> None:
    """As uv names its Pythons: by a link of the minor version to the installation."""
    root = checkout(tmp_path)
    link = tmp_path / "cpython-3-link"
    link.symlink_to(BASE_PREFIX, target_is_directory=True)
    environment = root / ".venv"
    (environment / "bin").mkdir(parents=True)
    (environment / "pyvenv.cfg").write_text(f"home = {link / 'bin'}\n")

    python = ProjectPython.of(root)

    assert python.installations == ((BASE_PREFIX, link),)
    assert python.problem(seen_at_checkout=True) is None


def test_an_environment_of_the_systems_python_needs_nothing_more_shown(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    for name, home in ((".venv", "/usr/bin"), ("venv", "/bin")):
        (root / name / "bin").mkdir(parents=True)
        (root / name / "pyvenv.cfg").write_text(f"home = {home}\n")
        (root / name / "bin" / "python").symlink_to(f"{home}/python3")

    python = ProjectPython.of(root)

    assert [where for where, _ in python.installations] == [Path("/usr")]
    assert python.problem(seen_at_checkout=True) is None


@pytest.mark.parametrize(
    ("named", "why"),
    [
        (Path(os.path.expanduser("~")), "is a home directory"),
        (Path("/var"), "is a top directory of the host"),
        (None, "holds no installation of Python (its own `bin/python…` and `lib/python…/os.py`)"),
    ],
)
def test_an_environment_naming_what_is_no_installation_is_refused_and_it_is_not_shown(
    tmp_path: Path, named: Path | None, why: str
) -> None:
    """Whatever made the environment: a test must not read what lies there."""
    root = checkout(tmp_path)
    keys = tmp_path / "keys"
    (keys / "bin").mkdir(parents=True)
    (keys / "id_ed25519").write_text("PRIVATE-KEY-OF-ALICE\n")
    prefix = named or keys
    environment = root / "tools"
    environment.mkdir()
    (environment / "pyvenv.cfg").write_text(f"home = {prefix / 'bin'}\n")

    python = ProjectPython.of(root)

    assert python.environments == ("tools",)
    assert python.installations == ()
    assert all(not where.is_relative_to(prefix) for where, _ in python.shown(tmp_path / "seen"))
    assert python.problem(seen_at_checkout=True) == (
        f"tools names {prefix.resolve()} as the Python it was made from (its pyvenv.cfg's home), "
        f"which {why}: a test is shown only a Python installation from outside the checkout; "
        "make the environment from one (`uv venv`, `python3 -m venv`)"
    )


@needs_bwrap
async def test_an_environment_committed_to_the_repository_is_refused_and_shows_nothing(
    sandbox: Bwrap, project: Project
) -> None:
    """The pull request's own `pyvenv.cfg` names a directory of the host: a test the tester
    writes reads nothing there, nor runs at all."""
    with var_tmp() as host:
        key = host / "alice" / "id_ed25519"
        (host / "alice" / "bin").mkdir(parents=True)
        key.write_text("PRIVATE-KEY-OF-ALICE\n")
        (project.checkout / "tools").mkdir()
        (project.checkout / "tools" / "pyvenv.cfg").write_text(f"home = {host}/alice/bin\n")
        git(project.checkout, "add", "tools")
        git(project.checkout, "commit", "-q", "-m", "Tools")
        reads = reproduction(
            "tests/test_reads.py",
            f"def test_it():\n    print(open({str(key)!r}).read())\n    assert False\n",
        )
        async with LocalVerifier(project.checkout, project.diff, config(), sandbox) as verifier:
            result = await verifier.reproduce(reads)

    assert "PRIVATE-KEY-OF-ALICE" not in result.output_tail
    assert result.verdict is Evidence.BROKEN
    assert result.reason == (
        f"{UNFIT}: tools is a virtual environment committed to the repository: tests run in an "
        "environment made on this machine, never in one the repository brings, which could "
        "name any directory of the host"
    )
