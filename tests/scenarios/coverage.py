"""A pull request too large for its token ceiling: five files of about 8,000 diff tokens each
(a review unit apiece), in the diff's order lock file, docs, tests, code, sensitive code, and a
model whose every call bills as much as a large unit's real call does."""

from agents.coverage import estimate
from agents.diff import Diff
from policies.debate import DebatePolicy
from tests.scenarios.debates import git_diff

LINES = 800
"""Lines of each file: about 32,000 characters, 8,000 diff tokens."""

RISKIEST_FIRST = (
    "shop/payments.py",
    "shop/cart.py",
    "tests/test_cart.py",
    "README.md",
    "uv.lock",
)
"""The files in the order a review reaches them."""

CALL_INPUT_TOKENS = 15_000
CALL_OUTPUT_TOKENS = 80
CALL_BILLED = CALL_INPUT_TOKENS + CALL_OUTPUT_TOKENS
"""What each of the model's calls bills: no cache, 15,000 tokens in, 80 out."""


def _file(path: str) -> tuple[str, str]:
    return "", "".join(
        f"line_{n:04} = value_{n:04} + other_{n:04}  # a change\n" for n in range(LINES)
    )


LARGE_DIFF = git_diff({path: _file(path) for path in reversed(RISKIEST_FIRST)})
"""The diff, in an order that is not the review's: the lock file first."""


def ceiling_for_two_units() -> int:
    """A ceiling that covers the two riskiest units' calls (their reports find nothing) and no
    later one: the second unit's call fits once the first's has settled, no later one's does."""
    units = Diff.parse(LARGE_DIFF).units()
    firsts = [u.first_call for u in estimate(units, DebatePolicy()).units]
    low = CALL_BILLED + firsts[1]
    high = 2 * CALL_BILLED + min(firsts[2:]) - 1
    assert low <= high, (low, high)
    return high
