"""Reading Tiebreak's threads back from a pull request, keeping its summary comment and
answering threads whose findings are gone, on an installation in memory.

That only the App's own posts are read back, whoever else writes its markers, is the
gateway's (`tests/app/github/test_client.py`) and the end-to-end tests'
(`tests/app/jobs/test_authorship.py`).
"""

import pytest

from agents.diff import Diff
from agents.protocol import Finding
from app.github.errors import GitHubError
from app.github.models import ThreadResolution
from app.publishing import hearing_text
from app.publishing.fingerprints import Fingerprint
from app.publishing.markers import ANSWERED_MARKER, REOPENED_MARKER, SUMMARY_MARKER
from app.publishing.publication import ThreadReply
from app.publishing.rereview import ThreadState
from app.review.posted import answer, posted_threads, write_summary
from tests.fakes.installation import FakeInstallation
from tests.scenarios.debates import PAYMENTS
from tests.scenarios.reviews import DIFF, REF

LEARNED = "\n\nLearned #1 for `app/**`: log is injected. `/tiebreak forget 1` removes it."


def fingerprint(line: int, claim: str) -> Fingerprint:
    found = Finding(path=PAYMENTS, start_line=line, end_line=line, severity="major", claim=claim)
    return Fingerprint.of(found, Diff.parse(DIFF))


def thread(github: FakeInstallation, line: int, claim: str) -> int:
    """Tiebreak's inline comment on `line` of the payments file, ending with its fingerprint."""
    body = f"**🟠 Major** · unresolved\n\n{claim}\n\n{fingerprint(line, claim).marker(PAYMENTS)}"
    return github.thread(PAYMENTS, line, body)


async def test_tiebreak_s_threads_are_read_with_what_people_did_to_them() -> None:
    github = FakeInstallation()
    plain = thread(github, 16, "log is undefined.")
    resolved = thread(github, 17, "The refund is not logged.")
    disliked = thread(github, 13, "The balance may go negative.")
    answered = thread(github, 14, "The check is off by one.")
    github.resolved[resolved] = ThreadResolution(resolver="octocat")
    github.dislike(disliked)
    await github.reply_in_thread(REF, answered, f"No longer found.\n\n{ANSWERED_MARKER}")
    # Tiebreak's reply without the marker (an answer to a person) answers nothing.
    await github.reply_in_thread(REF, plain, "Heard.")

    threads = {t.comment_id: t for t in await posted_threads(github, REF)}

    assert set(threads) == {plain, resolved, disliked, answered}
    assert threads[plain].fingerprint == fingerprint(16, "log is undefined.")
    assert not threads[plain].dismissed
    assert threads[resolved].resolved
    assert (threads[resolved].state, threads[resolved].resolver) == (
        ThreadState.BY_PERSON,
        "octocat",
    )
    assert not threads[resolved].dismissed  # until a review finds the person may write
    assert threads[disliked].thumbs_down
    assert not threads[disliked].resolved
    assert not threads[disliked].dismissed  # until a review finds a writer among who reacted
    assert threads[answered].answered
    assert not threads[plain].answered


@pytest.mark.parametrize(
    ("resolution", "reply", "state"),
    [
        (ThreadResolution(resolver="tiebreak[bot]", by_app=True), "", ThreadState.BY_TIEBREAK),
        (
            ThreadResolution(),
            hearing_text.withdrawn("F1", "Right.", LEARNED),
            ThreadState.BY_TIEBREAK,
        ),
        (ThreadResolution(), "", ThreadState.DISREGARDED),
        (ThreadResolution(), f"Reopened.\n\n{REOPENED_MARKER}", ThreadState.DISREGARDED),
        (
            ThreadResolution(resolver="octocat"),
            hearing_text.withdrawn("F1", "Right."),
            ThreadState.BY_PERSON,
        ),
    ],
    ids=[
        "named as the App",
        "no one named, after Tiebreak withdrew it",
        "no one named",
        "no one named, after Tiebreak reopened it",
        "a person, after Tiebreak withdrew it",
    ],
)
async def test_who_resolved_a_thread_is_read_for_what_it_is_worth(
    resolution: ThreadResolution, reply: str, state: ThreadState
) -> None:
    github = FakeInstallation()
    resolved = thread(github, 17, "The refund is not logged.")
    github.resolved[resolved] = resolution
    if reply:
        await github.reply_in_thread(REF, resolved, reply)

    (posted,) = await posted_threads(github, REF)

    assert posted.state is state
    assert posted.dismissed is (state is ThreadState.BY_TIEBREAK)
    assert posted.reopened is (REOPENED_MARKER in reply)


async def test_a_comment_without_a_fingerprint_is_no_thread_of_tiebreak_s() -> None:
    github = FakeInstallation()
    github.thread(PAYMENTS, 16, "A comment of the App's that names no finding.")

    assert await posted_threads(github, REF) == []


async def test_a_thread_on_the_file_a_fix_was_suggested_on_is_its_finding_s() -> None:
    """A finding's fix suggested on another file sits there: its thread is still the
    finding's, and a person's 👎 on it is the finding's too."""
    github = FakeInstallation()
    found = fingerprint(16, "log is undefined.")
    disliked = github.thread("app/ledger.py", 3, f"A fix.\n\n{found.marker('app/ledger.py')}")
    github.dislike(disliked)

    (posted,) = await posted_threads(github, REF)

    assert (posted.comment_id, posted.fingerprint, posted.thumbs_down) == (disliked, found, True)


async def test_unknown_resolution_leaves_every_thread_open(
    caplog: pytest.LogCaptureFixture,
) -> None:
    github = FakeInstallation()
    github.resolved[thread(github, 16, "log is undefined.")] = ThreadResolution(
        resolver="maintainer"
    )
    github.fail_next("resolved_threads", 502)

    (thread_,) = await posted_threads(github, REF)

    assert not thread_.resolved
    assert "could not read which threads" in caplog.text


async def test_the_summary_is_written_once_then_edited_in_place() -> None:
    github = FakeInstallation()
    await github.comment(REF, "An earlier comment of Tiebreak's, not its summary.")

    await write_summary(github, REF, f"{SUMMARY_MARKER}\nFirst.")
    await write_summary(github, REF, f"{SUMMARY_MARKER}\nSecond.")
    await write_summary(github, REF, f"{SUMMARY_MARKER}\nSecond.")

    other, summary = github.issue_comments
    assert other.body == "An earlier comment of Tiebreak's, not its summary."
    assert summary.body == f"{SUMMARY_MARKER}\nSecond."
    assert github.calls.count("comment") == 2
    assert github.calls.count("edit_comment") == 1


async def test_comments_just_read_are_not_read_again() -> None:
    github = FakeInstallation()
    await github.comment(REF, f"{SUMMARY_MARKER}\nFirst.")
    comments = await github.own_issue_comments(REF)

    await write_summary(github, REF, f"{SUMMARY_MARKER}\nSecond.", comments)

    assert github.calls.count("own_issue_comments") == 1
    assert [c.body for c in github.issue_comments] == [f"{SUMMARY_MARKER}\nSecond."]


@pytest.mark.parametrize("status", [404, 422])
async def test_a_thread_gone_meanwhile_is_skipped_and_the_others_answered(status: int) -> None:
    github = FakeInstallation()
    gone, kept = thread(github, 16, "log is undefined."), thread(github, 17, "Not logged.")
    github.fail_next("reply_in_thread", status)

    await answer(
        github,
        REF,
        [ThreadReply(thread=gone, body="Gone."), ThreadReply(thread=kept, body="Gone.")],
    )

    (reply,) = [c for c in github.review_comments if c.in_reply_to_id is not None]
    assert (reply.in_reply_to_id, reply.body) == (kept, "Gone.")


async def test_a_reply_github_fails_otherwise_fails_the_answer() -> None:
    github = FakeInstallation()
    github.fail_next("reply_in_thread", 502)

    with pytest.raises(GitHubError) as failed:
        await answer(github, REF, [ThreadReply(thread=thread(github, 16, "x"), body="Gone.")])

    assert failed.value.status == 502
