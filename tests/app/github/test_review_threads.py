"""Who resolved a pull request's review threads, read over real githubkit against the fake
GitHub: the user GitHub names, no one for an App's bot user (Tiebreak's own resolving
included), and the App's bot user only by its full `<slug>[bot]` login, never by a person's
login that happens to be its slug."""

from collections.abc import Iterator

import pytest

from app.events import PullKey
from app.github.client import GitHubApp, Installation
from app.github.models import ThreadResolution
from tests.fakes.github_api import AppKey, FakeGitHub

REPO, NUMBER, INSTALLATION, APP_ID = "octo/shop", 7, 3, 42
HEAD, BASE = "a" * 40, "b" * 40
REF = PullKey(installation_id=INSTALLATION, owner="octo", repo="shop", number=NUMBER)
DIFF = (
    "diff --git a/app.py b/app.py\nnew file mode 100644\n--- /dev/null\n+++ b/app.py\n"
    "@@ -0,0 +1,5 @@\n+a = 1\n+b = 2\n+c = 3\n+d = 4\n+e = 5\n"
)


@pytest.fixture
def github(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF)
        yield fake


def installation(github: FakeGitHub, key: AppKey) -> Installation:
    return GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False).installation(
        INSTALLATION
    )


async def test_each_resolved_thread_comes_with_who_resolved_it(
    github: FakeGitHub, key: AppKey
) -> None:
    alices, apps, slugs, bots, opens = (
        github.add_review_comment(REPO, NUMBER, "app.py", line, f"Line {line}?")
        for line in (1, 2, 3, 4, 5)
    )
    github.resolve_thread(REPO, NUMBER, alices, by="alice")
    github.resolve_thread(REPO, NUMBER, slugs, by=github.app_slug)  # a person of that login
    # GitHub names no `Bot` as a thread's resolver; were it to name the App's, it would count.
    github.resolve_thread(REPO, NUMBER, bots, by=f"{github.app_slug.upper()}[bot]")
    client = installation(github, key)

    assert await client.resolve_thread(REF, apps)
    resolved = await client.resolved_threads(REF)

    assert resolved == {
        alices: ThreadResolution(resolver="alice"),
        apps: ThreadResolution(),
        slugs: ThreadResolution(resolver=github.app_slug),
        bots: ThreadResolution(resolver=f"{github.app_slug.upper()}[bot]", by_app=True),
    }
    assert opens not in resolved
    assert await client.unresolve_thread(REF, alices)
    assert alices not in await client.resolved_threads(REF)
    assert not github.thread_resolved(REPO, NUMBER, alices)
