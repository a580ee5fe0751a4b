"""The fake GitHub's reviews place their comments on the diff and fail as GitHub's do."""

from typing import Any

import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed
from githubkit.rest import Paginator
from githubkit_schemas.latest.models import PullRequestReview

from tests.fakes.github_api import (
    COMMIT_NOT_IN_PULL,
    HUNK_BLANK,
    LINE_NOT_IN_DIFF,
    LINE_UNRESOLVED,
    NEEDS_COMMENT,
    ONE_PENDING_REVIEW,
    PATH_INVALID,
    START_NOT_BEFORE_LINE,
    START_NOT_IN_HUNK,
    FakeGitHub,
)
from tests.fakes.github_api_kit import BASE, DIFF, HEAD, NAME, NUMBER, OWNER, REPO, failure, payload

# -- reviews ----------------------------------------------------------------------------------


async def test_a_review_with_inline_comments_is_stored(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    response = await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        commit_id=HEAD,
        body="Two findings.",
        event="COMMENT",
        comments=[
            {"path": "app.py", "line": 3, "side": "RIGHT", "body": "An added line."},
            {"path": "app.py", "line": 2, "side": "LEFT", "body": "A removed line."},
            {"path": "app.py", "line": 5, "body": "A context line (side defaults to RIGHT)."},
            {
                "path": "app.py",
                "start_line": 2,
                "start_side": "RIGHT",
                "line": 4,
                "side": "RIGHT",
                "body": "A range within one hunk.",
            },
            {"path": "new.txt", "line": 2, "side": "RIGHT", "body": "In an added file."},
            {"path": "gone.txt", "line": 1, "side": "LEFT", "body": "In a removed file."},
        ],
    )

    assert response.status_code == 200
    body = payload(response)
    assert (body["state"], body["body"]) == ("COMMENTED", "Two findings.")
    assert body["html_url"].startswith(f"https://github.com/{REPO}/pull/{NUMBER}#")
    assert body["user"]["login"] == "tiebreak[bot]"
    (review,) = fake.reviews(REPO, NUMBER)
    assert (review.id, review.event, review.commit_id) == (body["id"], "COMMENT", HEAD)
    assert [(c.path, c.line, c.side) for c in review.comments] == [
        ("app.py", 3, "RIGHT"),
        ("app.py", 2, "LEFT"),
        ("app.py", 5, "RIGHT"),
        ("app.py", 4, "RIGHT"),
        ("new.txt", 2, "RIGHT"),
        ("gone.txt", 1, "LEFT"),
    ]
    assert (review.comments[3].start_line, review.comments[3].start_side) == (2, "RIGHT")
    assert len({c.id for c in review.comments}) == 6


async def test_reviews_are_listed_and_parse_with_githubkits_models(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER, body="One.", event="COMMENT")
    await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER, event="APPROVE")

    pages: Paginator[PullRequestReview] = github.rest.paginate(
        github.rest.pulls.async_list_reviews, owner=OWNER, repo=NAME, pull_number=NUMBER
    )
    reviews = [review async for review in pages]

    assert [(r.state, r.body, r.commit_id) for r in reviews] == [
        ("COMMENTED", "One.", HEAD),
        ("APPROVED", "", HEAD),
    ]


async def test_a_review_shows_who_wrote_it_the_apps_bot_user_or_another(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_review(REPO, NUMBER, "LGTM", author="mona")
    fake.add_review(REPO, NUMBER, "CI passed.", author="github-actions[bot]", author_type="Bot")
    await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER, body="One.", event="COMMENT")

    pages: Paginator[PullRequestReview] = github.rest.paginate(
        github.rest.pulls.async_list_reviews, owner=OWNER, repo=NAME, pull_number=NUMBER
    )
    reviews = [review async for review in pages]

    authors = [(r.user.login, r.user.type, r.body) for r in reviews if r.user]
    assert authors == [
        ("mona", "User", "LGTM"),
        ("github-actions[bot]", "Bot", "CI passed."),
        (f"{fake.app_slug}[bot]", "Bot", "One."),
    ]
    assert [(r.author, r.author_type) for r in fake.reviews(REPO, NUMBER)] == [
        ("mona", "User"),
        ("github-actions[bot]", "Bot"),
        ("tiebreak[bot]", "Bot"),
    ]
    assert len({r.user.id for r in reviews if r.user}) == 3


@pytest.mark.parametrize(
    ("comment", "error"),
    [
        ({"path": "nope.py", "line": 1}, f"{PATH_INVALID} and {HUNK_BLANK}"),
        ({"path": "img.png", "line": 1}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),
        ({"path": "app.py", "line": 12}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),  # between hunks
        ({"path": "app.py", "line": 6, "side": "LEFT"}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),
        ({"path": "new.txt", "line": 1, "side": "LEFT"}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),
        ({"path": "gone.txt", "line": 1}, f"{LINE_NOT_IN_DIFF} and {HUNK_BLANK}"),  # RIGHT
        ({"path": "app.py", "start_line": 2, "line": 22}, START_NOT_IN_HUNK),
        ({"path": "app.py", "start_line": 12, "line": 22}, START_NOT_IN_HUNK),
        ({"path": "app.py", "start_line": 4, "line": 2}, START_NOT_BEFORE_LINE),
        ({"path": "app.py", "start_line": 3, "line": 3}, START_NOT_BEFORE_LINE),
        ({"path": "app.py"}, LINE_UNRESOLVED),
    ],
    ids=[
        "path-not-in-diff",
        "binary-file",
        "line-between-hunks",
        "left-beyond-old-hunk",
        "left-in-added-file",
        "right-on-removed-file",
        "range-across-hunks",
        "start-outside-hunks",
        "start-after-line",
        "start-equals-line",
        "no-line",
    ],
)
async def test_one_misplaced_comment_fails_the_whole_review(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    comment: dict[str, Any],
    error: str,
) -> None:
    good = {"path": "app.py", "line": 3, "side": "RIGHT", "body": "Fine."}

    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_create_review(
            OWNER,
            NAME,
            NUMBER,
            body="Findings.",
            event="COMMENT",
            comments=[good, {**comment, "body": "Misplaced."}],
        )

    status, body = failure(exc)
    assert status == 422
    assert body["message"] == "Unprocessable Entity"
    assert body["errors"] == [error]
    assert body["documentation_url"].endswith("#create-a-review-for-a-pull-request")
    assert fake.reviews(REPO, NUMBER) == []


@pytest.mark.parametrize(
    ("event", "body", "comments", "accepted"),
    [
        ("COMMENT", "", [], False),
        ("REQUEST_CHANGES", "", [], False),
        ("COMMENT", "", [{"path": "app.py", "line": 3, "body": "Inline only."}], True),
        ("APPROVE", "", [], True),
        ("REQUEST_CHANGES", "Please fix.", [], True),
    ],
)
async def test_a_verdict_needs_a_body_or_an_inline_comment(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    event: Any,
    body: str,
    comments: Any,
    accepted: bool,
) -> None:
    async def review() -> None:
        await github.rest.pulls.async_create_review(
            OWNER, NAME, NUMBER, event=event, body=body, comments=comments
        )

    if accepted:
        await review()
    else:
        with pytest.raises(RequestFailed) as exc:
            await review()
        assert failure(exc)[0] == 422
        assert failure(exc)[1]["errors"] == [NEEDS_COMMENT]
    assert len(fake.reviews(REPO, NUMBER)) == int(accepted)


async def test_a_pending_review_blocks_another_review(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    pending = await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER)

    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_create_review(
            OWNER, NAME, NUMBER, body="Done.", event="COMMENT"
        )

    assert payload(pending)["state"] == "PENDING"
    assert "submitted_at" not in payload(pending)
    assert failure(exc)[1]["errors"] == [ONE_PENDING_REVIEW]


async def test_a_review_may_name_an_earlier_head_but_no_other_commit(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(REPO, NUMBER, head_sha="9" * 40, base_sha=BASE, head_ref="feature", diff=DIFF)

    earlier = await github.rest.pulls.async_create_review(
        OWNER, NAME, NUMBER, commit_id=HEAD, body="On the old head.", event="COMMENT"
    )
    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_create_review(
            OWNER, NAME, NUMBER, commit_id="c" * 40, body="Elsewhere.", event="COMMENT"
        )
    default = await github.rest.pulls.async_create_review(
        OWNER, NAME, NUMBER, body="No commit named.", event="COMMENT"
    )

    assert payload(earlier)["commit_id"] == HEAD
    assert failure(exc)[1]["errors"] == [COMMIT_NOT_IN_PULL]
    assert payload(default)["commit_id"] == "9" * 40


async def test_a_comment_may_use_a_diff_position(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    # Position 8 is the first line below app.py's second hunk header (which is position 7).
    await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        event="COMMENT",
        comments=[{"path": "app.py", "position": 8, "body": "x = 1"}],
    )
    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_create_review(
            OWNER,
            NAME,
            NUMBER,
            event="COMMENT",
            comments=[{"path": "app.py", "position": 7, "body": "The header."}],
        )

    (review,) = fake.reviews(REPO, NUMBER)
    assert (review.comments[0].line, review.comments[0].side) == (21, "RIGHT")
    assert failure(exc)[0] == 422
    assert [d.position for d in fake.diff_lines(REPO, NUMBER, "app.py")][5:7] == [6, 8]
