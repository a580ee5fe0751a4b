"""Snapshots of repositories at commits, kept on the worker's disk: one download per commit.

The cache is a directory, shared by every worker process on the disk (and by `tiebreak review`
of a pull request by its address, under the same `TIEBREAK_DATA_DIR`):

    trees/{name}/     a snapshot's files, the archive's top directory moved there whole
    sizes/{name}      the bytes of its files, for the cap
    locks/{name}      its lock; `locks/trimming` the lock of the whole cache's eviction
    work/             downloads and extractions under way, and trees being removed

A snapshot is made in `work/` and moved into `trees/` by one `rename(2)`, so a reader sees a
whole tree or none. Its lock, held exclusively while it is made, has every other review that
asks for it (in this process or another) wait and then read what the first downloaded; held
shared while it is read, it keeps the tree from eviction. Each use touches the tree; once
one is made, the least recently used trees that no one is reading are removed until the
cache's bytes are within its cap (it passes the cap only while a new tree is extracted).
"""

import asyncio
import hashlib
import logging
import os
import re
import shutil
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

from app.settings import Settings
from app.snapshots.extraction import extract
from app.snapshots.limits import MIB, SnapshotLimits, SnapshotRefused
from app.snapshots.locks import EXCLUSIVE, SHARED, FileLock

Fetch = Callable[[], AbstractAsyncContextManager[AsyncIterator[bytes]]]
"""The download of a snapshot's archive, a gzipped tar, as its chunks arrive."""

SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
STALE_WORK_SECONDS = 3600.0
"""Work older than this was left by a process that died: no download takes so long."""

log = logging.getLogger(__name__)


class SnapshotCache:
    """The snapshots kept under `root`, within `limits`."""

    def __init__(self, root: Path, limits: SnapshotLimits | None = None) -> None:
        self.limits = SnapshotLimits() if limits is None else limits
        self.root = root
        self._trees, self._sizes = root / "trees", root / "sizes"
        self._locks, self._work = root / "locks", root / "work"

    @asynccontextmanager
    async def tree(self, full_name: str, sha: str, fetch: Fetch) -> AsyncIterator[Path]:
        """The directory of commit `sha` of repository `full_name`, downloaded through
        `fetch` unless the cache has it; not evicted until the block is left. Raises
        :class:`SnapshotRefused` for a snapshot past the limits or unsafe, and what `fetch`
        raises when the download fails."""
        if SHA.fullmatch(sha) is None:
            raise SnapshotRefused(f"{sha!r} is not a commit's SHA")
        name = f"{sha}.{hashlib.sha256(full_name.lower().encode()).hexdigest()[:16]}"
        # Made on first use, not with the cache: a process that reads none makes none.
        for directory in (self._trees, self._sizes, self._locks, self._work):
            directory.mkdir(parents=True, exist_ok=True)
        wait = self.limits.download_seconds
        # Twice at most: a tree made by another review is read at the second pass.
        for _ in range(2):
            with FileLock(self._locks / name) as lock:
                if not await lock.wait(SHARED, wait):
                    raise SnapshotRefused("another review's download of it took too long")
                tree = self._trees / name
                if tree.is_dir():
                    os.utime(tree)
                    yield tree
                    return
            with FileLock(self._locks / name) as lock:
                if not await lock.wait(EXCLUSIVE, wait):
                    raise SnapshotRefused("another review's download of it took too long")
                if not (self._trees / name).is_dir():
                    await self._make(name, fetch)
                    await self._trim()
        raise SnapshotRefused("it was evicted as soon as it was made: the cache is too small")

    async def _make(self, name: str, fetch: Fetch) -> None:
        """Download and extract the snapshot `name`, then move it into place."""
        work = self._work / f"{name}.{os.getpid()}.{time.monotonic_ns()}"
        work.mkdir()
        try:
            archive = work / "archive.tar.gz"
            try:
                async with asyncio.timeout(self.limits.download_seconds):
                    await self._download(fetch, archive)
                    top, size = await asyncio.to_thread(
                        extract, archive, work / "tree", self.limits
                    )
            except TimeoutError as exc:
                raise SnapshotRefused("its download took too long") from exc
            (self._sizes / name).write_text(str(size))
            top.rename(self._trees / name)
            os.utime(self._trees / name)
        finally:
            await asyncio.to_thread(shutil.rmtree, work, ignore_errors=True)

    async def _download(self, fetch: Fetch, archive: Path) -> None:
        """The archive streamed to the file `archive`, within its cap."""
        written = 0
        with archive.open("wb") as file:
            async with fetch() as chunks:
                async for chunk in chunks:
                    written += len(chunk)
                    if written > self.limits.archive_bytes:
                        raise SnapshotRefused(
                            f"the repository's archive is larger than the "
                            f"{self.limits.archive_bytes // 2**20:,} MiB a review reads"
                        )
                    file.write(chunk)

    async def _trim(self) -> None:
        """Remove the least recently used trees no one reads until the cache is within its
        cap, one process at a time."""
        with FileLock(self._locks / "trimming") as lock:
            if await lock.wait(EXCLUSIVE, self.limits.download_seconds):
                await asyncio.to_thread(self._trim_now)

    def _trim_now(self) -> None:
        trees = sorted((entry.stat().st_mtime, entry.name) for entry in self._trees.iterdir())
        sizes = {name: self._size(name) for _, name in trees}
        total = sum(sizes.values())
        for _, name in trees:
            if total <= self.limits.cache_bytes:
                break
            if self._remove(name):
                total -= sizes[name]
        self._remove_stale_work()

    def _size(self, name: str) -> int:
        try:
            return int((self._sizes / name).read_text())
        except (OSError, ValueError):
            return 0

    def _remove(self, name: str) -> bool:
        """Remove the tree `name` unless a review reads it; whether it was removed."""
        with FileLock(self._locks / name) as lock:
            if not lock.take(EXCLUSIVE):
                return False
            gone = self._work / f"{name}.evicted.{os.getpid()}.{time.monotonic_ns()}"
            (self._trees / name).rename(gone)
            (self._sizes / name).unlink(missing_ok=True)
        log.info("snapshot %s evicted from the cache", name)
        shutil.rmtree(gone, ignore_errors=True)
        return True

    def _remove_stale_work(self) -> None:
        stale = time.time() - STALE_WORK_SECONDS
        for entry in self._work.iterdir():
            try:
                old = entry.stat().st_mtime < stale
            except FileNotFoundError:  # finished meanwhile by its own process
                continue
            if old:
                shutil.rmtree(entry, ignore_errors=True)

    @property
    def kept_bytes(self) -> int:
        """The bytes of the trees the cache keeps."""
        if not self._trees.is_dir():
            return 0
        return sum(self._size(entry.name) for entry in self._trees.iterdir())


def snapshots_for(settings: Settings) -> SnapshotCache | None:
    """The cache of snapshots under `TIEBREAK_DATA_DIR`, as the settings bound it (a worker's
    and `tiebreak review`'s alike); None when they turn it off."""
    if not settings.tiebreak_snapshot_cache_mb:
        return None
    most = settings.tiebreak_snapshot_max_mb * MIB
    limits = SnapshotLimits(
        archive_bytes=min(SnapshotLimits.archive_bytes, most),
        tree_bytes=most,
        cache_bytes=settings.tiebreak_snapshot_cache_mb * MIB,
    )
    return SnapshotCache(settings.tiebreak_data_dir / "snapshots", limits)
