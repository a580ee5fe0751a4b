"""Whose resolving of a finding's thread counts, and reopening the threads of findings that
stand, on an installation in memory. End to end (webhooks, a real worker, the fake GitHub):
`tests/app/web/test_resolved_threads.py`."""

import pytest

from agents.diff import Diff
from agents.protocol import Finding
from app.github.models import ThreadResolution
from app.publishing.fingerprints import Fingerprint
from app.publishing.markers import REOPENED_MARKER
from app.publishing.rereview import PostedThread, ThreadState
from app.review.collaborators import Permissions
from app.review.resolutions import heeded, reopen
from tests.fakes.installation import FakeInstallation
from tests.scenarios.debates import PAYMENTS
from tests.scenarios.reviews import DIFF, REF

CLAIM = "log is undefined."


def posted(github: FakeInstallation, state: ThreadState, resolver: str = "") -> PostedThread:
    """A thread of Tiebreak's on the payments file, resolved (or not) as `state` says."""
    finding = Finding(path=PAYMENTS, start_line=16, end_line=16, severity="major", claim=CLAIM)
    fingerprint = Fingerprint.of(finding, Diff.parse(DIFF))
    comment_id = github.thread(PAYMENTS, 16, f"{CLAIM}\n\n{fingerprint.marker(PAYMENTS)}")
    return PostedThread(
        comment_id=comment_id, fingerprint=fingerprint, state=state, resolver=resolver
    )


async def test_a_person_s_resolving_counts_only_if_they_may_write_each_asked_about_once() -> None:
    github = FakeInstallation()
    github.permissions.update({"maintainer": "write", "octocat": "read"})
    threads = [
        posted(github, ThreadState.BY_PERSON, "maintainer"),
        posted(github, ThreadState.BY_PERSON, "octocat"),
        posted(github, ThreadState.BY_PERSON, "OctoCat"),
        posted(github, ThreadState.BY_TIEBREAK),
        posted(github, ThreadState.DISREGARDED),
        posted(github, ThreadState.OPEN),
    ]

    marked = await heeded(threads, Permissions(github, REF))

    assert [t.state for t in marked] == [
        ThreadState.BY_WRITER,
        ThreadState.DISREGARDED,
        ThreadState.DISREGARDED,
        ThreadState.BY_TIEBREAK,
        ThreadState.DISREGARDED,
        ThreadState.OPEN,
    ]
    assert [t.dismissed for t in marked] == [True, False, False, True, False, False]
    assert github.calls.count("permission") == 2  # octocat once, whatever the case


async def test_a_resolver_whose_permission_cannot_be_read_is_asked_again_later(
    caplog: pytest.LogCaptureFixture,
) -> None:
    github = FakeInstallation()
    github.permissions["maintainer"] = "write"
    github.fail_next("permission", 502)
    thread = posted(github, ThreadState.BY_PERSON, "maintainer")

    (unknown,) = await heeded([thread], Permissions(github, REF))
    (known,) = await heeded([thread], Permissions(github, REF))

    # Neither dismissed nor reopened until GitHub says.
    assert unknown.state is ThreadState.BY_PERSON
    assert not unknown.dismissed
    assert "could not ask whether maintainer may write" in caplog.text
    assert known.state is ThreadState.BY_WRITER


async def test_a_thread_is_reopened_every_time_and_told_why_once() -> None:
    github = FakeInstallation()
    thread = posted(github, ThreadState.DISREGARDED, "octocat")
    github.resolved[thread.comment_id] = ThreadResolution(resolver="octocat")

    await reopen(github, REF, [thread])
    # Resolved again by the same person: reopened again, its reply already there.
    github.resolved[thread.comment_id] = ThreadResolution(resolver="octocat")
    await reopen(github, REF, [thread.model_copy(update={"reopened": True})])

    assert thread.comment_id not in github.resolved
    (told,) = [c for c in github.review_comments if c.in_reply_to_id == thread.comment_id]
    assert told.body.startswith("Reopened: only someone with write access")
    assert told.body.endswith(REOPENED_MARKER)


async def test_a_thread_gone_or_refused_is_not_told_and_fails_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    github = FakeInstallation()
    refused = posted(github, ThreadState.DISREGARDED, "octocat")
    gone = refused.model_copy(update={"comment_id": 999_999})
    github.fail_next("unresolve_thread", 403)

    await reopen(github, REF, [refused, gone])

    assert github.calls.count("unresolve_thread") == 2
    assert "reply_in_thread" not in github.calls
    assert f"could not reopen thread {refused.comment_id}" in caplog.text
