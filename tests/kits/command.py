"""The `tiebreak` command run as a person runs it: a process of the installed script, without
a `.env` from the working directory, its output kept."""

import os
import subprocess
import sys
from pathlib import Path

TIEBREAK = Path(sys.executable).with_name("tiebreak")


def tiebreak(
    *args: str,
    cwd: Path | None = None,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`tiebreak ARGS…` run to its end (a minute at most), in `cwd`, with `env` over the
    test's environment."""
    return subprocess.run(
        [str(TIEBREAK), *args],
        input=stdin.decode() if isinstance(stdin, bytes) else stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "TIEBREAK_ENV_FILE": "", **(env or {})},
        timeout=60,
        check=False,
    )
