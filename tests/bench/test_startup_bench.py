"""The start-up benchmark runs each quick command as a process and prints its median time
against `python -c "import click"` (printed, not judged: no timing is asserted here)."""

import re
import subprocess
from pathlib import Path

import pytest

from bench import startup as bench

TIEBREAK = ["tiebreak --help", "tiebreak check-config FILE", "tiebreak status --once (no Redis)"]


def test_the_benchmark_prints_each_commands_time_against_the_baseline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.main(["--runs", "1", "--before", str(bench.ROOT)])

    rows = re.findall(r"^(.+?) +\d+ +(\d+\.\d)$", capsys.readouterr().out, re.M)
    before = [f"before: {name}" for name in TIEBREAK]
    assert [name for name, _ in rows] == [bench.BASELINE, *TIEBREAK, *before]
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
    status = results["tiebreak status --once (no Redis)"]
    assert (status.returncode, status.stderr[:31]) == (2, "tiebreak: cannot reach Redis: E")
