"""`tiebreak`'s help pages, usage errors and quick commands start without the App's heavy
libraries.

Every command's `--help`, a usage error, `check-config` and `status` are run as a person runs
them, in a fresh interpreter, which then says which of the model, GitHub, web and queue
libraries it loaded: none of them for what reads only the options (each would cost a help page
a large part of a second), and what `status` needs to read Redis.
"""

import ast
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from app.cli.main import COMMANDS, main

HEAVY = (
    "anthropic",
    "githubkit",
    "fastapi",
    "uvicorn",
    "arq",
    "tree_sitter_language_pack",
    "pydantic",
)

# Runs the command as the `tiebreak` script does, and on the way out (after click's exit)
# prints the heavy libraries the process loaded.
_PROBE = f"""
import atexit, sys
atexit.register(
    lambda: print("loaded:", [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)
)
from app.cli import main
sys.argv = ["tiebreak", *sys.argv[1:]]
main()
"""


def tiebreak(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        env={"TIEBREAK_ENV_FILE": "", **(env or {})},
        timeout=60,
        check=False,
    )


STORE = ["arq", "tree_sitter_language_pack", "pydantic"]
"""What `status` loads: it reads Redis through the store, which is written for arq's client and
imports the debate's records (a hundredth of a second each, after redis itself)."""


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_commands_help_starts_without_the_apps_libraries(command: str) -> None:
    result = tiebreak(command, "--help")

    assert result.returncode == 0, result.stderr
    assert f"Usage: tiebreak {command}" in result.stdout
    assert "loaded: []" in result.stderr


def test_the_tiebreak_help_starts_without_the_apps_libraries() -> None:
    result = tiebreak("--help")

    assert result.returncode == 0, result.stderr
    assert "Usage: tiebreak" in result.stdout
    assert "loaded: []" in result.stderr


def test_a_usage_error_is_said_without_loading_the_apps_libraries() -> None:
    result = tiebreak("review", "--no-such-option")

    assert result.returncode == 2
    assert "No such option '--no-such-option'" in result.stderr
    assert "loaded: []" in result.stderr


def test_check_config_starts_without_the_apps_libraries(tmp_path: Path) -> None:
    config = tmp_path / ".github" / "tiebreak.yml"
    config.parent.mkdir()
    config.write_text("review_drafts: true\n")

    result = tiebreak("check-config", str(config))

    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{config}: OK\n"
    assert "loaded: ['pydantic']" in result.stderr


def test_status_starts_without_the_model_github_or_web_libraries(redis_url: str) -> None:
    result = tiebreak("status", "--once", env={"REDIS_URL": redis_url})

    assert result.returncode == 0, result.stderr
    assert "No live runs." in result.stdout
    assert f"loaded: {STORE}" in result.stderr


def test_the_help_lists_each_command_as_its_own_help_says() -> None:
    """`tiebreak --help` lists the commands without importing them: it reads as it would with
    every command loaded (their summaries and hidden flags written twice, held equal here)."""
    ctx = click.Context(main)
    commands: dict[str, click.Command] = {}
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None, name
        commands[name] = command
    loaded = click.Group(
        main.name,
        commands=commands,
        help=main.help,
        params=main.params,
        context_settings=main.context_settings,
    )

    assert CliRunner().invoke(main, ["--help"]).output == (
        CliRunner().invoke(loaded, ["--help"]).output
    )
    assert "config-docs" not in CliRunner().invoke(main, ["--help"]).output


def test_a_diff_refused_is_said_before_the_model_s_sdk_loads(tmp_path: Path) -> None:
    """The model's SDK (three quarters of a review's start) loads once the input is read and
    found good: a wrong input is said at once."""
    not_a_diff = tmp_path / "notes.txt"
    not_a_diff.write_text("remember the milk\n")

    result = tiebreak("review", str(not_a_diff), env={"ANTHROPIC_API_KEY": "sk-unused"})

    assert result.returncode == 2
    assert "not a unified diff" in result.stderr
    loaded = _loaded(result.stderr)
    assert "anthropic" not in loaded
    assert "githubkit" not in loaded


def test_a_dry_run_loads_no_model_sdk(tmp_path: Path) -> None:
    diff = tmp_path / "change.diff"
    diff.write_text(
        "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    )

    result = tiebreak("review", "--dry-run", str(diff))

    assert result.returncode == 0, result.stderr
    assert "a.py" in result.stdout
    loaded = _loaded(result.stderr)
    assert "anthropic" not in loaded
    assert "githubkit" not in loaded


def _loaded(stderr: str) -> list[str]:
    """The heavy libraries the probe says the process loaded."""
    (line,) = [line for line in stderr.splitlines() if line.startswith("loaded: ")]
    loaded: list[str] = ast.literal_eval(line.removeprefix("loaded: "))
    return loaded
