"""The start-up benchmark runs each quick command as a process and prints its median time
against `python -c "import click"` (printed, not judged: no timing is asserted here)."""

import re
import subprocess
from pathlib import Path

import pytest

from app.cli.main import COMMANDS
from bench import startup as bench
from tests.fakes.messages_api import FakeMessagesAPI

TIEBREAK = [
    "tiebreak --help",
    *(f"tiebreak {name} --help" for name in sorted(COMMANDS)),
    "tiebreak review --no-such-option",
    "tiebreak check-config FILE",
    "tiebreak status --once (no Redis)",
]


def test_the_benchmark_prints_each_commands_time_against_the_baseline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Slow (9–17 s): some forty fresh processes, every command of Tiebreak's twice (this
    checkout, and `--before` it again), and two reviews that load the model's SDK to reach
    the fake Messages API."""
    bench.main(["--runs", "1", "--before", str(bench.ROOT)])

    rows = re.findall(r"^(.+?) +\d+ +(\d+\.\d)$", capsys.readouterr().out, re.M)
    before = [f"before: {name}" for name in TIEBREAK]
    first = [bench.FIRST_REQUEST, f"before: {bench.FIRST_REQUEST}"]
    assert [name for name, _ in rows] == [bench.BASELINE, bench.SDK, *TIEBREAK, *before, *first]
    assert rows[0][1] == "1.0"


def test_each_command_measured_starts_and_does_its_work(tmp_path: Path) -> None:
    config = tmp_path / ".github" / "tiebreak.yml"
    config.parent.mkdir()
    config.write_text("review_drafts: true\n", encoding="utf-8")
    env = bench.environment()

    results = {
        name: subprocess.run(args, cwd=bench.ROOT, env=env, capture_output=True, text=True)
        for name, args in bench.commands(config).items()
    }

    assert "Usage: tiebreak" in results["tiebreak --help"].stdout
    assert results["tiebreak check-config FILE"].stdout == f"{config}: OK\n"
    assert all("Usage: tiebreak" in results[f"tiebreak {name} --help"].stdout for name in COMMANDS)
    assert results["tiebreak review --no-such-option"].returncode == 2
    status = results["tiebreak status --once (no Redis)"]
    assert (status.returncode, status.stderr[:31]) == (2, "tiebreak: cannot reach Redis: E")


def test_the_first_request_is_timed_as_it_reaches_the_model(tmp_path: Path) -> None:
    first = bench.FirstCall()
    with FakeMessagesAPI(first, api_key=bench.API_KEY, strict=False) as api:
        env = {
            **bench.environment(),
            "ANTHROPIC_API_KEY": bench.API_KEY,
            "ANTHROPIC_BASE_URL": api.base_url,
        }
        done = subprocess.run(
            bench.review_command(tmp_path), cwd=bench.ROOT, env=env, capture_output=True, text=True
        )

    # The review's first request, the tester's report, refused: the review ends by itself.
    assert first.at is not None, done.stderr
    assert (api.requests[0].path, api.requests[0].tool) == ("/v1/messages", "report_findings")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("tiebreak: the model's first call failed: ")
