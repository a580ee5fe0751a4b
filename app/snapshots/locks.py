"""Locks on files of the cache, shared by every process and every review on one disk.

A lock is `flock(2)` on a file of its own: held by an open file, it is released when the file
is closed, or when its process dies, so a crashed worker never leaves a snapshot locked.
Separate opens of one file lock against each other, so two reviews of one process are kept
apart as two processes are. Waiting polls without blocking the event loop.
"""

import asyncio
import fcntl
import os
import time
from pathlib import Path
from types import TracebackType
from typing import Self

POLL_SECONDS = 0.05

SHARED = fcntl.LOCK_SH
"""Held while a snapshot is read: it is not evicted meanwhile."""
EXCLUSIVE = fcntl.LOCK_EX
"""Held while a snapshot is made or evicted, and while the cache is trimmed."""


class FileLock:
    """A lock on `path`, created if missing; taken with :meth:`take` or :meth:`wait`."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    def take(self, kind: int) -> bool:
        """Take the lock (`SHARED` or `EXCLUSIVE`) if no one holds it otherwise; whether it
        was taken."""
        try:
            fcntl.flock(self._fd, kind | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    async def wait(self, kind: int, seconds: float) -> bool:
        """Take the lock, waiting at most `seconds`; whether it was taken."""
        deadline = time.monotonic() + seconds
        while not self.take(kind):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(POLL_SECONDS)
        return True

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
