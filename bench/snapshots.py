"""What reading the repository at the head adds to a review: one download and extraction of
a mid-size repository's archive per new head, nothing for a head already in the cache.

The repository is made of real source files (by default the Python files of this
environment's installed packages, up to `--files` of them), set as the head of a pull
request on the fake GitHub (a real HTTP server in a thread of this process). The App's own
client asks for the archive (`GET /tarball/{sha}`, its redirect followed, the bytes streamed
to disk) and the cache extracts it, as a review does. The fake makes its archive once, before
the timing (on GitHub it is made by codeload). It prints the archive's and the tree's sizes
and, over `--runs`, the median wall time of a cold read (download and extraction into an
empty cache) and of a warm one (the same head, from the disk). Over loopback the download
costs no network time: add the archive's size over the worker's bandwidth to GitHub.

    uv run python -m bench.snapshots [--files 3000] [--runs 5]
"""

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from app.events import PullKey
from app.github.client import GitHubApp
from app.snapshots.cache import SnapshotCache
from tests.fakes.github_api import FakeGitHub, new_app_key

REPO, NUMBER, INSTALLATION, APP_ID = "octo/mid", 1, 1, 42
HEAD, BASE = "c" * 40, "b" * 40
REF = PullKey(installation_id=INSTALLATION, owner="octo", repo="mid", number=NUMBER)


def source_files(limit: int) -> dict[str, str]:
    """Up to `limit` Python files of the installed packages, by their path there."""
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    files: dict[str, str] = {}
    for path in sorted(site.rglob("*.py")):
        if len(files) == limit:
            break
        files[str(path.relative_to(site))] = path.read_text(errors="replace")
    return files


async def measure(files: int, runs: int) -> None:
    key = new_app_key()
    head = source_files(files)
    tree_bytes = sum(len(text.encode()) for text in head.values())
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as github:
        github.add_installation(INSTALLATION, repos=[REPO])
        github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, head_files=head)
        client = GitHubApp(APP_ID, key.private_pem, github.base_url).installation(INSTALLATION)
        async with client.tarball(REF, HEAD) as chunks:  # the fake makes its archive now
            archive_bytes = sum([len(chunk) async for chunk in chunks])
        cold: list[float] = []
        warm: list[float] = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as where:
                cache = SnapshotCache(Path(where))
                for times in (cold, warm):
                    started = time.perf_counter()
                    async with cache.tree(REPO, HEAD, lambda: client.tarball(REF, HEAD)):
                        times.append(time.perf_counter() - started)
    print(
        f"{len(head):,} files, {tree_bytes / 2**20:.1f} MiB; "
        f"archive {archive_bytes / 2**20:.1f} MiB"
    )
    print(
        f"cold (download and extraction): median {statistics.median(cold) * 1000:.0f} ms of {runs}"
    )
    print(
        f"warm (from the disk):           median {statistics.median(warm) * 1000:.1f} ms of {runs}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(measure(args.files, args.runs))


if __name__ == "__main__":
    main()
