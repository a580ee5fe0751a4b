"""The fake GitHub's issue comments, reactions, review comments and replies behave as
GitHub's.
"""

from datetime import UTC, datetime
from typing import Any, cast

import pydantic
import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed
from githubkit.rest import Paginator
from githubkit_schemas.latest.models import IssueComment

from tests.fakes.github_api import BODY_TOO_LONG, NOT_ACCESSIBLE, REPLY_TO_REPLY, FakeGitHub
from tests.fakes.github_api_kit import BASE, DIFF, NAME, NUMBER, OWNER, REPO, failure, payload

# -- issue comments ---------------------------------------------------------------------------


async def test_an_issue_comment_is_posted_by_the_app_listed_and_edited(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    asked = fake.add_issue_comment(REPO, NUMBER, "/tiebreak review", author="alice")

    created = await github.rest.issues.async_create_comment(
        OWNER, NAME, NUMBER, body="Reviewing again."
    )
    comment_id = created.parsed_data.id
    edited = await github.rest.issues.async_update_comment(
        OWNER, NAME, comment_id, body="Reviewed: 2 findings."
    )
    listed: list[Any] = (
        await github.rest.issues.async_list_comments(OWNER, NAME, NUMBER)
    ).parsed_data
    read = await github.rest.issues.async_get_comment(OWNER, NAME, asked)

    assert created.status_code == 201
    user = created.parsed_data.user
    assert user is not None
    assert (user.login, user.type) == ("tiebreak[bot]", "Bot")
    assert created.parsed_data.html_url == (
        f"https://github.com/{REPO}/pull/{NUMBER}#issuecomment-{comment_id}"
    )
    assert (edited.status_code, edited.parsed_data.body) == (200, "Reviewed: 2 findings.")
    assert [(c.id, c.body) for c in listed] == [
        (asked, "/tiebreak review"),
        (comment_id, "Reviewed: 2 findings."),
    ]
    assert read.parsed_data.user is not None
    assert read.parsed_data.user.login == "alice"
    assert [(c.author, c.author_type, c.body) for c in fake.issue_comments(REPO, NUMBER)] == [
        ("alice", "User", "/tiebreak review"),
        ("tiebreak[bot]", "Bot", "Reviewed: 2 findings."),
    ]
    assert payload(await github.rest.pulls.async_get(OWNER, NAME, NUMBER))["comments"] == 2


async def test_an_issue_comment_longer_than_65536_characters_is_422(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await github.rest.issues.async_create_comment(OWNER, NAME, NUMBER, body="x" * 65537)
    fitting = await github.rest.issues.async_create_comment(OWNER, NAME, NUMBER, body="x" * 65536)

    status, body = failure(exc)
    assert (status, body["message"]) == (422, "Validation Failed")
    assert body["errors"] == [
        {
            "resource": "IssueComment",
            "code": "unprocessable",
            "field": "data",
            "message": BODY_TOO_LONG,
        }
    ]
    assert fitting.status_code == 201
    assert len(fake.issue_comments(REPO, NUMBER)) == 1


async def test_comments_of_an_unknown_pull_request_or_comment_are_404(
    github: GitHub[AppInstallationAuthStrategy],
) -> None:
    with pytest.raises(RequestFailed) as pull:
        await github.rest.issues.async_create_comment(OWNER, NAME, 404, body="Hello.")
    with pytest.raises(RequestFailed) as comment:
        await github.rest.issues.async_update_comment(OWNER, NAME, 404, body="Hello.")

    assert failure(pull)[0] == failure(comment)[0] == 404


async def test_issue_comments_paginate_through_githubkit(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    ids = [fake.add_issue_comment(REPO, NUMBER, f"Comment {i}.") for i in range(5)]

    second = await github.rest.issues.async_list_comments(OWNER, NAME, NUMBER, per_page=2, page=2)
    listed: list[Any] = second.parsed_data
    pages: Paginator[IssueComment] = github.rest.paginate(
        github.rest.issues.async_list_comments,
        owner=OWNER,
        repo=NAME,
        issue_number=NUMBER,
        per_page=2,
    )
    every = [comment async for comment in pages]

    assert [c.id for c in listed] == ids[2:4]
    assert 'rel="next"' in second.headers["link"]
    assert [c.body for c in every] == [f"Comment {i}." for i in range(5)]
    calls = fake.requests_to("GET", rf"/repos/{REPO}/issues/{NUMBER}/comments")
    assert [r.query.get("page", "1") for r in calls] == ["2", "1", "2", "3"]


async def test_an_edit_changes_updated_at_and_only_the_apps_own_comments_may_be_edited(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    persons = fake.add_issue_comment(REPO, NUMBER, "/tiebreak review", author="alice")
    created = await github.rest.issues.async_create_comment(OWNER, NAME, NUMBER, body="Reviewing.")
    # GitHub's times have seconds: a later clock rather than a test that sleeps.
    monkeypatch.setattr("tests.fakes.github_api.comments._now", lambda: "2099-01-01T00:00:00Z")

    edited = await github.rest.issues.async_update_comment(
        OWNER, NAME, created.parsed_data.id, body="Reviewed."
    )
    with pytest.raises(RequestFailed) as exc:
        await github.rest.issues.async_update_comment(OWNER, NAME, persons, body="Hijacked.")

    assert edited.parsed_data.created_at == created.parsed_data.created_at
    assert edited.parsed_data.updated_at == datetime(2099, 1, 1, tzinfo=UTC)
    assert failure(exc) == (403, {**failure(exc)[1], "message": NOT_ACCESSIBLE})
    assert [c.body for c in fake.issue_comments(REPO, NUMBER)] == [
        "/tiebreak review",
        "Reviewed.",
    ]


# -- reactions --------------------------------------------------------------------------------


async def test_a_reaction_is_201_then_200_when_the_app_already_made_it(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    command = fake.add_issue_comment(REPO, NUMBER, "/tiebreak apply", author="alice")

    first = await github.rest.reactions.async_create_for_issue_comment(
        OWNER, NAME, command, content="eyes"
    )
    again = await github.rest.reactions.async_create_for_issue_comment(
        OWNER, NAME, command, content="eyes"
    )
    other = await github.rest.reactions.async_create_for_issue_comment(
        OWNER, NAME, command, content="+1"
    )
    read = await github.rest.issues.async_get_comment(OWNER, NAME, command)

    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert first.parsed_data.content == "eyes"
    assert again.parsed_data.id == first.parsed_data.id
    assert first.parsed_data.user is not None
    assert first.parsed_data.user.login == "tiebreak[bot]"
    assert fake.reactions(REPO, command) == ["eyes", "+1"]
    rollup = payload(read)["reactions"]
    assert (rollup["total_count"], rollup["eyes"], rollup["+1"], rollup["heart"]) == (2, 1, 1, 0)


async def test_a_reaction_to_a_review_comment_goes_to_the_pulls_endpoint(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    finding = fake.add_review_comment(REPO, NUMBER, "app.py", 3, "Is this right?", author="bob")
    issue_comment = fake.add_issue_comment(REPO, NUMBER, "Thanks.")

    reacted = await github.rest.reactions.async_create_for_pull_request_review_comment(
        OWNER, NAME, finding, content="rocket"
    )
    with pytest.raises(RequestFailed) as wrong_kind:
        await github.rest.reactions.async_create_for_issue_comment(
            OWNER, NAME, finding, content="rocket"
        )
    with pytest.raises(RequestFailed) as other_kind:
        await github.rest.reactions.async_create_for_pull_request_review_comment(
            OWNER, NAME, issue_comment, content="rocket"
        )

    assert reacted.status_code == 201
    assert failure(wrong_kind)[0] == failure(other_kind)[0] == 404
    assert fake.reactions(REPO, finding) == ["rocket"]
    assert fake.reactions(REPO, issue_comment) == []


async def test_a_persons_reaction_counts_in_the_comments_rollup(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    review = await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        event="COMMENT",
        comments=[{"path": "app.py", "line": 22, "side": "RIGHT", "body": "y changed."}],
    )
    ((comment,),) = [review.comments for review in fake.reviews(REPO, NUMBER)]
    thanks = fake.add_issue_comment(REPO, NUMBER, "Thanks.")

    first = fake.add_reaction(REPO, comment.id, "-1", user="alice")
    again = fake.add_reaction(REPO, comment.id, "-1", user="alice")
    fake.add_reaction(REPO, comment.id, "-1", user="bob")
    fake.add_reaction(REPO, thanks, "heart", user="tiebreak[bot]", user_type="Bot")
    listed: list[Any] = (
        await github.rest.pulls.async_list_review_comments(OWNER, NAME, NUMBER)
    ).parsed_data
    read = await github.rest.pulls.async_get_review_comment(OWNER, NAME, comment.id)
    conversation = await github.rest.issues.async_get_comment(OWNER, NAME, thanks)

    assert review.status_code == 200
    assert again == first  # the same person's same reaction is one reaction
    (rollup,) = [c.reactions for c in listed]
    assert (rollup.minus_one, rollup.plus_one, rollup.total_count) == (2, 0, 2)
    assert payload(read)["reactions"]["-1"] == 2
    assert payload(conversation)["reactions"]["heart"] == 1
    assert fake.reactions(REPO, comment.id) == ["-1", "-1"]
    with pytest.raises(ValueError, match="not one of"):
        fake.add_reaction(REPO, thanks, "thumbsdown")
    with pytest.raises(KeyError):
        fake.add_reaction(REPO, 999_999, "-1")


async def test_an_unknown_reaction_is_refused(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    unchecked: GitHub[AppInstallationAuthStrategy],
) -> None:
    command = fake.add_issue_comment(REPO, NUMBER, "/tiebreak help")

    # githubkit refuses it before sending...
    with pytest.raises(pydantic.ValidationError):
        await github.rest.reactions.async_create_for_issue_comment(
            OWNER, NAME, command, content=cast(Any, "thumbsup")
        )
    # ...and GitHub refuses it too.
    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.reactions.async_create_for_issue_comment(
            OWNER, NAME, command, content=cast(Any, "thumbsup")
        )

    assert failure(exc)[0] == 422
    assert fake.reactions(REPO, command) == []


# -- review comments and replies --------------------------------------------------------------


async def test_a_reply_joins_the_thread_of_a_reviews_comment(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        body="One finding.",
        event="COMMENT",
        comments=[{"path": "app.py", "line": 22, "side": "RIGHT", "body": "y changed."}],
    )
    ((finding,),) = [review.comments for review in fake.reviews(REPO, NUMBER)]

    reply = await github.rest.pulls.async_create_reply_for_review_comment(
        OWNER, NAME, NUMBER, finding.id, body="The arbiter agrees."
    )
    root = await github.rest.pulls.async_get_review_comment(OWNER, NAME, finding.id)

    assert reply.status_code == 201
    data = reply.parsed_data
    assert (data.in_reply_to_id, data.path, data.line, data.side) == (
        finding.id,
        "app.py",
        22,
        "RIGHT",
    )
    assert data.user is not None
    assert data.user.login == "tiebreak[bot]"
    assert data.html_url == f"https://github.com/{REPO}/pull/{NUMBER}#discussion_r{data.id}"
    assert root.parsed_data.body == "y changed."
    assert root.parsed_data.pull_request_review_id == fake.reviews(REPO, NUMBER)[0].id
    assert (
        root.parsed_data.diff_hunk
        == "@@ -20,3 +21,3 @@ def main():\n     x = 1\n-    y = 2\n+    y = 3"
    )
    assert not root.parsed_data.in_reply_to_id
    thread = fake.review_comments(REPO, NUMBER)
    assert [(c.body, c.in_reply_to, c.author) for c in thread] == [
        ("y changed.", None, "tiebreak[bot]"),
        ("The arbiter agrees.", finding.id, "tiebreak[bot]"),
    ]
    # A reply is no review of its own in the fake (see the module docstring).
    assert len(fake.reviews(REPO, NUMBER)) == 1


async def test_a_persons_review_comment_and_reply_are_read_as_github_has_them(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.set_permission(REPO, "alice", "write")
    finding = fake.add_review_comment(REPO, NUMBER, "app.py", 2, "Why sys?", author="alice")
    answer = fake.add_review_comment(
        REPO, NUMBER, "app.py", 2, "/tiebreak arbitrate", author="bob", in_reply_to=finding
    )
    nested = fake.add_review_comment(
        REPO, NUMBER, "app.py", 2, "Also this.", author="carol", in_reply_to=answer
    )

    read = await github.rest.pulls.async_get_review_comment(OWNER, NAME, answer)
    listed: list[Any] = (
        await github.rest.pulls.async_list_review_comments(OWNER, NAME, NUMBER)
    ).parsed_data

    data = read.parsed_data
    assert (data.in_reply_to_id, data.body, data.path, data.line) == (
        finding,
        "/tiebreak arbitrate",
        "app.py",
        2,
    )
    assert data.user is not None
    assert (data.user.login, data.author_association) == ("bob", "NONE")
    assert [(c.id, c.in_reply_to_id or None) for c in listed] == [
        (finding, None),
        (answer, finding),
        (nested, finding),  # a reply to a reply joins the thread's first comment
    ]
    assert listed[0].author_association == "COLLABORATOR"
    with pytest.raises(ValueError, match="not a line of"):
        fake.add_review_comment(REPO, NUMBER, "app.py", 12, "Between hunks.")


async def test_a_reply_must_answer_a_thread_of_that_pull_request(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(REPO, 8, head_sha="e" * 40, base_sha=BASE, diff=DIFF)
    finding = fake.add_review_comment(REPO, NUMBER, "new.txt", 1, "Greeting?")
    reply = fake.add_review_comment(REPO, NUMBER, "new.txt", 1, "Yes.", in_reply_to=finding)

    with pytest.raises(RequestFailed) as to_reply:
        await github.rest.pulls.async_create_reply_for_review_comment(
            OWNER, NAME, NUMBER, reply, body="Noted."
        )
    with pytest.raises(RequestFailed) as other_pull:
        await github.rest.pulls.async_create_reply_for_review_comment(
            OWNER, NAME, 8, finding, body="Noted."
        )
    with pytest.raises(RequestFailed) as unknown:
        await github.rest.pulls.async_get_review_comment(OWNER, NAME, 999_999)

    assert failure(to_reply)[0] == 422
    assert failure(to_reply)[1]["errors"] == [REPLY_TO_REPLY]
    assert failure(other_pull)[0] == failure(unknown)[0] == 404
    assert len(fake.review_comments(REPO, NUMBER)) == 2


async def test_a_review_comments_reactions_are_listed_by_content_with_who_made_them(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    finding = fake.add_review_comment(REPO, NUMBER, "app.py", 3, "Is this right?", author="bob")
    fake.add_reaction(REPO, finding, "-1", user="alice")
    fake.add_reaction(REPO, finding, "heart", user="bob")
    fake.add_reaction(REPO, finding, "-1", user="ci[bot]", user_type="Bot")

    downs = await github.rest.reactions.async_list_for_pull_request_review_comment(
        OWNER, NAME, finding, content="-1"
    )
    every = await github.rest.reactions.async_list_for_pull_request_review_comment(
        OWNER, NAME, finding
    )
    with pytest.raises(RequestFailed) as unknown:
        await github.rest.reactions.async_list_for_pull_request_review_comment(
            OWNER, NAME, finding + 1_000
        )

    assert [(r.user.login, r.user.type) for r in downs.parsed_data if r.user] == [
        ("alice", "User"),
        ("ci[bot]", "Bot"),
    ]
    assert [r.content for r in every.parsed_data] == ["-1", "heart", "-1"]
    assert failure(unknown)[0] == 404
