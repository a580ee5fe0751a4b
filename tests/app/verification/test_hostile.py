"""Hostile tests, as a tester steered by a pull request could write them, in one review:
each is contained and reported, nothing outside its copy changes, nothing of the host's it
should not see is there, no process outlives it, no run holds more than its limits, and the
review's next test runs as if none had been."""

import asyncio
import re
import secrets
import socket
from pathlib import Path

import pytest

from agents.verification import Evidence
from app.verification.local import LocalVerifier
from app.verification.process import TAIL_CHARS
from app.verification.sandbox import Bwrap
from tests.app.verification.conftest import needs_bwrap
from tests.kits.hostile import FILLS_THE_DISK, HOLDS_MEMORY, reaches, var_tmp
from tests.kits.project import existing, processes_running, snapshot
from tests.scenarios.shop import REPRODUCTION, Project, config, reproduction

pytestmark = needs_bwrap

TIEBREAK = Path(__file__).resolve().parents[3]
TIMEOUT_S = 6
RUN = secrets.token_hex(4)
"""In the hostile tests' names: the processes looked for after them are this run's, not those
of another run of this suite on the same machine."""

FORKS = reproduction(
    f"tests/test_forks_without_end_{RUN}.py",
    "import os\n\n\ndef test_it():\n    while True:\n"
    "        try:\n            os.fork()\n        except OSError:\n            pass\n",
)
SLEEPS = reproduction(
    f"tests/test_sleeps_forever_{RUN}.py",
    "import time\n\n\ndef test_it():\n    time.sleep(10**6)\n",
)
FLOODS = reproduction(
    f"tests/test_prints_100_mb_{RUN}.py",
    # pytest captures what a test prints: this one finds the pipe pytest saved away.
    "import os, stat\n\n\n"
    "def test_it():\n"
    "    fds = [fd for fd in range(3, 256) if _pipe(fd)]\n"
    "    for _ in range(100 * 1024):\n"
    "        os.write(fds[0], b'x' * 1023 + b'\\n')\n"
    "    assert False, 'the flood is over'\n\n\n"
    "def _pipe(fd):\n"
    "    try:\n        return stat.S_ISFIFO(os.fstat(fd).st_mode)\n"
    "    except OSError:\n        return False\n",
)


def connects(port: int) -> str:
    """A test that passes only if neither the host's loopback nor the world answers."""
    return (
        "import errno, socket\n\nimport pytest\n\n\n"
        "def test_it():\n"
        "    with pytest.raises(ConnectionRefusedError):\n"
        f"        socket.create_connection(('127.0.0.1', {port}), timeout=20)\n"
        "    with pytest.raises(OSError) as raised:\n"
        "        socket.create_connection(('192.0.2.1', 53), timeout=20)\n"
        "    assert raised.value.errno == errno.ENETUNREACH\n"
    )


def writes(targets: list[str]) -> str:
    """A test that writes wherever it can, and passes whatever happens."""
    return (
        "import os\n\n\ndef test_it():\n"
        f"    for target in {targets!r}:\n"
        "        try:\n"
        "            os.makedirs(os.path.dirname(os.path.expanduser(target)), exist_ok=True)\n"
        "            open(os.path.expanduser(target), 'w').write('planted')\n"
        "        except OSError as exc:\n"
        "            print(target, exc)\n"
    )


async def test_hostile_tests_are_contained_and_the_review_goes_on(
    sandbox: Bwrap, project: Project
) -> None:
    """Slow (over 6 s): the fork bomb and the test that sleeps are stopped only when their time
    runs out (they run side by side, so that is waited once)."""
    token = f"planted-{secrets.token_hex(8)}"
    outside = [
        project.checkout / token,
        project.checkout / ".git" / "hooks" / "pre-commit",
        Path("/tmp") / token,
        TIEBREAK / token,
        Path("/root") / token,
    ]
    before = snapshot(project.checkout)
    verify = config(timeout_s=TIMEOUT_S, processes=32)

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        async with LocalVerifier(project.checkout, project.diff, verify, sandbox) as verifier:
            network, planted = await asyncio.gather(
                verifier.reproduce(
                    reproduction("tests/test_network.py", connects(listener.getsockname()[1]))
                ),
                verifier.reproduce(
                    reproduction("tests/test_writes.py", writes(["~/" + token, *map(str, outside)]))
                ),
            )
            # The two that run out their time do so side by side: one wait, not two.
            bomb, beside_the_bomb, sleeper = await asyncio.gather(
                verifier.reproduce(FORKS),
                verifier.reproduce(REPRODUCTION),
                verifier.reproduce(SLEEPS),
            )
            flood = await verifier.reproduce(FLOODS)
            after_them = await verifier.reproduce(REPRODUCTION)
        try:
            listener.accept()
            reached = True
        except BlockingIOError:
            reached = False

    assert network.verdict is Evidence.NOT_REPRODUCED, network
    assert not reached
    assert planted.verdict is Evidence.NOT_REPRODUCED, planted
    assert snapshot(project.checkout) == before
    assert existing(*outside) == []
    assert bomb.verdict is Evidence.BROKEN
    assert bomb.reason == f"at the head timed out after {TIMEOUT_S} s"
    assert beside_the_bomb.verdict is Evidence.REPRODUCED, beside_the_bomb
    assert sleeper.verdict is Evidence.BROKEN
    assert sleeper.reason == f"at the head timed out after {TIMEOUT_S} s"
    assert flood.verdict is Evidence.FAILS_AT_BASE, flood
    assert re.fullmatch(r"1 failed in [\d.]+s", flood.output_tail.splitlines()[-1])
    assert "AssertionError: the flood is over" in flood.output_tail
    assert len(flood.output_tail) <= TAIL_CHARS
    assert after_them.verdict is Evidence.REPRODUCED, after_them
    for hostile in (FORKS, SLEEPS, FLOODS):
        assert processes_running(Path(hostile.path).name) == []


async def test_hostile_tests_reach_nothing_of_the_host_and_hold_no_more_than_the_limits(
    sandbox: Bwrap, project: Project
) -> None:
    verify = config(command="python {test}", memory_mb=128, timeout_s=TIMEOUT_S)
    with var_tmp() as host, socket.socket(socket.AF_UNIX) as listener:
        (host / "notes.txt").write_text("a world-readable file")
        snapshot = host / "data" / "snapshots" / "another-owner" / "private-repo" / "settings.py"
        snapshot.parent.mkdir(parents=True)
        snapshot.write_text("TOKEN = 'another repository's'")
        listener.bind(str(host / "service.sock"))
        (host / "service.sock").chmod(0o777)
        listener.listen()
        listener.setblocking(False)
        attacks = {
            "reaches": reaches(host / "notes.txt", snapshot, host / "service.sock"),
            "fills": FILLS_THE_DISK,
            "holds": HOLDS_MEMORY,
        }
        async with LocalVerifier(
            project.checkout, project.diff, verify, sandbox, hidden=[host / "data"]
        ) as verifier:
            reached, filled, held = [
                await verifier.reproduce(reproduction(f"tests/test_{name}_{RUN}.py", content))
                for name, content in attacks.items()
            ]
        with pytest.raises(BlockingIOError):
            listener.accept()[0].close()

    assert reached.output_tail.splitlines() == [
        "/var/tmp refused: No such file or directory",
        "snapshots refused: No such file or directory",
        "socket refused: No such file or directory",
    ]
    assert filled.output_tail.splitlines() == [
        ". refused after 0 MB: No space left on device",
        "/tmp refused after 0 MB: No space left on device",
        "/dev/shm refused after 0 MB: No space left on device",
    ]
    assert held.verdict is Evidence.BROKEN
    assert held.reason == "at the head it ran out of memory (its limit is 128 MB)"
    for name in attacks:
        assert processes_running(f"test_{name}_{RUN}.py") == []
