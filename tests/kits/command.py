"""The `tiebreak` command run as a person runs it: a real process of the installed script,
without a `.env` from its working directory, its output kept."""

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

TIEBREAK = Path(sys.executable).with_name("tiebreak")

Done = subprocess.CompletedProcess[str]


def tiebreak(
    *args: str,
    cwd: Path | None = None,
    stdin: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> Done:
    """`tiebreak ARGS…` run to its end (two minutes at most), in `cwd`, with `env` over the
    test's environment."""
    return _run(args, cwd, stdin, {**os.environ, **(env or {})})


def run_tiebreak(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, stdin: str | None = None
) -> Done:
    """`tiebreak ARGS…` in `cwd` with an environment of the test's alone — `PATH` and `env`,
    no model key, no display — so that what it needs, it must be given."""
    return _run(
        args, cwd, stdin, {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), **(env or {})}
    )


def _run(
    args: tuple[str, ...], cwd: Path | None, stdin: str | bytes | None, env: Mapping[str, str]
) -> Done:
    return subprocess.run(
        [str(TIEBREAK), *args],
        input=stdin.decode() if isinstance(stdin, bytes) else stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**env, "TIEBREAK_ENV_FILE": ""},
        timeout=120,
        check=False,
    )
