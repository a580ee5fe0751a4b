"""The GitHub gateway over real githubkit, against the fake GitHub."""

from collections.abc import Iterator
from datetime import timedelta

import pytest

from agents.diff import Diff
from app.bodies import NewCheckRun, ReviewComment, ReviewDraft, ReviewEvent
from app.events import PullRequestRef
from app.github.client import GitHubApp, Installation
from app.github.errors import GitHubError, TokenRefused
from app.github.retry import CappedRetry
from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key
from tests.scenarios.debates import PAYMENTS, PAYMENTS_AFTER, PAYMENTS_BEFORE, WORKFLOW, git_diff

REPO, NUMBER, INSTALLATION, APP_ID = "octo/shop", 7, 3, 42
HEAD, BASE = "a" * 40, "b" * 40
REF = PullRequestRef(
    installation_id=INSTALLATION, owner="octo", repo="shop", number=NUMBER, head_sha=HEAD
)
RENAMED = (
    "diff --git a/docs/old.md b/docs/new.md\nsimilarity index 90%\nrename from docs/old.md\n"
    "rename to docs/new.md\n--- a/docs/old.md\n+++ b/docs/new.md\n@@ -1,2 +1,2 @@\n # Shop\n"
    "-Old words.\n+New words.\n"
)
DIFF = (
    git_diff(
        {
            PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER),
            WORKFLOW: ("on: push\n", "on: [push, pull_request]\n"),
        }
    )
    + RENAMED
)


@pytest.fixture(scope="module")
def key() -> AppKey:
    return new_app_key()


@pytest.fixture
def github(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF)
        yield fake


def installation(github: FakeGitHub, key: AppKey, *, retry: bool = False) -> Installation:
    return GitHubApp(APP_ID, key.private_pem, github.base_url, retry=retry).installation(
        INSTALLATION
    )


def right_lines(diff: Diff) -> dict[str, dict[int, str]]:
    return {f.path: {n: h.lines[n] for h in f.hunks for n in h.lines} for f in diff.files}


async def test_the_pull_request_and_its_diff(github: FakeGitHub, key: AppKey) -> None:
    gh = installation(github, key)

    pull = await gh.pull_request(REF)
    diff = await gh.diff(REF)

    assert (pull.head_sha, pull.base_sha, pull.base_ref) == (HEAD, BASE, "main")
    assert right_lines(Diff.parse(diff)) == right_lines(Diff.parse(DIFF))


async def test_a_diff_over_githubs_limits_is_rebuilt_from_the_files_api(
    github: FakeGitHub, key: AppKey
) -> None:
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF, too_large=True)

    rebuilt = Diff.parse(await installation(github, key).diff(REF))

    # The same files on the same new-side lines with the same text: comments land the same.
    assert right_lines(rebuilt) == right_lines(Diff.parse(DIFF))
    assert rebuilt.paths == (PAYMENTS, WORKFLOW, "docs/new.md")


async def test_only_the_apps_own_reviews_and_comments_are_read_back_its_slug_asked_once(
    github: FakeGitHub, key: AppKey
) -> None:
    app = GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False)
    github.add_review(REPO, NUMBER, "Mona's.", author="mona")
    github.add_review(REPO, NUMBER, "CI's.", author="github-actions[bot]", author_type="Bot")
    github.add_issue_comment(REPO, NUMBER, "Hubot's.", author="hubot[bot]", author_type="Bot")
    # GitHub spells a login in any case; the App's bot user is the same one.
    github.add_issue_comment(REPO, NUMBER, "Ours.", author="Tiebreak[bot]", author_type="Bot")
    ours = ReviewDraft(commit_id=HEAD, body="Ours.", event=ReviewEvent.COMMENT, comments=[])
    await app.installation(INSTALLATION).create_review(REF, ours)

    first, second = app.installation(INSTALLATION), app.installation(INSTALLATION)
    assert await first.own_review_bodies(REF) == ["Ours."]
    assert [c.body for c in await second.own_issue_comments(REF)] == ["Ours."]
    assert await second.own_review_comments(REF) == []
    assert len(github.requests_to("GET", r"/app")) == 1


async def test_a_review_is_sent_as_the_create_review_endpoint_takes_it(
    github: FakeGitHub, key: AppKey
) -> None:
    one_line = ReviewComment(path=PAYMENTS, line=16, body="On one line.")
    ranged = ReviewComment(path=PAYMENTS, line=17, start_line=13, start_side="RIGHT", body="On 5.")
    review = ReviewDraft(
        commit_id=HEAD, body="The review.", event=ReviewEvent.COMMENT, comments=[one_line, ranged]
    )

    review_id = await installation(github, key).create_review(REF, review)

    (sent,) = github.requests_to("POST", rf"/repos/{REPO}/pulls/{NUMBER}/reviews")
    # A one-line comment names no start: GitHub answers 422 to a `start_side` alone.
    assert sent.body == {
        "commit_id": HEAD,
        "body": "The review.",
        "event": "COMMENT",
        "comments": [
            {"path": PAYMENTS, "line": 16, "side": "RIGHT", "body": "On one line."},
            {
                "path": PAYMENTS,
                "line": 17,
                "side": "RIGHT",
                "start_line": 13,
                "start_side": "RIGHT",
                "body": "On 5.",
            },
        ],
    }
    assert [r.id for r in github.reviews(REPO, NUMBER)] == [review_id]


async def test_files_are_read_at_the_commit_asked_for(github: FakeGitHub, key: AppKey) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", "enabled: true\n")
    github.set_file(REPO, HEAD, ".github/tiebreak.yml", "enabled: false\n")
    gh = installation(github, key)

    assert await gh.file(REF, ".github/tiebreak.yml", BASE) == "enabled: true\n"
    assert await gh.file(REF, ".github/tiebreak.yml", HEAD) == "enabled: false\n"
    assert await gh.file(REF, "missing.yml", BASE) is None


async def test_the_label_is_created_once_and_removal_of_a_missing_label_is_fine(
    github: FakeGitHub, key: AppKey
) -> None:
    gh = installation(github, key)

    await gh.ensure_label(REF, "Unresolved", "d93f0b", "Tiebreak could not settle a finding")
    await gh.ensure_label(REF, "Unresolved", "d93f0b", "Tiebreak could not settle a finding")
    await gh.add_label(REF, "Unresolved")
    await gh.remove_label(REF, "Unresolved")
    await gh.remove_label(REF, "Unresolved")

    assert [label.name for label in github.labels(REPO)] == ["Unresolved"]
    assert github.issue_labels(REPO, NUMBER) == []


async def test_server_errors_are_retried(github: FakeGitHub, key: AppKey) -> None:
    github.fail_next("GET", rf"/repos/{REPO}/pulls/{NUMBER}$", 502)

    pull = await installation(github, key, retry=True).pull_request(REF)

    assert pull.number == NUMBER
    assert len(github.requests_to("GET", rf"/repos/{REPO}/pulls/{NUMBER}$")) == 2


async def test_a_check_run_github_created_despite_a_502_is_not_created_again(
    github: FakeGitHub, key: AppKey
) -> None:
    github.fail_next("POST", rf"/repos/{REPO}/check-runs", 502, processed=True)

    with pytest.raises(GitHubError) as refused:
        await installation(github, key, retry=True).create_check_run(
            REF, NewCheckRun(status="in_progress", external_id="run-1")
        )

    assert refused.value.status == 502
    (check,) = github.check_runs(REPO)
    assert (check.status, check.external_id) == ("in_progress", "run-1")


async def test_a_short_secondary_rate_limit_is_waited_out(github: FakeGitHub, key: AppKey) -> None:
    github.fail_next(
        "GET",
        rf"/repos/{REPO}/pulls/{NUMBER}$",
        403,
        body={"message": "You have exceeded a secondary rate limit."},
        headers={"retry-after": "1"},
    )

    pull = await installation(github, key, retry=True).pull_request(REF)

    assert pull.number == NUMBER


@pytest.mark.timeout(30)
async def test_a_rate_limit_longer_than_a_minute_is_not_slept_on(
    github: FakeGitHub, key: AppKey
) -> None:
    github.fail_next(
        "GET",
        rf"/repos/{REPO}/pulls/{NUMBER}$",
        403,
        body={"message": "You have exceeded a secondary rate limit."},
        headers={"retry-after": "3600"},
    )

    with pytest.raises(GitHubError) as refused:
        await installation(github, key, retry=True).pull_request(REF)
    assert refused.value.status == 403
    assert "You have exceeded a secondary rate limit." in str(refused.value)


def test_the_retry_cap_is_a_minute() -> None:
    assert CappedRetry().max_wait == timedelta(seconds=60)


async def test_apps_with_different_keys_in_one_process_each_sign_with_their_own(
    github: FakeGitHub, key: AppKey
) -> None:
    """The App's key is read once per process, not one key for every App: a key replaced (a
    new App client with the new key) signs with the new one."""
    other = new_app_key()
    with FakeGitHub(app_id=APP_ID, public_key_pem=other.public_pem) as renewed:
        renewed.add_installation(INSTALLATION, repos=[REPO])
        renewed.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF)

        assert (await installation(github, key).pull_request(REF)).head_sha == HEAD
        assert (await installation(renewed, other).pull_request(REF)).head_sha == HEAD
        with pytest.raises(TokenRefused, match="the App's private key is not the one GitHub"):
            await installation(renewed, key).pull_request(REF)
