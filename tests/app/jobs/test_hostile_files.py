"""A changed file built to defeat a parser costs the review its context for that file, and
nothing more: the review goes on, the other files are reviewed and read as usual, and the
agents are told which file was not parsed."""

import pytest

from app.parsing import Parsing
from tests.app.review.test_gathering import fenced
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import agreed, run_review
from tests.scenarios.debates import (
    LOG_LINE,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    git_diff,
)
from tests.scenarios.reviews import BASE, HEAD, NUMBER, REPO

DEEP_SUM = "x = " + "1+" * 150_000 + "1\n"
"""300 KB that Python's parser gives up on with RecursionError."""
DEEP_NEGATION = "x = " + "-" * 200_000 + "1\n"
"""200 KB that Python's parser gives up on with MemoryError."""
CUBIC_C = "x=>" * 10_000 + "1\n"
"""30 KB that tree-sitter's C grammar takes minutes over (time cubic in its length)."""


def with_hostile(github: FakeGitHub, path: str, hostile: str) -> None:
    """Make the pull request change the payments file and append a line to `path`, a file
    whose text at the base is `hostile` and a few ordinary lines (which keep the hostile text
    out of the diff: only the parse meets it)."""
    hostile += "a = 1\n" * 5
    after = hostile + "y = 2\n"
    github.add_pull(
        REPO,
        NUMBER,
        head_sha=HEAD,
        base_sha=BASE,
        diff=git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER), path: (hostile, after)}),
        head_ref="feature",
        base_files={PAYMENTS: PAYMENTS_BEFORE, path: hostile},
        head_files={PAYMENTS: PAYMENTS_AFTER, path: after},
    )


@pytest.mark.parametrize(
    ("path", "hostile", "why"),
    [
        ("deep_sum.py", DEEP_SUM, "nested too deeply"),
        ("deep_negation.py", DEEP_NEGATION, "too deep to parse in memory"),
        # Stopped for time or for memory, whichever it runs out of first.
        ("cubic.c", CUBIC_C, "its parse"),
    ],
)
async def test_a_file_no_parser_can_take_costs_only_its_own_context(
    github: FakeGitHub, key: AppKey, redis_url: str, path: str, hostile: str, why: str
) -> None:
    with_hostile(github, path, hostile)
    llm = agreed()

    result, _ = await run_review(
        github, key, redis_url, llm, parsing=Parsing(file_seconds=1.0, memory_mb=512)
    )

    assert result == "neutral"
    (review,) = github.reviews(REPO, NUMBER)
    (comment,) = review.comments
    assert (comment.path, f"```suggestion\n{LOG_LINE}\n```" in comment.body) == (PAYMENTS, True)
    context = fenced(llm.requests[0], "context")
    # The payments file is read as ever; the hostile one is named as not parsed (its change
    # gets the lines around it, which a line this long does not fit the budget for).
    assert context.startswith(f"{PAYMENTS} lines 1-")
    (note,) = [line for line in context.splitlines() if line.startswith("Not parsed")]
    assert f"{path} (" in note
    assert why in note
