"""One command run as a process of its own: within a wall-clock bound, stopped whole past it,
and only the end of what it printed kept.

Standard output and error go to one pipe, read as a stream into a buffer of at most
:data:`TAIL_BYTES`: a test that prints without end costs Tiebreak that much memory, no more.
Before the command itself, the launcher prints a marker no command can know beforehand;
whatever comes before it (a sandbox that could not be built, a limit that could not be set)
means the command never ran, which an exit code could not tell apart from a failing test.
"""

import asyncio
import contextlib
import json
import os
import secrets
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from agents.verification import Run

TAIL_BYTES = 64 * 1024
"""Bytes of output kept while a command runs (its last ones)."""
TAIL_LINES = 60
TAIL_CHARS = 4_000
"""What :attr:`Run.output_tail` keeps of them: the last lines, cut to the last characters."""
STOP_WAIT_S = 10.0
"""Seconds to wait for a killed process to be gone before killing its whole group."""
DRAIN_S = 2.0
"""Seconds to read what is left in the pipe once the command ended: a process it left
behind may hold the pipe open (outside the sandbox only; a sandbox's end ends them all)."""
CHUNK = 16 * 1024

LAUNCHER = 'printf "%s\\n" "$1" && exec /bin/sh -c "$2"'
"""Run by `/bin/sh -c` with the marker and the command as $1 and $2."""


def launch(command: str, marker: str) -> list[str]:
    """The argv that prints `marker`, then runs `command` with `/bin/sh`."""
    return ["/bin/sh", "-c", LAUNCHER, "sh", marker, command]


def new_marker() -> str:
    return f"tiebreak-run-{secrets.token_hex(16)}"


class Tail:
    """The end of a stream of output, and whether the marker that starts the command's own
    output went by."""

    def __init__(self, marker: str, keep: int = TAIL_BYTES) -> None:
        self._marker = (marker + "\n").encode()
        self._keep = keep
        self._data = bytearray()
        self.started = False

    def feed(self, chunk: bytes) -> None:
        self._data += chunk
        if not self.started:
            found = self._data.find(self._marker)
            if found >= 0:
                # What came before the marker is the launcher's, not the command's.
                del self._data[: found + len(self._marker)]
                self.started = True
            elif len(self._data) > self._keep + len(self._marker):
                del self._data[: -(self._keep + len(self._marker))]
                return
        if len(self._data) > 2 * self._keep:
            del self._data[: -self._keep]

    def __len__(self) -> int:
        """Bytes held: at most twice :data:`TAIL_BYTES`, whatever was fed."""
        return len(self._data)

    def text(self) -> str:
        """The last lines kept, as text (undecodable bytes replaced)."""
        kept = self._data[-self._keep :].decode("utf-8", errors="replace")
        lines = kept.splitlines()[-TAIL_LINES:]
        return "\n".join(lines)[-TAIL_CHARS:]


class InfoPipe:
    """The pipe bubblewrap writes its sandbox's facts to (`--info-fd`): the host pid of the
    sandbox's init, whose death ends every process of the sandbox."""

    def __init__(self) -> None:
        self._read, self.write_fd = os.pipe()
        os.set_blocking(self._read, False)
        self._pid: int | None = None

    def started(self) -> None:
        """The child holds the write end now; ours must close, or reads would never end."""
        os.close(self.write_fd)

    def child_pid(self) -> int | None:
        if self._pid is None:
            with contextlib.suppress(BlockingIOError, OSError, ValueError):
                self._pid = int(json.loads(os.read(self._read, 4096))["child-pid"])
        return self._pid

    def close(self) -> None:
        os.close(self._read)


async def run_bounded(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    marker: str,
    info: InfoPipe | None = None,
) -> Run:
    """Run `argv` (which prints `marker` before the command) in its own session and process
    group; past `timeout_s`, kill it: the sandbox's init when `info` tells it (which takes
    every process of the sandbox along), else the process group."""
    start = time.monotonic()
    tail = Tail(marker)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(info.write_fd,) if info else (),
        )
    except OSError as exc:
        return Run(error=f"the command could not be started: {exc}")
    finally:
        if info:
            info.started()
    assert process.stdout is not None
    reading = asyncio.create_task(_read(process.stdout, tail))
    timed_out = False
    try:
        async with asyncio.timeout(timeout_s):
            await process.wait()
    except TimeoutError:
        timed_out = True
    finally:
        if process.returncode is None:
            await _stop(process, info)
        _kill_group(process.pid)
        await _drain(reading)
    seconds = time.monotonic() - start
    return _ending(process.returncode, tail, seconds, timed_out, timeout_s)


def _ending(code: int | None, tail: Tail, seconds: float, timed_out: bool, timeout: float) -> Run:
    output = tail.text()
    if timed_out:
        error: str | None = f"timed out after {timeout:g} s"
    elif not tail.started:
        error = "the command could not be started: " + (output or f"exit code {code}")
    elif code is None or code < 0:
        error = f"it was killed by {_signal_name(-(code or 0))}"
    else:
        return Run(exit_code=code, output_tail=output, seconds=seconds)
    return Run(exit_code=None, output_tail=output, seconds=seconds, error=error)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


async def _read(stream: asyncio.StreamReader, tail: Tail) -> None:
    while chunk := await stream.read(CHUNK):
        tail.feed(chunk)


async def _stop(process: asyncio.subprocess.Process, info: InfoPipe | None) -> None:
    """Kill what `process` started and wait until it is gone."""
    child = info.child_pid() if info else None
    if child is not None:
        # The sandbox's init: bubblewrap reaps it only once the kernel has ended every
        # process of its PID namespace, then exits itself.
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(STOP_WAIT_S):
                await process.wait()
                return
    _kill_group(process.pid)
    await process.wait()


def _kill_group(pgid: int) -> None:
    # The group outlives its leader while any member lives, so its id is still ours here.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _drain(reading: "asyncio.Task[None]") -> None:
    try:
        async with asyncio.timeout(DRAIN_S):
            await reading
    except TimeoutError:
        pass
