"""The installation in memory answers as the real client does against the fake GitHub, for
what the jobs' tests ask of it: each scenario runs on both."""

from collections.abc import AsyncIterator

import pytest

from app.bodies import CheckRunUpdate, Conclusion, NewCheckRun, ReviewComment, ReviewDraft
from app.bodies import ReviewEvent as Event
from app.events import PullRequestRef
from app.github.client import GitHubApp
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.github.models import ThreadResolution
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.github_api_kit import APP_ID, HEAD, INSTALLATION, NAME, NUMBER, OWNER
from tests.fakes.installation import FakeInstallation

REF = PullRequestRef(
    installation_id=INSTALLATION, owner=OWNER, repo=NAME, number=NUMBER, head_sha=HEAD
)
MISSING = 999_999
"""An id no comment has."""


@pytest.fixture(params=["client", "memory"])
async def github(
    request: pytest.FixtureRequest, fake: FakeGitHub, app_key: AppKey
) -> AsyncIterator[InstallationClient]:
    if request.param == "memory":
        yield FakeInstallation()
        return
    app = GitHubApp(APP_ID, app_key.private_pem, fake.base_url, retry=False)
    yield app.installation(INSTALLATION)
    await app.aclose()


async def test_a_review_s_comments_start_threads_that_are_replied_to_and_resolved(
    github: InstallationClient,
) -> None:
    comment = ReviewComment(path="app.py", line=3, body="On line 3.")
    review = ReviewDraft(
        commit_id=HEAD, body="The review.", event=Event.COMMENT, comments=[comment]
    )

    await github.create_review(REF, review)
    (root,) = await github.own_review_comments(REF)
    await github.reply_in_thread(REF, root.id, "A reply.")

    assert await github.own_review_bodies(REF) == ["The review."]
    assert (root.path, root.body, root.in_reply_to_id) == ("app.py", "On line 3.", None)
    assert await github.review_comment_location(REF, root.id) == ("app.py", 3)
    _, reply = await github.own_review_comments(REF)
    assert (reply.body, reply.in_reply_to_id) == ("A reply.", root.id)
    assert await github.resolved_threads(REF) == {}
    assert await github.resolve_thread(REF, root.id)
    # GitHub names no user for the App's own resolving: its bot user is no `User`.
    assert await github.resolved_threads(REF) == {root.id: ThreadResolution()}
    assert not await github.resolve_thread(REF, MISSING)
    assert await github.unresolve_thread(REF, root.id)
    assert await github.resolved_threads(REF) == {}
    assert not await github.unresolve_thread(REF, MISSING)


async def test_a_reply_in_a_thread_that_is_not_there_is_refused_with_404(
    github: InstallationClient,
) -> None:
    with pytest.raises(GitHubError) as refused:
        await github.reply_in_thread(REF, MISSING, "A reply.")

    assert refused.value.status == 404


async def test_the_app_s_comment_is_read_back_and_edited_in_place(
    github: InstallationClient,
) -> None:
    first = await github.comment(REF, "First.")
    second = await github.comment(REF, "Second.")

    await github.edit_comment(REF, first, "First, edited.")

    comments = await github.own_issue_comments(REF)
    assert [(c.id, c.body) for c in comments] == [(first, "First, edited."), (second, "Second.")]
    with pytest.raises(GitHubError) as refused:
        await github.edit_comment(REF, MISSING, "Nowhere.")
    assert refused.value.status == 404


async def test_a_check_run_is_in_progress_until_completed(github: InstallationClient) -> None:
    check_id = await github.create_check_run(REF, NewCheckRun(status="in_progress"))
    assert await github.check_run_status(REF, check_id) == "in_progress"

    await github.update_check_run(
        REF, check_id, CheckRunUpdate(status="completed", conclusion=Conclusion.NEUTRAL)
    )

    assert await github.check_run_status(REF, check_id) == "completed"


async def test_a_run_s_check_runs_are_found_by_its_id_done_or_not(
    github: InstallationClient,
) -> None:
    first = await github.create_check_run(REF, NewCheckRun(status="in_progress", external_id="r1"))
    await github.create_check_run(REF, NewCheckRun(status="in_progress", external_id="r2"))
    second = await github.create_check_run(REF, NewCheckRun(status="in_progress", external_id="r1"))
    await github.update_check_run(
        REF, first, CheckRunUpdate(status="completed", conclusion=Conclusion.NEUTRAL)
    )

    found = await github.run_check_runs(REF, "r1")

    assert [(run.id, run.status) for run in found] == [
        (first, "completed"),
        (second, "in_progress"),
    ]


async def test_labels_and_permissions_need_nothing_set_up(github: InstallationClient) -> None:
    await github.ensure_label(REF, "Unresolved", "d93f0b", "Tiebreak could not settle it")
    await github.ensure_label(REF, "Unresolved", "d93f0b", "Tiebreak could not settle it")
    await github.add_label(REF, "Unresolved")
    await github.remove_label(REF, "Unresolved")
    await github.remove_label(REF, "Unresolved")

    assert await github.permission(REF, "stranger") == "none"
