"""The shop project (:mod:`tests.scenarios.shop`) whose head moves a rule on purpose: `total`
now leaves refunds (negative prices) out. With its evidence (:func:`make_intended`), the
pull request says so in its description, its changelog and the docstring, and updates the
project's own test to the new rule; without (``evidence=False``), only the code changes.

A tester's test of the old rule (:data:`OLD_RULE_TEST`) fails at the head and passes at the
base: reproduced. That proves the behaviour changed, not that the change is wrong.
"""

from dataclasses import replace
from pathlib import Path
from typing import Any

from agents.diff import Diff, ReviewUnit
from agents.protocol import Reproduction
from tests.scenarios.debates import git_diff
from tests.scenarios.shop import CART_BASE, OWN_TEST, Project, make_project

CART = "shop/cart.py"
CHANGELOG = "CHANGELOG.md"
CART_TEST = "tests/test_cart.py"
CART_LEFT_OUT = '''\
"""The cart's arithmetic."""


def total(prices):
    """The sum of the prices, refunds (negative prices) left out: they are settled apart."""
    result = 0
    for i in range(len(prices)):
        if prices[i] > 0:
            result += prices[i]
    return result
'''
CART_UNSAID = CART_LEFT_OUT.replace(
    ", refunds (negative prices) left out: they are settled apart.", "."
)
RULE_LINE = 8
"""The head's line of `shop/cart.py` that leaves a negative price out."""
CHANGELOG_HEAD = "# Changes\n\n- `total()` leaves refunds out: they are settled apart.\n"
CHANGELOG_LINE = 3
CART_TEST_HEAD = OWN_TEST + "\n\ndef test_refunds_are_left_out():\n    assert total([5, -2]) == 5\n"
CART_TEST_LINES = (8, 9)
"""The lines of the project's test that the change adds: the new rule's test."""
DESCRIPTION = (
    "Leave refunds out of total()\n\n"
    "Refunds are settled apart from the cart, so total() now leaves negative prices out."
)
QUOTE = "total() now leaves negative prices out"

OLD_RULE_TEST = Reproduction(
    path="tests/test_total_counts_refunds.py",
    content=(
        "from shop.cart import total\n\n\n"
        "def test_a_refund_lowers_the_total():\n    assert total([5, -2]) == 3\n"
    ),
)
CLAIM = "total() drops negative prices: a cart with a refund is overcharged."


def finding() -> dict[str, Any]:
    """The tester's finding on the moved rule, with its test of the old rule."""
    return {
        "path": CART,
        "start_line": RULE_LINE,
        "end_line": RULE_LINE,
        "severity": "major",
        "claim": CLAIM,
        "reproduction": OLD_RULE_TEST.model_dump(),
    }


def citations() -> list[dict[str, Any]]:
    """The coder's evidence that the rule moved on purpose: the description, the changelog
    and the project's updated test."""
    start, end = CART_TEST_LINES
    return [
        {"quote": QUOTE},
        {"path": CHANGELOG, "start_line": CHANGELOG_LINE, "end_line": CHANGELOG_LINE},
        {"path": CART_TEST, "start_line": start, "end_line": end},
    ]


def intended(finding_id: str = "F1", cited: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The coder's answer that the behaviour changed on purpose."""
    return {
        "finding_id": finding_id,
        "stance": "intended",
        "argument": "Refunds are settled apart: leaving them out is the point of the change.",
        "citations": citations() if cited is None else cited,
    }


def files(evidence: bool) -> dict[str, str]:
    """The head's files, over the base's."""
    if not evidence:
        return {CART: CART_UNSAID}
    return {CART: CART_LEFT_OUT, CHANGELOG: CHANGELOG_HEAD, CART_TEST: CART_TEST_HEAD}


def intended_unit(*, evidence: bool = True) -> ReviewUnit:
    """The change as one review unit, read with its description (none without evidence)."""
    before = {CART: CART_BASE, CHANGELOG: None, CART_TEST: OWN_TEST}
    diff = Diff.parse(git_diff({p: (before[p], text) for p, text in files(evidence).items()}))
    (unit,) = diff.units()
    return replace(unit, intent=DESCRIPTION if evidence else "")


def split_unit() -> ReviewUnit:
    """The change split as a large pull request is, a file to a unit: the unit of the code,
    whose changelog and test are other units' (each unit is handed the whole diff's changed
    lines, as a review hands them)."""
    before = {CART: CART_BASE, CHANGELOG: None, CART_TEST: OWN_TEST}
    diff = Diff.parse(git_diff({p: (before[p], text) for p, text in files(True).items()}))
    units = diff.units(max_tokens=1)
    assert [u.diff.paths for u in units] == [(CART,), (CART_TEST,), (CHANGELOG,)]
    return replace(units[0], intent=DESCRIPTION)


GUIDE = "GUIDE.md"
GUIDE_TEXT = "".join(
    f"- Step {n}: check the cart before a refund is settled.\n" for n in range(1000)
)
"""A user's guide the pull request adds, large enough that a review of the pull request is
split: the code and its test in one unit, the guide in one, the changelog in another."""


def make_split(root: Path) -> Project:
    """The project at `root` (new), at the head that leaves refunds out, with evidence, and a
    large guide beside: a review of a large pull request, in several units."""
    return make_project(root, files(True) | {GUIDE: GUIDE_TEXT})


def make_intended(root: Path, *, evidence: bool = True) -> Project:
    """The project at `root` (new), at the head that leaves refunds out."""
    return make_project(root, files(evidence))
