"""The options of the findings' tests that `tiebreak review` and `tiebreak eval` share, defined
with click alone: a command's help shows them without loading what runs the tests
(:mod:`app.cli.verifying`)."""

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from policies.defaults import CONFIG_PATH

F = TypeVar("F", bound=Callable[..., object])

ENVIRONMENT_HELP = (
    "Tests run with the project's own Python: its virtual environment (.venv, venv, or any "
    "top directory holding a pyvenv.cfg), else the system's python3; never Tiebreak's. "
    "Install the test runner and the project's test dependencies there first (uv sync; pip "
    "install -e '.[test]'): a src layout is found through its editable install, which the "
    "sandbox shows as the copy under test. --verify-setup runs in each tree, without the "
    "network."
)


def testing_options(where: str) -> Callable[[F], F]:
    """`--verify`, `--verify-setup`, `--no-sandbox` and `--no-memory-limit`, the tests run
    `where`."""

    def decorate(command: F) -> F:
        options = [
            click.option(
                "--verify",
                "verify_command",
                metavar="COMMAND",
                help=f"Run the tester's tests with COMMAND ({{test}} is the test's path), {where}, "
                "in a sandbox: a test that fails only after the change proves its finding. "
                'Example: "python -m pytest -x -q {test}". ' + ENVIRONMENT_HELP,
            ),
            click.option(
                "--verify-setup",
                metavar="COMMAND",
                help="Run COMMAND once in each tree before its tests (no network).",
            ),
            click.option(
                "--no-sandbox",
                is_flag=True,
                help="Run the tests without isolation, as you. Only for tests you would run "
                "yourself.",
            ),
            click.option(
                "--no-memory-limit",
                is_flag=True,
                help="Run the tests in the sandbox even where no cgroup can hold each run to "
                "verify.memory_mb in all (each process is still held to it alone).",
            ),
        ]
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def verify_options(command: F) -> F:
    """`tiebreak review`'s: `--verify`, `--verify-setup`, `--no-sandbox`, `--no-memory-limit`
    and `--base`."""
    command = click.option(
        "--base",
        metavar="REF",
        help="The commit the diff is against (default: the checkout with the diff "
        f"reversed); its {CONFIG_PATH} may name the test command, and the messages of the "
        "commits since it say what the change does (unless --description).",
    )(command)
    return testing_options("at the base and at the checkout")(command)


def eval_verify_options(command: F) -> F:
    """`tiebreak eval`'s: `--verify`, `--verify-setup`, `--no-sandbox`, `--no-memory-limit`
    and `--checkout`."""
    command = click.option(
        "--checkout",
        type=click.Path(file_okay=False, exists=True, path_type=Path),
        metavar="DIR",
        help="A clone holding the cases' commits: each case is checked out from it into a "
        "throw-away worktree, whose other files the agents read, and where --verify runs the "
        "findings' tests.",
    )(command)
    return testing_options("at each case's base and introducing commits")(command)
