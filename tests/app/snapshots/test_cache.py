"""Snapshots kept on disk: one download per commit whoever asks, the least recently used
evicted past the cap, nothing kept of a download that failed or an archive refused."""

import asyncio
import sys
import threading
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from app.github.errors import GitHubError
from app.snapshots import extraction
from app.snapshots.cache import Fetch, SnapshotCache
from app.snapshots.limits import BLOCK, Footprint, SnapshotLimits, SnapshotRefused
from tests.kits.archives import TOP, archive, directory, empty_files, honest, link

REPO = "octo/app"
SHAS = [f"{i}" * 40 for i in range(1, 6)]
FILES = {"app/pay.py": "def pay() -> None: ...\n", "README.md": "# App\n"}
TREE = Footprint(4 * BLOCK, 4)
"""What FILES take on disk: the top directory, app/ and the two files, a block each."""
TREE_BYTES = TREE.bytes


class Downloads:
    """Archives served to the cache, each download counted."""

    def __init__(self, data: bytes = honest(FILES), *, fail: Exception | None = None) -> None:
        self.data = data
        self.fail = fail
        self.count = 0
        self.served = 0
        """Downloads served to their end."""
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    def __call__(self) -> Fetch:
        @asynccontextmanager
        async def fetch() -> AsyncIterator[AsyncIterator[bytes]]:
            self.count += 1
            self.started.set()
            await self.release.wait()
            if self.fail is not None:
                raise self.fail
            yield self._chunks()

        return fetch

    async def _chunks(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.data), 100):
            yield self.data[start : start + 100]
        self.served += 1


def leftovers(root: Path) -> set[str]:
    """What the cache holds besides its own directories, its sizes and its locks."""
    made = {str(p.relative_to(root)) for p in root.iterdir()} - {"locks", "sizes", "trees", "work"}
    return made | {
        str(p.relative_to(root)) for d in ("trees", "work") for p in (root / d).iterdir()
    }


async def test_a_commit_is_downloaded_once_and_then_read_from_the_disk(tmp_path: Path) -> None:
    cache, downloads = SnapshotCache(tmp_path), Downloads()

    async with cache.tree(REPO, SHAS[0], downloads()) as first:
        assert (first / "app" / "pay.py").read_text() == FILES["app/pay.py"]
    async with cache.tree(REPO, SHAS[0], downloads()) as again:
        assert again == first
        assert (again / "README.md").read_text() == FILES["README.md"]

    assert downloads.count == 1
    assert cache.kept == TREE


async def test_the_same_commit_of_another_repository_is_another_snapshot(tmp_path: Path) -> None:
    cache, downloads = SnapshotCache(tmp_path), Downloads()

    async with cache.tree(REPO, SHAS[0], downloads()) as ours:
        pass
    async with cache.tree("octo/fork", SHAS[0], downloads()) as theirs:
        pass

    assert ours != theirs
    assert downloads.count == 2


async def test_reviews_asking_for_one_commit_at_once_download_it_once(tmp_path: Path) -> None:
    # Two caches on one directory, as two worker processes on one disk.
    caches = [SnapshotCache(tmp_path), SnapshotCache(tmp_path)]
    downloads = Downloads()
    downloads.release.clear()

    async def read(cache: SnapshotCache) -> str:
        async with cache.tree(REPO, SHAS[0], downloads()) as tree:
            return (tree / "app" / "pay.py").read_text()

    asking = [asyncio.create_task(read(c)) for c in caches * 2]
    await downloads.started.wait()
    await asyncio.sleep(0.2)  # the others are waiting on the first one's lock by now
    downloads.release.set()

    assert await asyncio.gather(*asking) == [FILES["app/pay.py"]] * 4
    assert downloads.count == 1


async def test_the_least_recently_used_snapshots_are_evicted_past_the_cap(tmp_path: Path) -> None:
    cache = SnapshotCache(
        tmp_path, SnapshotLimits(tree_bytes=TREE_BYTES, cache_bytes=3 * TREE_BYTES)
    )
    downloads = Downloads()
    for sha in SHAS[:3]:
        async with cache.tree(REPO, sha, downloads()):
            pass
    async with cache.tree(REPO, SHAS[0], downloads()):  # used again: now the most recent
        pass

    async with cache.tree(REPO, SHAS[3], downloads()):
        pass

    assert cache.kept.bytes <= 3 * TREE_BYTES
    assert downloads.count == 4
    async with cache.tree(REPO, SHAS[0], downloads()), cache.tree(REPO, SHAS[2], downloads()):
        pass
    assert downloads.count == 4  # kept
    async with cache.tree(REPO, SHAS[1], downloads()):
        pass
    assert downloads.count == 5  # it was evicted, and is downloaded again


async def test_a_snapshot_being_read_is_not_evicted(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path, SnapshotLimits(tree_bytes=TREE_BYTES, cache_bytes=TREE_BYTES))
    downloads = Downloads()

    async with (
        cache.tree(REPO, SHAS[0], downloads()) as reading,
        cache.tree(REPO, SHAS[1], downloads()),
    ):
        assert (reading / "README.md").read_text() == FILES["README.md"]

    async with cache.tree(REPO, SHAS[2], downloads()):
        pass
    assert cache.kept == TREE


@pytest.mark.parametrize(
    ("downloads", "refusal"),
    [
        (Downloads(archive(directory(TOP), link(f"{TOP}/etc", "/etc"))), SnapshotRefused),
        (Downloads(honest({"big.bin": "0" * 20_000})), SnapshotRefused),
        (Downloads(b"\x1f\x8b" + b"0" * 5_000), SnapshotRefused),
        (Downloads(fail=GitHubError("GitHub answered 404", status=404)), GitHubError),
    ],
    ids=["a symlink to /etc", "too many bytes", "too large an archive", "a 404"],
)
async def test_nothing_is_kept_of_a_snapshot_refused_or_not_downloaded(
    tmp_path: Path, downloads: Downloads, refusal: type[Exception]
) -> None:
    cache = SnapshotCache(tmp_path, SnapshotLimits(archive_bytes=4_000, tree_bytes=4 * BLOCK))

    for _ in range(2):
        with pytest.raises(refusal):
            async with cache.tree(REPO, SHAS[0], downloads()):
                pass

    assert leftovers(tmp_path) == set()
    assert downloads.count == 2  # nothing remembered: the next review tries again


async def test_a_sha_that_is_no_sha_is_refused_before_any_download(tmp_path: Path) -> None:
    downloads = Downloads()

    with pytest.raises(SnapshotRefused):
        async with SnapshotCache(tmp_path).tree(REPO, "../../etc", downloads()):
            pass

    assert downloads.count == 0


EMPTY_FILES = Footprint(3_001 * BLOCK, 3_001)
"""What 1,500 directories holding an empty file each, and their top directory, take on disk."""
FEW_FILES = Footprint(201 * BLOCK, 201)
"""The same of 100 such directories."""


async def test_snapshots_of_empty_files_are_evicted_by_what_they_take_on_disk(
    tmp_path: Path,
) -> None:
    cache = SnapshotCache(
        tmp_path, SnapshotLimits(tree_bytes=EMPTY_FILES.bytes, cache_bytes=EMPTY_FILES.bytes)
    )
    downloads = Downloads(empty_files(1_500))

    for sha in SHAS[:2]:
        async with cache.tree(REPO, sha, downloads()):
            pass

    assert len(list((tmp_path / "trees").iterdir())) == 1  # the first evicted for the second
    assert cache.kept == EMPTY_FILES
    async with cache.tree(REPO, SHAS[1], downloads()):
        pass
    assert downloads.count == 2  # the second kept


async def test_the_cache_evicts_past_its_members_whatever_their_bytes(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path, SnapshotLimits(cache_files=FEW_FILES.members + 100))
    downloads = Downloads(empty_files(100))

    for sha in SHAS[:2]:
        async with cache.tree(REPO, sha, downloads()):
            pass
    async with cache.tree(REPO, SHAS[1], downloads()):
        pass
    async with cache.tree(REPO, SHAS[0], downloads()):
        pass

    assert downloads.count == 3  # the first was evicted for the second, kept
    assert cache.kept == FEW_FILES


def extracting() -> list[str]:
    """The threads of this process extracting an archive."""
    frames = sys._current_frames()
    return [
        thread.name
        for thread in threading.enumerate()
        if (frame := frames.get(thread.ident or 0)) is not None
        and any(f.f_code is extraction.extract.__code__ for f, _ in traceback.walk_stack(frame))
    ]


async def test_an_extraction_past_its_deadline_stops_and_nothing_of_it_is_kept(
    tmp_path: Path,
) -> None:
    # Some 10,000 members: seconds to extract, a fraction of one to download.
    downloads = Downloads(empty_files(5_000))
    cache = SnapshotCache(tmp_path, SnapshotLimits(download_seconds=0.5))

    with pytest.raises(SnapshotRefused, match="took too long"):
        async with cache.tree(REPO, SHAS[0], downloads()):
            pass

    assert downloads.served == 1  # the deadline passed during the extraction
    assert extracting() == []
    assert leftovers(tmp_path) == set()
