"""The `tiebreak` command run as a person runs it: a process of the installed script, without a
`.env` from its working directory, its output kept.

Each run is a process of its own, with its own standard streams, working directory,
environment and return code, forked from a server of the test process's own that has loaded
the command's modules once (:mod:`tests.kits.command_server`): the second each run would
spend loading the model's SDK again is spent once.
"""

import atexit
import contextlib
import json
import locale
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

TIEBREAK = Path(sys.executable).with_name("tiebreak")
TIMEOUT_S = 120

Done = subprocess.CompletedProcess[str]


def tiebreak(
    *args: str,
    cwd: Path | None = None,
    stdin: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> Done:
    """`tiebreak ARGS…` run to its end (two minutes at most), in `cwd`, with `env` over the
    test's environment."""
    return _run(args, cwd, stdin, {**os.environ, **(env or {})})


def run_tiebreak(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, stdin: str | None = None
) -> Done:
    """`tiebreak ARGS…` in `cwd` with an environment of the test's alone — `PATH` and `env`,
    no model key, no display — so that what it needs, it must be given."""
    return _run(
        args, cwd, stdin, {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), **(env or {})}
    )


def _run(
    args: tuple[str, ...], cwd: Path | None, stdin: str | bytes | None, env: Mapping[str, str]
) -> Done:
    request = {
        "args": list(args),
        "cwd": str(cwd or Path.cwd()),
        "env": {**env, "TIEBREAK_ENV_FILE": ""},
    }
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    returncode, out, err = _server().run(request, data)
    return Done([str(TIEBREAK), *args], returncode, _text(out), _text(err))


def _text(data: bytes) -> str:
    """What `subprocess.run(text=True)` makes of a stream."""
    decoded = data.decode(locale.getpreferredencoding(False))
    return decoded.replace("\r\n", "\n").replace("\r", "\n")


class _Server:
    """The test process's server of `tiebreak` processes, started at its first run."""

    def __init__(self) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="tiebreak-command-")
        self.path = str(Path(self._directory.name, "socket"))
        server = Path(__file__).with_name("command_server.py")
        self._process = subprocess.Popen(
            [sys.executable, str(server), self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "TIEBREAK_ENV_FILE": ""},
        )
        assert self._process.stdout is not None
        if self._process.stdout.readline() != b"ready\n":
            raise RuntimeError(f"the command server did not start ({self._process.wait()})")

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait()
        self._directory.cleanup()

    def run(self, request: Mapping[str, object], stdin: bytes) -> tuple[int, bytes, bytes]:
        """The return code, standard output and error of the run `request` asks for."""
        deadline = time.monotonic() + TIMEOUT_S
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as connection:
            connection.connect(self.path)
            socket.send_fds(connection, [json.dumps(request).encode()], [in_r, out_w, err_w])
            for fd in (in_r, out_w, err_w):
                os.close(fd)
            pid = json.loads(connection.recv(4096))["pid"]
            try:
                out, err = _communicate(in_w, stdin, out_r, err_r, deadline)
                connection.settimeout(max(deadline - time.monotonic(), 0.1))
                returncode = json.loads(connection.recv(4096))["returncode"]
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired([str(TIEBREAK)], TIMEOUT_S) from None
        return returncode, out, err


def _communicate(
    in_w: int, data: bytes, out_r: int, err_r: int, deadline: float
) -> tuple[bytes, bytes]:
    """`data` written to the run's standard input, and its output and error read to their
    ends, as `subprocess.run(input=…)` does."""
    read: dict[int, list[bytes]] = {out_r: [], err_r: []}
    with selectors.DefaultSelector() as selector:
        for fd in read:
            selector.register(fd, selectors.EVENT_READ)
        os.set_blocking(in_w, False)
        selector.register(in_w, selectors.EVENT_WRITE)
        try:
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                for key, _ in selector.select(remaining):
                    if key.fd == in_w:
                        try:
                            data = data[os.write(in_w, data[: 1 << 16]) :]
                        except BrokenPipeError:
                            data = b""
                        if not data:
                            selector.unregister(in_w)
                            os.close(in_w)
                            in_w = -1
                    elif chunk := os.read(key.fd, 1 << 16):
                        read[key.fd].append(chunk)
                    else:
                        selector.unregister(key.fd)
        finally:
            for fd in (in_w, out_r, err_r):
                if fd >= 0:
                    os.close(fd)
    return b"".join(read[out_r]), b"".join(read[err_r])


_started: list[_Server] = []


def _server() -> _Server:
    if not _started:
        _started.append(_Server())
        atexit.register(_started[0].close)
    return _started[0]
