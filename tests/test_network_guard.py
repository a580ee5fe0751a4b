"""The guard that keeps every test off the network."""

import socket

import pytest

from tests.conftest import NetworkBlocked


def test_a_connection_beyond_loopback_fails_the_test() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(NetworkBlocked):
        sock.connect(("192.0.2.1", 443))


def test_loopback_stays_reachable() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=2):
            pass
