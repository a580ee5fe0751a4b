"""The repository at the head, read whole once per review through GitHub's archive endpoint
and kept on the worker's disk: on a real worker and Redis, against the fake GitHub. A head
that cannot be read never fails the review, and the summary says so once."""

import tarfile
from pathlib import Path

import pytest

from agents.models.scripted import ScriptedLLM, by_role
from app.snapshots.cache import SnapshotCache
from app.snapshots.limits import MIB, Footprint, SnapshotLimits
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.archives import HOSTILE, empty_files, oversized_header
from tests.kits.review import run_review, summary
from tests.scenarios.debates import PAYMENTS, PAYMENTS_AFTER, git_diff
from tests.scenarios.reviews import BASE, HEAD, REF, REPO

TARBALL = rf"/repos/{REPO}/tarball/{HEAD}"
NOT_READ = "The repository at the head was not read"


def quiet() -> ScriptedLLM:
    return ScriptedLLM(by_role(tester=[{"findings": []}]))


def leftovers(root: Path) -> set[str]:
    """What is on the disk besides the cache's own directories and its locks: under `root`,
    and where a hostile archive aims outside it."""
    cache = root / "snapshots"
    own = {cache, *(cache / d for d in ("trees", "sizes", "locks", "work"))}
    found = {p for p in root.rglob("*") if p not in own and p.parent != cache / "locks"}
    escaped = {Path("/tmp/escaped.py"), root.parent / "escaped.py"}
    return {str(p) for p in found | {p for p in escaped if p.exists()}}


async def test_the_head_is_downloaded_once_and_a_second_review_of_it_reads_the_disk(
    github: FakeGitHub, key: AppKey, redis_url: str, tmp_path: Path
) -> None:
    snapshots = SnapshotCache(tmp_path / "snapshots")

    await run_review(github, key, redis_url, quiet(), snapshots=snapshots)
    first = len(github.requests_to("GET", TARBALL))
    await run_review(github, key, redis_url, quiet(), rerun="again", snapshots=snapshots)

    assert first == 1
    assert len(github.requests_to("GET", TARBALL)) == 1
    (tree,) = (tmp_path / "snapshots" / "trees").iterdir()
    assert (tree / PAYMENTS).read_text() == PAYMENTS_AFTER
    assert NOT_READ not in summary(github)


@pytest.mark.parametrize("data", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_hostile_archive_is_refused_and_the_review_goes_on_saying_so_once(
    github: FakeGitHub, key: AppKey, redis_url: str, tmp_path: Path, data: bytes
) -> None:
    github.replace_archive(REPO, HEAD, data)
    llm = quiet()

    await run_review(github, key, redis_url, llm, snapshots=SnapshotCache(tmp_path / "snapshots"))

    assert summary(github).count(NOT_READ) == 1
    assert "its archive" in summary(github)
    assert PAYMENTS in "".join(b.text for b in llm.requests[0].blocks)  # same-file context
    assert leftovers(tmp_path) == set()


async def test_a_repository_past_the_cap_is_reviewed_from_its_changed_files(
    github: FakeGitHub, key: AppKey, redis_url: str, tmp_path: Path
) -> None:
    snapshots = SnapshotCache(tmp_path / "snapshots", SnapshotLimits(tree_bytes=100))

    await run_review(github, key, redis_url, quiet(), snapshots=snapshots)

    assert summary(github).count(NOT_READ) == 1
    assert "larger than" in summary(github)
    assert snapshots.kept == Footprint()


async def test_a_repository_of_empty_files_is_counted_by_what_it_takes_on_disk(
    github: FakeGitHub, key: AppKey, redis_url: str, tmp_path: Path
) -> None:
    # 1,500 directories holding an empty file each: no byte declared, 12 MiB of the disk.
    github.replace_archive(REPO, HEAD, empty_files(1_500))
    snapshots = SnapshotCache(tmp_path / "snapshots", SnapshotLimits(tree_bytes=10 * MIB))

    await run_review(github, key, redis_url, quiet(), snapshots=snapshots)

    assert summary(github).count(NOT_READ) == 1
    assert "larger than the 10 MiB" in summary(github)
    assert leftovers(tmp_path) == set()


async def test_an_archive_with_a_header_of_256_mib_is_refused_saying_so(
    github: FakeGitHub, key: AppKey, redis_url: str, tmp_path: Path
) -> None:
    source = tmp_path / "archive.tar.gz"
    oversized_header(source, tarfile.GNUTYPE_LONGNAME, 256 * MIB)
    github.replace_archive(REPO, HEAD, source.read_bytes())
    source.unlink()

    result, _ = await run_review(
        github, key, redis_url, quiet(), snapshots=SnapshotCache(tmp_path / "snapshots")
    )

    assert result is not None
    assert "failed" not in result
    assert summary(github).count(NOT_READ) == 1
    assert "its archive has a header of 256 MiB, more than the 1 MiB" in summary(github)
    assert leftovers(tmp_path) == set()


@pytest.mark.parametrize("status", [404, 502])
async def test_a_failed_download_leaves_the_review_to_its_changed_files(
    github: FakeGitHub, key: AppKey, redis_url: str, tmp_path: Path, status: int
) -> None:
    github.fail_next("GET", TARBALL, status)

    result, _ = await run_review(
        github, key, redis_url, quiet(), snapshots=SnapshotCache(tmp_path / "snapshots")
    )

    assert result is not None
    assert "failed" not in result
    assert f"GitHub answered {status}" in summary(github)
    assert summary(github).count(NOT_READ) == 1


LEDGER = """\
from app.payments import refund


def cancel(order):
    # CALLER: a cancelled order refunds what was paid, whatever the balance says
    return refund(order.payment, order.paid)
"""


async def test_the_tester_reads_the_changed_function_s_callers_in_the_repository_at_the_head(
    github: FakeGitHub, key: AppKey, redis_url: str, tmp_path: Path
) -> None:
    github.set_file(REPO, HEAD, "app/ledger.py", LEDGER)
    llm = quiet()

    await run_review(github, key, redis_url, llm, snapshots=SnapshotCache(tmp_path / "snapshots"))

    prompt = "".join(b.text for b in llm.requests[0].blocks)
    assert "CALLER: a cancelled order refunds" in prompt
    assert "app/ledger.py" in prompt


async def test_a_pull_request_of_docs_alone_downloads_no_snapshot(
    github: FakeGitHub, key: AppKey, redis_url: str, tmp_path: Path
) -> None:
    docs, head = "docs/guide.md", "d" * 40
    github.add_pull(
        REPO,
        3,
        head_sha=head,
        base_sha=BASE,
        diff=git_diff({docs: ("# Guide\n", "# Guide\n\nRun it.\n")}),
        head_ref="docs",
        base_files={docs: "# Guide\n"},
        head_files={docs: "# Guide\n\nRun it.\n"},
    )
    ref = REF.model_copy(update={"number": 3, "head_sha": head})

    await run_review(
        github, key, redis_url, quiet(), ref, snapshots=SnapshotCache(tmp_path / "snapshots")
    )

    assert github.requests_to("GET", rf"/repos/{REPO}/tarball/{head}") == []
    assert NOT_READ not in summary(github, 3)
