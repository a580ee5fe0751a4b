"""The embedded redis-server: the one Tiebreak starts answers on its address, never another
server that holds the port (a parallel test worker's, another `tiebreak serve`'s)."""

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from app.store import embedded
from app.store.embedded import EmbeddedRedis, EmbeddedRedisError


@pytest.fixture
def other(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    """Another redis-server, already listening."""
    with EmbeddedRedis(tmp_path / "other", persist=False) as server:
        yield server


def test_a_port_another_server_holds_is_refused_saying_so(
    other: EmbeddedRedis, tmp_path: Path
) -> None:
    restarted = EmbeddedRedis(tmp_path / "mine", persist=False)
    restarted.port = other.port  # a restart keeps its address: someone took it meanwhile

    with pytest.raises(EmbeddedRedisError) as refused:
        restarted.start()

    assert str(refused.value) == f"another server answers on port {other.port}"
    assert not restarted.address_file.exists()


def test_a_free_port_taken_before_the_server_binds_it_is_left_for_another(
    other: EmbeddedRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ports = iter([other.port, embedded.free_port()])
    monkeypatch.setattr(embedded, "free_port", lambda: next(ports))

    with EmbeddedRedis(tmp_path / "mine", persist=False) as mine:
        with redis.Redis.from_url(mine.url) as client:
            client.set("written", "here")
        with redis.Redis.from_url(other.url) as client:
            seen_by_the_other = client.get("written")

        assert mine.port != other.port
        assert (tmp_path / "mine" / "address").read_text() == mine.url + "\n"
    assert seen_by_the_other is None
