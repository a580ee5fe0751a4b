"""Posting a review exactly once, whatever GitHub answers, its summary beside it: real
worker, fake GitHub.

GitHub may answer 5xx to a review it did post; the job then looks for the run's hidden marker
before trying again. A 422 (a comment GitHub would not take) falls back to a review with every
finding in its body.
"""

import asyncio

from agents.models.scripted import ScriptedLLM, by_role
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import STUBBORN, agreed, run_review, summaries, summary, until
from tests.scenarios.reviews import NUMBER, REPO

REVIEWS = r"/repos/[^/]+/[^/]+/pulls/\d+/reviews"


QUICK = 0.01
"""GitHub retries on, as in production, with their waits scaled down."""


async def test_a_review_github_posted_despite_a_502_is_not_posted_again(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.fail_next("POST", REVIEWS, 502, processed=True)

    result, _ = await run_review(github, key, redis_url, agreed(), retry_backoff=QUICK)

    assert result == "neutral"
    (review,) = github.reviews(REPO, NUMBER)
    assert len(review.comments) == 1
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "neutral")


async def test_a_review_refused_with_502s_is_posted_once_github_recovers(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.fail_next("POST", REVIEWS, 502, times=2)

    result, _ = await run_review(github, key, redis_url, agreed(), retry_backoff=QUICK)

    assert result == "neutral"
    assert len(github.reviews(REPO, NUMBER)) == 1
    assert len(github.requests_to("POST", REVIEWS)) == 3


async def test_a_review_github_refuses_with_422_lands_every_finding_in_the_summary(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_file(REPO, "b" * 40, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    github.fail_next("POST", REVIEWS, 422)

    result, _ = await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))

    assert result == "action_required"
    assert github.reviews(REPO, NUMBER) == []
    body = summary(github)
    assert "### More findings" in body
    assert "log is a builtin." in body
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]


async def test_the_summary_is_written_while_github_takes_the_review(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_file(REPO, "b" * 40, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")

    with github.holding("POST", REVIEWS) as posting:
        review = asyncio.create_task(
            run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))
        )
        assert await asyncio.to_thread(posting.wait, 30)
        # GitHub has not answered the review yet: the summary is written meanwhile, a round
        # trip fewer before the check run completes.
        await until(lambda: len(summaries(github)) == 1)
        assert github.reviews(REPO, NUMBER) == []
    result, _ = await review

    assert result == "action_required"
    (posted,) = github.reviews(REPO, NUMBER)
    assert "log is a builtin." in posted.comments[0].body
    assert "### More findings" not in summary(github)
