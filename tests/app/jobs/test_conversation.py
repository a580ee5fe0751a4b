"""Reading Tiebreak's threads back from a pull request and keeping its summary comment, through
the real githubkit client against the fake GitHub."""

import pytest

from agents.diff import Diff
from agents.protocol import Finding
from app.github.client import GitHubApp, Installation
from app.jobs.conversation import posted_threads, write_summary
from app.publishing.fingerprints import Fingerprint
from app.publishing.markers import ANSWERED_MARKER, SUMMARY_MARKER
from tests.app.review_kit import summaries
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.scenarios.debates import PAYMENTS
from tests.scenarios.reviews import APP_ID, DIFF, INSTALLATION, NUMBER, REF, REPO

BOT = "tiebreak[bot]"


def installation(github: FakeGitHub, key: AppKey) -> Installation:
    return GitHubApp(APP_ID, key.private_pem, github.base_url, retry=False).installation(
        INSTALLATION
    )


def fingerprint(line: int, claim: str) -> Fingerprint:
    found = Finding(path=PAYMENTS, start_line=line, end_line=line, severity="major", claim=claim)
    return Fingerprint.of(found, Diff.parse(DIFF))


def comment(
    github: FakeGitHub, line: int, claim: str, author: str = BOT, author_type: str = "Bot"
) -> int:
    """An inline comment on `line` of the payments file, ending with its fingerprint."""
    body = f"**🟠 Major** · unresolved\n\n{claim}\n\n{fingerprint(line, claim).marker()}"
    return github.add_review_comment(
        REPO, NUMBER, PAYMENTS, line, body, author=author, author_type=author_type
    )


async def test_tiebreak_s_threads_are_read_with_what_people_did_to_them(
    github: FakeGitHub, key: AppKey
) -> None:
    plain = comment(github, 16, "log is undefined.")
    resolved = comment(github, 17, "The refund is not logged.")
    disliked = comment(github, 13, "The balance may go negative.")
    answered = comment(github, 14, "The check is off by one.")
    github.resolve_thread(REPO, NUMBER, resolved)
    github.add_reaction(REPO, disliked, "-1", user="hubot")
    github.add_reaction(REPO, plain, "+1", user="hubot")
    github.add_review_comment(
        REPO,
        NUMBER,
        PAYMENTS,
        14,
        f"No longer found.\n\n{ANSWERED_MARKER}",
        in_reply_to=answered,
        author=BOT,
        author_type="Bot",
    )
    # A person quoting a marker does not make a thread Tiebreak's.
    comment(github, 15, "Quoted by a person.", author="octocat", author_type="User")

    threads = {t.comment_id: t for t in await posted_threads(installation(github, key), REF)}

    assert set(threads) == {plain, resolved, disliked, answered}
    assert threads[plain].fingerprint == fingerprint(16, "log is undefined.")
    assert not threads[plain].dismissed
    assert threads[resolved].resolved
    assert threads[disliked].disliked
    assert not threads[disliked].resolved
    assert threads[answered].answered
    assert not threads[plain].answered


async def test_unknown_resolution_leaves_every_thread_open(
    github: FakeGitHub, key: AppKey, caplog: pytest.LogCaptureFixture
) -> None:
    resolved = comment(github, 16, "log is undefined.")
    github.resolve_thread(REPO, NUMBER, resolved)
    github.fail_next("POST", r"/graphql", 502)

    (thread,) = await posted_threads(installation(github, key), REF)

    assert not thread.resolved
    assert "could not read which threads" in caplog.text


async def test_the_summary_is_written_once_then_edited_in_place(
    github: FakeGitHub, key: AppKey
) -> None:
    gh = installation(github, key)
    marker = SUMMARY_MARKER
    github.add_issue_comment(REPO, NUMBER, f"{marker}\nA person pasting the marker.")

    await write_summary(gh, REF, f"{marker}\nFirst.")
    await write_summary(gh, REF, f"{marker}\nSecond.")
    await write_summary(gh, REF, f"{marker}\nSecond.")

    (kept,) = summaries(github)
    assert kept.body == f"{marker}\nSecond."
    assert len(github.requests_to("POST", rf"/repos/{REPO}/issues/{NUMBER}/comments")) == 1
    assert len(github.requests_to("PATCH", rf"/repos/{REPO}/issues/comments/\d+")) == 1
