"""The `tiebreak` command run as a person runs it: a real process, in a directory of the
test's, with an environment of the test's alone — no model key, no `.env`, no display —
so that what it needs, it must be given."""

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

TIEBREAK = Path(sys.executable).with_name("tiebreak")

Done = subprocess.CompletedProcess[str]


def run_tiebreak(
    *args: str, cwd: Path, env: Mapping[str, str] = {}, stdin: str | None = None
) -> Done:
    """`tiebreak ARGS` in `cwd`, its environment `PATH` and `env` alone."""
    return subprocess.run(
        [str(TIEBREAK), *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", ""), "TIEBREAK_ENV_FILE": "", "HOME": str(cwd), **env},
        timeout=120,
        check=False,
    )
