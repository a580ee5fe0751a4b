"""How long a freshly started Tiebreak takes over its first review, beside its model's time.

Each run starts `tiebreak serve` as a process, as a deploy does (its own redis-server, the
fake GitHub and the fake Messages API on 127.0.0.1, in threads of this process), waits until
`/healthz` answers and then `--settle` seconds more, and sends a signed `pull_request.opened`
webhook. The first review is timed from sending the webhook to the fake GitHub holding its
completed check run; a second pull request is then reviewed the same way on the same server.
The model finds nothing: one call a review, each answered after `--latency` seconds, so the
model's critical path is the sum of those calls' latencies, and the overhead printed is the
wall time less it: what the first review spends on itself, against the second. Its split:
before the first model call (the webhook answered, the job picked up, GitHub read, the
plan), and after the last (the outcome, publishing, the check run completed).

    uv run python -m bench.first_review [--runs 3] [--latency 0.2] [--settle 5] [--root DIR]

`--root` runs another checkout's `tiebreak` (on this interpreter and its libraries), to
compare a change with the code before it (`git archive main | tar -x -C DIR` makes one).
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key
from tests.fakes.loopback import free_port
from tests.fakes.messages_api import FakeMessagesAPI
from tests.scenarios.debates import PAYMENTS, PAYMENTS_AFTER, PAYMENTS_BEFORE, git_diff
from tests.scenarios.webhooks import SECRET, payload, signed

ROOT = Path(__file__).resolve().parents[1]
APP_ID, INSTALLATION, REPO = 42, 9, "octo/shop"
API_KEY = "sk-bench"
DIFF = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)})
DEADLINE = 120.0
"""Seconds a server may take to answer `/healthz`, and a review to complete."""

# As the `tiebreak` script runs the command; `-c` puts the working directory first on the path.
_TIEBREAK = "import sys; sys.argv[0] = 'tiebreak'; from app.cli import main; main()"


class BenchmarkFailed(AssertionError):
    """The server did not start, or a review did not complete."""


@dataclass(frozen=True)
class Timed:
    wall: float
    model: float
    """The model's critical path: the latencies of the review's calls, one after another."""
    before: float
    """From the webhook sent to the first model call."""
    after: float
    """From the last model call's answer to the completed check run seen."""

    @property
    def overhead(self) -> float:
        return self.wall - self.model


class Model:
    """A model that finds nothing, after `latency` seconds a call."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls: list[tuple[float, float]] = []
        """Each call's start and end, on `time.perf_counter`'s clock."""

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        time.sleep(self.latency)
        self.calls.append((start, time.perf_counter()))
        return {"findings": []}


@contextmanager
def served(root: Path, github: FakeGitHub, api: FakeMessagesAPI, key: AppKey) -> Iterator[str]:
    """A `tiebreak serve` of the checkout `root`, healthy; its address."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="tiebreak-first-review-") as data:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "GITHUB_APP_ID": str(APP_ID),
            "GITHUB_PRIVATE_KEY": key.private_pem,
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "GITHUB_API_URL": github.base_url,
            "ANTHROPIC_API_KEY": API_KEY,
            "ANTHROPIC_BASE_URL": api.base_url,
            "TIEBREAK_DATA_DIR": data,
            "PUBLIC_URL": f"http://127.0.0.1:{port}",
            "TIEBREAK_ENV_FILE": "",
        }
        process = subprocess.Popen(
            [sys.executable, "-c", _TIEBREAK, "serve", "--port", str(port)],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            process_group=0,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_for_health(url, process)
            yield url
        finally:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_health(url: str, process: "subprocess.Popen[bytes]") -> None:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchmarkFailed(f"tiebreak serve exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise BenchmarkFailed("tiebreak serve did not become healthy")


def review(url: str, github: FakeGitHub, model: Model, number: int) -> Timed:
    """Open pull request `number`, send its webhook, and time it to its completed check run."""
    head = f"{number:040x}"
    github.add_pull(REPO, number, head_sha=head, base_sha="b" * 40, diff=DIFF)
    body = payload("pull_request/opened")
    body["installation"] = {"id": INSTALLATION}
    body["repository"]["name"], body["repository"]["owner"]["login"] = "shop", "octo"
    body["pull_request"]["number"] = number
    body["pull_request"]["head"]["sha"] = head
    raw, headers = signed("pull_request", body, delivery=f"bench-{number}")
    calls = len(model.calls)
    start = time.perf_counter()
    request = urllib.request.Request(
        f"{url}/api/github/webhooks", data=raw, headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10):
        pass
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        runs = [c for c in github.check_runs(REPO) if c.head_sha == head]
        if runs and all(c.status == "completed" for c in runs):
            done, made = time.perf_counter(), model.calls[calls:]
            before = made[0][0] - start if made else done - start
            after = done - made[-1][1] if made else 0.0
            return Timed(done - start, len(made) * model.latency, before, after)
        time.sleep(0.005)
    raise BenchmarkFailed(f"pull request {number}'s review did not complete")


def measure(root: Path, runs: int, latency: float, settle: float) -> list[tuple[Timed, Timed]]:
    """The first and second reviews of `runs` freshly started servers."""
    timed = []
    for _ in range(runs):
        key, model = new_app_key(), Model(latency)
        with (
            FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as github,
            FakeMessagesAPI(model, api_key=API_KEY) as api,
        ):
            github.add_installation(INSTALLATION, repos=[REPO])
            with served(root, github, api, key) as url:
                time.sleep(settle)
                first = review(url, github, model, 1)
                second = review(url, github, model, 2)
            timed.append((first, second))
    return timed


def report(timed: Sequence[tuple[Timed, Timed]]) -> str:
    lines = [
        f"{'server':8}{'first wall':>12}{'overhead':>10}{'before':>8}{'after':>8}"
        f"{'second wall':>13}{'overhead':>10}{'before':>8}{'after':>8}"
    ]
    for n, (first, second) in enumerate(timed, 1):
        lines.append(
            f"{n:<8}{first.wall:>12.3f}{first.overhead:>10.3f}{first.before:>8.3f}"
            f"{first.after:>8.3f}{second.wall:>13.3f}{second.overhead:>10.3f}"
            f"{second.before:>8.3f}{second.after:>8.3f}"
        )
    firsts = statistics.median(f.overhead for f, _ in timed)
    seconds = statistics.median(s.overhead for _, s in timed)
    lines += [
        "",
        f"first review's overhead (median): {firsts:.3f} s "
        f"({statistics.median(f.before for f, _ in timed):.3f} s before its first model call, "
        f"{statistics.median(f.after for f, _ in timed):.3f} s after its last); "
        f"second's: {seconds:.3f} s",
        "seconds; wall: the webhook sent → the check run completed on the fake GitHub; "
        "overhead: wall less the model's critical path (its calls' latencies); before: the "
        "webhook sent → the first model call; after: the last call answered → the check run "
        "seen completed (asked every 5 ms)",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="servers started, one at a time")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument(
        "--settle", type=float, default=5.0, help="seconds from /healthz to the first webhook"
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to run")
    args = parser.parse_args(argv)
    print(report(measure(args.root.resolve(), args.runs, args.latency, args.settle)))


if __name__ == "__main__":
    main()
