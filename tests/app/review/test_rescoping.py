"""What a later review covers, by what GitHub says of the head reviewed last, on an
installation in memory: the files changed since it where that is safe, every file otherwise,
saying why. (Through a real worker and the fake GitHub: `tests/app/jobs/test_rereview.py`.)"""

from typing import Literal

import pytest

from agents.review import Review
from app.events import PullRequestRef
from app.github.models import Comparison
from app.publishing.publication import RunRecord
from app.publishing.rereview import RunScope
from app.review.rescoping import scope_since
from policies.config import RepoConfig
from tests.fakes.installation import FakeInstallation
from tests.scenarios.reviews import REF

OLD = "c" * 40
EARLIER = RunRecord(
    run_id="run-1",
    ref=REF.model_copy(update={"head_sha": OLD}),
    check_run_id=1,
    conclusion="neutral",
    review=Review(units=[]),
    diff="",
)
CHANGED = frozenset({"app/payments.py", "app/old_name.py"})


def compared(status: Literal["ahead", "diverged"], *, complete: bool = True) -> Comparison:
    return Comparison(status=status, paths=CHANGED, complete=complete)


@pytest.mark.parametrize(
    ("comparison", "scope"),
    [
        pytest.param(compared("ahead"), RunScope.changed_since(OLD, CHANGED), id="ahead"),
        pytest.param(
            compared("ahead", complete=False),
            RunScope.full(f"too many files changed since {OLD[:7]} to list them"),
            id="ahead, too many files",
        ),
        pytest.param(
            compared("diverged"),
            RunScope.full(
                f"{OLD[:7]}, reviewed last, is no longer in its history (a force-push or rebase)"
            ),
            id="diverged",
        ),
        pytest.param(
            None,
            RunScope.full(
                f"{OLD[:7]}, reviewed last, is no longer in its history (a force-push or rebase)"
            ),
            id="commit gone",
        ),
    ],
)
async def test_what_github_says_of_the_head_reviewed_last_sets_the_scope(
    comparison: Comparison | None, scope: RunScope
) -> None:
    github = FakeInstallation()
    if comparison is not None:
        github.comparisons[(OLD, REF.head_sha)] = comparison

    assert await scope_since(github, REF, RepoConfig(), EARLIER) == scope
    assert github.calls == ["compare"]


async def test_a_comparison_github_fails_reviews_every_file() -> None:
    github = FakeInstallation()
    github.fail_next("compare", 502)

    scope = await scope_since(github, REF, RepoConfig(), EARLIER)

    assert scope == RunScope.full(f"GitHub could not compare it with {OLD[:7]}")


@pytest.mark.parametrize(
    ("ref", "config", "why"),
    [
        pytest.param(EARLIER.ref, RepoConfig(), "a review of the same commit was asked for"),
        pytest.param(REF, RepoConfig(max_inline_comments=3), "the repository's config changed"),
    ],
    ids=["same head", "config changed"],
)
async def test_github_is_not_asked_when_every_file_is_reviewed_anyway(
    ref: PullRequestRef, config: RepoConfig, why: str
) -> None:
    github = FakeInstallation()

    assert await scope_since(github, ref, config, EARLIER) == RunScope.full(why)
    assert github.calls == []


async def test_a_first_review_covers_every_file_without_asking_github() -> None:
    github = FakeInstallation()

    assert await scope_since(github, REF, RepoConfig(), None) == RunScope.full("")
    assert github.calls == []
