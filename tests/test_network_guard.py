"""The guard that keeps every test off the network."""

import socket

import pytest

from tests.conftest import NetworkBlocked, NetworkGuard


def test_a_connection_beyond_loopback_is_refused_and_remembered() -> None:
    guard = NetworkGuard()
    with pytest.MonkeyPatch.context() as patch:
        guard.install(patch)
        with socket.socket() as sock, pytest.raises(NetworkBlocked):
            sock.connect(("192.0.2.1", 443))
    assert guard.attempts == ["('192.0.2.1', 443)"]


def test_resolving_a_public_name_is_refused_and_remembered() -> None:
    guard = NetworkGuard()
    with pytest.MonkeyPatch.context() as patch:
        guard.install(patch)
        with pytest.raises(NetworkBlocked):
            socket.getaddrinfo("api.anthropic.com", 443)
    assert guard.attempts == ["api.anthropic.com"]


def test_loopback_stays_reachable() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=2):
            pass
