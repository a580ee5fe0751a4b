"""Snapshots of repositories at commits, kept on the worker's disk: one download per commit.

The cache is a directory, shared by every worker process on the disk (and by `tiebreak review`
of a pull request by its address, under the same `TIEBREAK_DATA_DIR`):

    trees/{name}/     a snapshot's files, the archive's top directory moved there whole
    sizes/{name}      what they take of the disk, bytes and members, for the caps
    locks/{name}      its lock; `locks/trimming` the lock of the whole cache's eviction
    work/             downloads and extractions under way, and trees being removed

A snapshot is made in `work/` and moved into `trees/` by one `rename(2)`, so a reader sees a
whole tree or none. Its lock, held exclusively while it is made, has every other review that
asks for it (in this process or another) wait and then read what the first downloaded; held
shared while it is read, it keeps the tree from eviction. Each use touches the tree; once
one is made, the least recently used trees that no one is reading are removed until the
cache's bytes and members are within their caps (it passes them only while a new tree is
extracted). Both count what the trees take of the disk, not what their archives declare: a
disk runs out of inodes as it runs out of blocks, and a tree of empty files takes both.
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
from app.snapshots.extraction import extracted
from app.snapshots.limits import MIB, Footprint, SnapshotLimits, SnapshotRefused
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
                    top, taken = await extracted(archive, work / "tree", self.limits)
            except TimeoutError as exc:
                raise SnapshotRefused("its download and extraction took too long") from exc
            (self._sizes / name).write_text(f"{taken.bytes} {taken.members}")
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
        taken = {name: self._taken(name) for _, name in trees}
        total = sum(t.bytes for t in taken.values())
        members = sum(t.members for t in taken.values())
        for _, name in trees:
            if total <= self.limits.cache_bytes and members <= self.limits.cache_files:
                break
            if self._remove(name):
                total -= taken[name].bytes
                members -= taken[name].members
        self._remove_stale_work()

    def _taken(self, name: str) -> Footprint:
        """What the tree `name` takes of the disk; as much as a snapshot may take when that
        cannot be read (a process died writing it), so that it is evicted first rather than
        never counted."""
        try:
            size, members = (int(n) for n in (self._sizes / name).read_text().split())
        except (OSError, ValueError):
            return Footprint(self.limits.tree_bytes, self.limits.tree_files)
        return Footprint(size, members)

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
    def kept(self) -> Footprint:
        """What the trees the cache keeps take of the disk."""
        if not self._trees.is_dir():
            return Footprint()
        taken = [self._taken(entry.name) for entry in self._trees.iterdir()]
        return Footprint(sum(t.bytes for t in taken), sum(t.members for t in taken))


def snapshots_for(settings: Settings) -> SnapshotCache | None:
    """The cache of snapshots under `TIEBREAK_DATA_DIR`, as the settings bound it (a worker's
    and `tiebreak review`'s alike); None when they turn it off."""
    if not settings.tiebreak_snapshot_cache_mb:
        return None
    most = settings.tiebreak_snapshot_max_mb * MIB
    limits = SnapshotLimits(
        archive_bytes=min(SnapshotLimits.archive_bytes, most),
        tree_bytes=most,
        tree_files=settings.tiebreak_snapshot_max_files,
        cache_bytes=settings.tiebreak_snapshot_cache_mb * MIB,
        cache_files=settings.tiebreak_snapshot_cache_files,
    )
    return SnapshotCache(settings.tiebreak_data_dir / "snapshots", limits)
