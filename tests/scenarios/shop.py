"""A small real Python project under git, whose head brings in an off-by-one: the tree
findings' tests run on, in the verifier's tests, `tiebreak review --verify`'s and
`bench.verify`.

`shop/cart.py`'s `total` sums every price at the base; the head's "refactor" starts at the
second one. The project has a test of its own, helpers its tests share in a `tests` directory
without `__init__.py` (imported as `tests.helpers`, as `python -m pytest` from the root
allows), its own virtual environment holding pytest (`.venv`, ignored from inside as uv
ignores it; or, asked, one without pytest), and one untracked file that git does not ignore
(the head copy carries it, the base does not need it).

Its history (:func:`make_history`, for `tiebreak eval`) goes on: a clean commit adds
shipping, and a later commit fixes the off-by-one.
"""

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agents.diff import Diff
from agents.protocol import Patch, Reproduction
from policies.verify import VerifyConfig
from tests.scenarios.environments import with_pytest, without_pytest

CART_BASE = '''\
"""The cart's arithmetic."""


def total(prices):
    """The sum of the prices."""
    result = 0
    for i in range(len(prices)):
        result += prices[i]
    return result
'''
CART_HEAD = CART_BASE.replace("range(len(prices))", "range(1, len(prices))").replace(
    "The sum of the prices.", "The sum of the prices, in cents."
)
BUG_LINE = 7
"""The head's line of `shop/cart.py` with the off-by-one."""
OWN_TEST = """\
from shop.cart import total


def test_an_empty_cart_costs_nothing():
    assert total([]) == 0
"""
HELPERS = '"""Carts the tests share."""\n\nTWO_ITEMS = [5, 7]\n'
SHIPPING = "def ship(order):\n    return 5\n"
COMMAND = "python -m pytest -q -p no:cacheprovider {test}"

REPRODUCTION = Reproduction(
    path="tests/test_total_counts_every_price.py",
    content="from shop.cart import total\n\n\ndef test_total():\n    assert total([5, 7]) == 12\n",
)
FIX = Patch(path="shop/cart.py", start_line=BUG_LINE, end_line=BUG_LINE,
            replacement="    for i in range(len(prices)):")  # fmt: skip
WRONG_FIX = Patch(path="shop/cart.py", start_line=BUG_LINE, end_line=BUG_LINE,
                  replacement="    for i in range(2, len(prices)):")  # fmt: skip


@dataclass(frozen=True)
class Project:
    checkout: Path
    base: str
    """The base commit's id."""
    diff: Diff


def config(**changes: object) -> VerifyConfig:
    return VerifyConfig.model_validate({"command": COMMAND, "timeout_s": 60, **changes})


def reproduction(path: str, content: str) -> Reproduction:
    return Reproduction(path=path, content=content)


def make_project(
    root: Path, head: Mapping[str, str] | None = None, *, pytest: bool = True
) -> Project:
    """The project at `root` (new), checked out at its head: the off-by-one, or the files
    `head` gives (by path) over the base's; its environment holds pytest unless `pytest` is
    off."""
    checkout = root / "shop-project"
    (checkout / "shop").mkdir(parents=True)
    (checkout / "tests").mkdir()
    (checkout / "shop" / "__init__.py").write_text("")
    (checkout / "shop" / "cart.py").write_text(CART_BASE)
    (checkout / "tests" / "test_cart.py").write_text(OWN_TEST)
    (checkout / "tests" / "helpers.py").write_text(HELPERS)
    (checkout / ".gitignore").write_text("__pycache__/\n")
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "The cart sums its prices")
    base = git(checkout, "rev-parse", "HEAD").strip()
    for path, text in (head or {"shop/cart.py": CART_HEAD}).items():
        (checkout / path).write_text(text)
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "total() in cents")
    (checkout / "NOTES.md").write_text("untracked, not ignored\n")
    (with_pytest if pytest else without_pytest)(checkout)
    diff = Diff.parse(git(checkout, "diff", base, "HEAD"))
    return Project(checkout=checkout, base=base, diff=diff)


@dataclass(frozen=True)
class History:
    repo: Path
    base: str
    bug: str
    """The commit that brings the off-by-one in, on `base`."""
    clean: str
    """A commit no fix goes back to: it adds shipping."""
    fix: str


def make_history(root: Path) -> History:
    """The project's history at `root` (new): the base, the off-by-one, shipping, its fix;
    the clone's `.venv` holds pytest."""
    repo = root / "shop-history"
    (repo / "shop").mkdir(parents=True)
    (repo / "tests").mkdir()
    files = {
        "shop/__init__.py": "",
        "shop/cart.py": CART_BASE,
        "tests/test_cart.py": OWN_TEST,
        ".gitignore": "__pycache__/\n",
    }
    git(repo, "init", "-q", "-b", "main")
    base = _commit(repo, "The cart sums its prices", files)
    bug = _commit(repo, "total() in cents", {"shop/cart.py": CART_HEAD})
    clean = _commit(repo, "Add shipping", {"shop/shipping.py": SHIPPING})
    fixed = CART_HEAD.replace("range(1, len(prices))", "range(len(prices))")
    fix = _commit(repo, "Fix total skipping the first price", {"shop/cart.py": fixed})
    with_pytest(repo)
    return History(repo=repo, base=base, bug=bug, clean=clean, fix=fix)


def _commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for path, text in files.items():
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def git(directory: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", *args],
        cwd=directory,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout
