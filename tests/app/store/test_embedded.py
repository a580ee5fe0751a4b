"""The embedded redis-server: reachable by the user running Tiebreak alone, on a Unix socket
and on no TCP port, its address written while it runs, and never stolen from another
`tiebreak serve` on the same data directory."""

import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from app.store.embedded import SOCKET_PATH_BYTES, EmbeddedRedis, EmbeddedRedisError


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    with EmbeddedRedis(tmp_path / "redis", persist=False) as running:
        yield running


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (IPv4 and IPv6), from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except FileNotFoundError:  # closed since it was listed: listening on nothing
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            listening = fields[3] == "0A"
            if listening and fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_it_answers_on_a_socket_only_its_user_may_use_and_on_no_port(
    server: EmbeddedRedis, tmp_path: Path
) -> None:
    assert server.socket == (tmp_path / "redis" / "redis.sock").resolve()
    assert stat.S_IMODE(server.socket.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "redis").stat().st_mode) == 0o700
    assert (tmp_path / "redis" / "address").read_text() == f"unix://{server.socket}\n"
    with redis.Redis.from_url(server.url) as client:
        assert client.set("written", "here")
        pid = int(client.info("server")["process_id"])
    assert listening_ports(pid) == set()


def test_another_user_of_the_machine_cannot_connect() -> None:
    if os.geteuid() != 0:
        pytest.skip("switching to another user takes root")
    nobody = 65534
    probe = (
        "import os, socket, sys\n"
        f"os.setgid({nobody}); os.setuid({nobody})\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        "    s.connect(sys.argv[1])\n"
        "except PermissionError:\n"
        "    sys.exit(13)\n"
    )
    # In a directory anyone may pass through, as a data directory's parent may be.
    with tempfile.TemporaryDirectory() as shared:
        Path(shared).chmod(0o755)
        with EmbeddedRedis(Path(shared) / "redis", persist=False) as server:
            run = [sys.executable, "-c", probe, str(server.socket)]
            refused = subprocess.run(run, check=False)

    assert refused.returncode == 13


def test_a_second_server_on_the_same_data_directory_is_refused_and_the_first_keeps_its_own(
    server: EmbeddedRedis,
) -> None:
    with redis.Redis.from_url(server.url) as client:
        client.set("queued", "a review")

    with pytest.raises(EmbeddedRedisError) as refused:
        EmbeddedRedis(server.data_dir, persist=False).start()

    assert str(refused.value) == (
        f"another `tiebreak serve` runs its Redis in {server.data_dir}: stop it first"
    )
    with redis.Redis.from_url(server.url) as client:
        assert client.get("queued") == b"a review"
    assert (server.data_dir / "address").read_text() == server.url + "\n"


def test_a_socket_left_by_a_server_that_died_is_taken_over(tmp_path: Path) -> None:
    dead = EmbeddedRedis(tmp_path / "redis", persist=False).start()
    with redis.Redis.from_url(dead.url) as client:
        pid = int(client.info("server")["process_id"])
    os.kill(pid, signal.SIGKILL)  # no clean exit: its socket file stays
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the killed server did not end"
        time.sleep(0.01)
    assert dead.socket is not None
    assert dead.socket.is_socket()

    with (
        EmbeddedRedis(tmp_path / "redis", persist=False) as server,
        redis.Redis.from_url(server.url) as client,
    ):
        assert client.ping()
    dead.stop()


def test_a_data_directory_too_deep_for_a_socket_gets_one_in_a_directory_of_its_own(
    tmp_path: Path,
) -> None:
    deep = tmp_path.joinpath(*["d" * 40] * 3)
    with EmbeddedRedis(deep, persist=False) as server:
        assert server.socket is not None
        assert len(os.fsencode(server.socket)) <= SOCKET_PATH_BYTES
        made = server.socket.parent
        assert stat.S_IMODE(made.stat().st_mode) == 0o700
        with redis.Redis.from_url(server.url) as client:
            assert client.ping()
        assert (deep / "address").read_text() == server.url + "\n"
    assert not made.exists()
    assert not (deep / "address").exists()
