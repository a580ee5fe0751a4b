"""How long `tiebreak`'s commands take to start, against `python -c "import click"`.

Each command runs as a fresh process, as a person runs it, offline: `tiebreak --help`, every
command's `--help` (of :data:`app.cli.main.COMMANDS`), a usage error (`tiebreak review
--no-such-option`), `tiebreak check-config FILE` on a valid file, and `tiebreak status --once`
against an address where nothing listens (it fails at once, having started). Beside them, the
time `tiebreak review` of a small diff takes from its start to its first model request, which
the fake Messages API on loopback (`ANTHROPIC_BASE_URL`) records as it arrives; the process is
then stopped; and beside it `python -c "import anthropic"`, the model's SDK loaded alone,
which the request cannot start before. The runs of all the commands take turns, so that a
machine that slows down in the middle slows each of them alike. Printed per command: the
median wall time of N runs, and how many times the baseline's it is (the goal for a help page
or a usage error: at most 3; for the first request: 0.5 s).

    uv run python -m bench.startup [--runs N] [--root DIR] [--before DIR]

`--root` measures another checkout of Tiebreak (its `app` package, on this interpreter and its
libraries) and `--before` one more in the same run, its lines named "before: ": how a change
compares with the code before it (`git archive main | tar -x -C DIR` makes such a checkout).
"""

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.cli.main import COMMANDS
from tests.fakes.messages_api import Error, FakeMessagesAPI

ROOT = Path(__file__).resolve().parents[1]

BASELINE = "python -c 'import click'"
SDK = "python -c 'import anthropic'"
"""The model's SDK loaded alone: what the first model request cannot start before."""
FIRST_REQUEST = "tiebreak review: first model request"
USAGE_ERROR = "tiebreak review --no-such-option"
API_KEY = "sk-startup"

SMALL_DIFF = """\
diff --git a/prices.py b/prices.py
--- a/prices.py
+++ b/prices.py
@@ -1,2 +1,3 @@
 def total(prices):
-    return sum(prices)
+    # Rounded to cents.
+    return round(sum(prices), 2)
"""

# As the `tiebreak` script runs the command; `-c` puts the working directory, the checkout
# measured, first on the path.
_TIEBREAK = "import sys; sys.argv[0] = 'tiebreak'; from app.cli import main; main()"


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def commands(config: Path) -> dict[str, list[str]]:
    """Each command measured, by the name printed, as the process it runs."""
    tiebreak = [sys.executable, "-c", _TIEBREAK]
    helps = {f"tiebreak {name} --help": [*tiebreak, name, "--help"] for name in sorted(COMMANDS)}
    return {
        BASELINE: [sys.executable, "-c", "import click"],
        SDK: [sys.executable, "-c", "import anthropic"],
        "tiebreak --help": [*tiebreak, "--help"],
        **helps,
        USAGE_ERROR: [*tiebreak, "review", "--no-such-option"],
        "tiebreak check-config FILE": [*tiebreak, "check-config", str(config)],
        "tiebreak status --once (no Redis)": [*tiebreak, "status", "--once"],
    }


def review_command(workdir: Path) -> list[str]:
    """`tiebreak review` of :data:`SMALL_DIFF`, the code around it in `workdir`, made a git
    work tree (as `--repo` must name one)."""
    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    diff = workdir / "small.diff"
    diff.write_text(SMALL_DIFF, encoding="utf-8")
    (workdir / "prices.py").write_text(
        "def total(prices):\n    # Rounded to cents.\n    return round(sum(prices), 2)\n",
        encoding="utf-8",
    )
    return [sys.executable, "-c", _TIEBREAK, "review", str(diff), "--repo", str(workdir)]


class FirstCall:
    """The fake model, noting when the first request arrived (`perf_counter`) and refusing
    it, which ends the review at once: nothing after it is measured."""

    def __init__(self) -> None:
        self.at: float | None = None

    def __call__(self, body: dict[str, Any]) -> Error:
        if self.at is None:
            self.at = time.perf_counter()
        return Error(400, "invalid_request_error", "the benchmark stops at the first request")


def first_request(args: list[str], root: Path, env: dict[str, str]) -> float:
    """The seconds from starting `args` to the fake model's first request (or to its exit,
    had it asked nothing)."""
    first = FirstCall()
    with FakeMessagesAPI(first, api_key=API_KEY, strict=False) as api:
        model_env = {**env, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": api.base_url}
        start = time.perf_counter()
        process = subprocess.Popen(
            args,
            cwd=root,
            env=model_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while first.at is None and process.poll() is None:
                time.sleep(0.001)
            process.wait(timeout=120)  # refused, the review ends
        finally:
            process.kill()
            process.wait()
        ended = first.at if first.at is not None else time.perf_counter()
    return ended - start


def runs_of(config: Path, root: Path, before: Path | None) -> dict[str, tuple[list[str], Path]]:
    """Each command measured, by the name printed: the process it runs, and in which checkout.
    With `before`, the `tiebreak` commands again, named so, in that checkout."""
    measured = {name: (args, root) for name, args in commands(config).items()}
    if before is not None:
        for name, args in commands(config).items():
            if name not in (BASELINE, SDK):
                measured[f"before: {name}"] = (args, before)
    return measured


def environment() -> dict[str, str]:
    """The commands' environment: no `.env` read, and a Redis address where nothing listens."""
    return {"TIEBREAK_ENV_FILE": "", "REDIS_URL": f"redis://127.0.0.1:{closed_port()}"}


def run_once(args: list[str], root: Path, env: dict[str, str]) -> float:
    """The seconds `args` took, from its start to its exit."""
    start = time.perf_counter()
    subprocess.run(args, cwd=root, env=env, capture_output=True, check=False, timeout=120)
    return time.perf_counter() - start


def measure(root: Path, before: Path | None, runs: int) -> dict[str, float]:
    """The median seconds of each command over `runs` runs taking turns."""
    with tempfile.TemporaryDirectory() as tmp:
        # At the path the App reads, so that check-config checks it and warns of nothing.
        config = Path(tmp) / ".github" / "tiebreak.yml"
        config.parent.mkdir()
        config.write_text("review_drafts: true\n", encoding="utf-8")
        workdir = Path(tmp) / "checkout"
        workdir.mkdir()
        review = review_command(workdir)
        env = environment()
        measured = runs_of(config, root, before)
        firsts = {FIRST_REQUEST: root} | ({f"before: {FIRST_REQUEST}": before} if before else {})
        times: dict[str, list[float]] = {name: [] for name in [*measured, *firsts]}
        for _ in range(runs):
            for name, (args, cwd) in measured.items():
                times[name].append(run_once(args, cwd, env))
            for name, cwd in firsts.items():
                times[name].append(first_request(review, cwd, env))
    return {name: statistics.median(seconds) for name, seconds in times.items()}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per command (default 10)")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)"
    )
    parser.add_argument(
        "--before",
        type=Path,
        metavar="DIR",
        help="another checkout (the code before a change), measured in the same run",
    )
    args = parser.parse_args(argv)
    before = args.before.resolve() if args.before else None
    medians = measure(args.root.resolve(), before, args.runs)
    baseline = medians[BASELINE]
    print(f"{'command':<52} {'median (ms)':>11} {'ratio':>6}")
    for name, seconds in medians.items():
        print(f"{name:<52} {seconds * 1000:>11.0f} {seconds / baseline:>6.1f}")


if __name__ == "__main__":
    main()
