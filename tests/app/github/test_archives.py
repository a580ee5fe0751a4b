"""A repository's snapshot downloaded through GitHub's archive endpoint, over real githubkit,
against the fake GitHub: the redirect followed, the bytes streamed, a failure a GitHubError."""

import gzip
import io
import tarfile
from collections.abc import Iterator

import pytest

from app.events import PullKey
from app.github.client import GitHubApp, Installation
from app.github.errors import GitHubError
from tests.fakes.github_api import AppKey, FakeGitHub

REPO, NUMBER, INSTALLATION, APP_ID = "octo/shop", 7, 3, 42
HEAD, BASE = "a" * 40, "b" * 40
REF = PullKey(installation_id=INSTALLATION, owner="octo", repo="shop", number=NUMBER)


@pytest.fixture
def github(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE)
        yield fake


def installation(github: FakeGitHub, key: AppKey) -> Installation:
    return GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False).installation(
        INSTALLATION
    )


async def download(client: Installation, sha: str) -> list[bytes]:
    async with client.tarball(REF, sha) as chunks:
        return [chunk async for chunk in chunks]


async def test_the_head_is_downloaded_through_the_redirect_as_the_archive_s_bytes(
    github: FakeGitHub, key: AppKey
) -> None:
    github.set_file(REPO, HEAD, "shop/pay.py", "def pay() -> None: ...\n")

    chunks = await download(installation(github, key), HEAD)

    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(b"".join(chunks)))) as tar:
        names = tar.getnames()
    assert names == ["octo-shop-aaaaaaa", "octo-shop-aaaaaaa/shop", "octo-shop-aaaaaaa/shop/pay.py"]
    assert len(github.requests_to("GET", rf"/repos/{REPO}/tarball/{HEAD}")) == 1


@pytest.mark.parametrize("status", [404, 502])
async def test_a_refused_download_is_a_github_error_with_its_status(
    github: FakeGitHub, key: AppKey, status: int
) -> None:
    github.fail_next("GET", rf"/repos/{REPO}/tarball/.*", status)

    with pytest.raises(GitHubError) as refused:
        await download(installation(github, key), HEAD)

    assert refused.value.status == status
