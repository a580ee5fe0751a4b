"""A small real Python project under git whose head moves free shipping's bound by one, and a
test of it that only reads the source's text: it fails at the head and passes at the base, and
proves nothing of what `shipping()` does (`tiebreak review --verify`'s tests of a test's
relevance).

`shop/shipping.py` ships orders over 10 free at the base; at the head an order of exactly 10
ships free too. The project has a test of its own and its own `.venv` holding pytest.
"""

from pathlib import Path

from agents.diff import Diff
from agents.protocol import Patch, Reproduction
from tests.scenarios.environments import with_pytest
from tests.scenarios.shop import Project, git

SHIPPING_BASE = '''\
"""What shipping an order costs."""


def shipping(total):
    """Free over 10, else 5."""
    if total > 10:
        return 0
    return 5
'''
SHIPPING_HEAD = SHIPPING_BASE.replace("if total > 10:", "if total >= 10:")
BOUND_LINE = 6
"""The head's line of `shop/shipping.py` with the moved bound."""
OWN_TEST = """\
from shop.shipping import shipping


def test_a_small_order_pays_shipping():
    assert shipping(3) == 5
"""
GREP_TEST = Reproduction(
    path="tests/test_free_shipping_bound.py",
    content=(
        "from pathlib import Path\n\n\n"
        "def test_free_shipping_starts_over_10():\n"
        "    assert '> 10' in Path('shop/shipping.py').read_text()\n"
    ),
)
"""Reads the source and checks for `'> 10'`: it never calls `shipping()`."""
BOUND_FIX = Patch(
    path="shop/shipping.py", start_line=BOUND_LINE, end_line=BOUND_LINE,
    replacement="    if total > 10:",
)  # fmt: skip


def make_shipping(root: Path) -> Project:
    """The project at `root` (new), checked out at its head."""
    checkout = root / "shipping-project"
    (checkout / "shop").mkdir(parents=True)
    (checkout / "tests").mkdir()
    (checkout / "shop" / "__init__.py").write_text("")
    (checkout / "shop" / "shipping.py").write_text(SHIPPING_BASE)
    (checkout / "tests" / "test_shipping.py").write_text(OWN_TEST)
    (checkout / ".gitignore").write_text("__pycache__/\n")
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "Free shipping over 10")
    base = git(checkout, "rev-parse", "HEAD").strip()
    (checkout / "shop" / "shipping.py").write_text(SHIPPING_HEAD)
    git(checkout, "commit", "-q", "-am", "Tidy the shipping bound")
    with_pytest(checkout)
    diff = Diff.parse(git(checkout, "diff", base, "HEAD"))
    return Project(checkout=checkout, base=base, diff=diff)
