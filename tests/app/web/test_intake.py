"""A stranger's slow uploads against a real `tiebreak web`: the memory they hold, how long they
last, and what GitHub's deliveries get meanwhile.

The server runs as a process of its own, so that its resident memory is its own to measure.
"""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.fakes.loopback import free_port
from tests.scenarios.webhooks import SECRET, payload, signed

TIEBREAK = Path(sys.executable).with_name("tiebreak")
MiB = 1024 * 1024
BUFFER_MB = 25
"""The least the setting allows: room for one of GitHub's largest deliveries."""
READ_TIMEOUT = 2.0
ATTACKERS = 12
DECLARED = 24 * MiB
SENT = 4 * MiB
"""What each attacker sends of the body it declares before it stalls: 48 MiB in all."""


class Server:
    """A `tiebreak web` process."""

    def __init__(self, port: int, process: "subprocess.Popen[bytes]") -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.process = process

    def rss(self) -> int:
        """The process's resident memory, in bytes."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1]) * 1024

    def deliver_ping(self, timeout: float) -> int:
        raw, headers = signed("ping", payload("ping/payload"))
        request = urllib.request.Request(
            f"{self.url}/api/github/webhooks", data=raw, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return int(error.code)

    def webhook_counts(self) -> dict[str, float]:
        """`tiebreak_webhooks_total` by outcome, as /metrics shows it."""
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=5) as response:
            text = response.read().decode()
        return {
            sample.labels["outcome"]: sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "tiebreak_webhooks_total"
        }


@pytest.fixture
def server(redis_url: str, tmp_path: Path) -> Iterator[Server]:
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "REDIS_URL": redis_url,
        "TIEBREAK_WEBHOOK_BUFFER_MB": str(BUFFER_MB),
        "TIEBREAK_WEBHOOK_READ_TIMEOUT": str(READ_TIMEOUT),
        "TIEBREAK_ENV_FILE": "",
    }
    log = tmp_path / "web.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [str(TIEBREAK), "web", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    served = Server(port, process)
    try:
        _wait_for_health(served, log)
        yield served
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_health(server: Server, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"tiebreak web exited:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"{server.url}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("tiebreak web did not become healthy")


def _stall(port: int, number: int) -> socket.socket:
    """A connection that declares a large unsigned body, sends part of it, and goes quiet."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    head = (
        "POST /api/github/webhooks HTTP/1.1\r\n"
        "Host: 127.0.0.1\r\n"
        "Content-Type: application/json\r\n"
        "X-GitHub-Event: pull_request\r\n"
        f"X-GitHub-Delivery: stalled-{number}\r\n"
        f"X-Hub-Signature-256: sha256={'0' * 64}\r\n"
        f"Content-Length: {DECLARED}\r\n\r\n"
    )
    # The server may answer and hang up before it has read all that.
    with suppress(OSError):
        sock.sendall(head.encode() + b" " * SENT)
    return sock


def _closed_by_server(sock: socket.socket, by: float) -> bool:
    """Whether the server hangs up on `sock` before the monotonic time `by`."""
    while (left := by - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(65536):
                return True
        except TimeoutError:
            return False
        except OSError:
            return True  # reset: hung up with our unread bytes in its buffer
    return False


def test_slow_unsigned_uploads_do_not_hold_memory(server: Server) -> None:
    assert server.deliver_ping(timeout=5) == 200  # warm: every module of the path loaded
    before = server.rss()

    with ExitStack() as stack:
        started = time.monotonic()
        attackers = [stack.enter_context(_stall(server.port, n)) for n in range(ATTACKERS)]
        time.sleep(0.5)  # what was sent is read by now, if it is read at all
        held = server.rss() - before

        # GitHub's delivery, meanwhile, is answered before any attacker's deadline frees room.
        assert server.deliver_ping(timeout=READ_TIMEOUT) == 200
        closed = [_closed_by_server(sock, by=started + READ_TIMEOUT + 3) for sock in attackers]

    assert held < ATTACKERS * SENT / 3, f"{held / MiB:.0f} MiB held by stalled uploads"
    assert closed == [True] * ATTACKERS
    counts = server.webhook_counts()
    assert counts.get("pong") == 2
    # One stalled upload fit the budget and ran out of time; the others were turned away.
    assert (counts.get("too_slow"), counts.get("busy")) == (1, ATTACKERS - 1)
