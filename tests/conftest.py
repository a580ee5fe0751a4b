"""Test-wide guards.

No test may reach the network: every socket connection outside loopback fails the test, so a
test that would call a real model or GitHub fails loudly instead of leaking a request.
"""

import ipaddress
import socket
from typing import Any

import pytest


class NetworkBlocked(AssertionError):
    """A test tried to open a connection beyond this machine."""


def _is_local(address: Any) -> bool:
    if isinstance(address, str | bytes):  # a Unix socket path
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guarded(method: Any) -> Any:
        def call(self: socket.socket, address: Any) -> Any:
            if not _is_local(address):
                raise NetworkBlocked(f"test tried to connect to {address!r}")
            return method(self, address)

        return call

    monkeypatch.setattr(socket.socket, "connect", guarded(connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guarded(connect_ex))
    return
