"""What a diff adds that its base does not have: the modules of the files it creates, under
each tail of their paths, and the names its added lines define."""

import pytest

from agents.diff import Diff
from agents.failures.failure import Absence, Missing
from tests.scenarios.debates import git_diff

CART_BEFORE = "def total(prices):\n    return sum(prices)\n"
CART_AFTER = (
    CART_BEFORE
    + "\n\nRATE: float = 0.1\n\n\nclass Basket:\n    limit = 3\n\n    def empty(self):\n"
    "        return not self.items\n\n\nasync def checkout(basket):\n    if basket == 3:\n"
    "        pass\n"
)


ADDED = Diff.parse(
    git_diff(
        {
            "src/shop/cart.py": (CART_BEFORE, CART_AFTER),
            "README.md": ("x\n", "x = 1\n"),
            "src/shop/coupons/__init__.py": (None, "from .codes import apply\n"),
            "src/shop/coupons/codes.py": (None, "def apply(price, coupon):\n    return price\n"),
            "docs/readme.md": (None, "readme = 1\n"),
        }
    )
).additions()


def test_a_created_file_is_a_module_under_each_tail_of_its_path() -> None:
    assert ADDED.modules == {
        "src.shop.coupons",
        "shop.coupons",
        "coupons",
        "src.shop.coupons.codes",
        "shop.coupons.codes",
        "coupons.codes",
        "codes",
    }


def test_the_names_added_lines_define_are_its_defs_classes_and_assignments() -> None:
    assert ADDED.names == {"RATE", "Basket", "limit", "empty", "checkout", "apply"}


@pytest.mark.parametrize(
    ("missing", "provided"),
    [
        (Missing(Absence.MODULE, "shop.coupons"), True),
        (Missing(Absence.MODULE, "shop.coupons.codes"), True),
        (Missing(Absence.MODULE, "coupons"), True),  # as a src layout's tests import it
        (Missing(Absence.MODULE, "shop.prices"), False),
        (Missing(Absence.MODULE, "numpy"), False),
        (Missing(Absence.NAME, "checkout", "shop.cart"), True),
        (Missing(Absence.NAME, "empty", "Basket"), True),
        (Missing(Absence.NAME, "RATE"), True),
        (Missing(Absence.NAME, "codes", "shop.coupons"), True),  # a module it creates
        (Missing(Absence.NAME, "total", "shop.cart"), False),
        (Missing(Absence.NAME, "readme"), False),  # not a Python file
    ],
)
def test_what_a_failure_says_is_missing_is_provided_only_by_what_the_change_adds(
    missing: Missing, provided: bool
) -> None:
    assert ADDED.provide(missing) is provided


GO_AND_NODE = Diff.parse(
    git_diff(
        {
            "shop/cart.go": (
                "package shop\n\nfunc Total(p []int) int { return 0 }\n",
                "package shop\n\nfunc Total(p []int) int { return 0 }\n\n"
                "// Discounted is the total with percent off.\n"
                "func Discounted(p []int, percent int) int { return 0 }\n\n"
                "func (c *Cart) Empty() bool { return true }\n\ntype Cart struct{ items []int }\n"
                "\nconst Rate = 10\n\nfunc helper() {\n\tresult := 0\n\t_ = result\n}\n",
            ),
            "coupons/coupons.go": (
                None,
                "package coupons\n\nfunc Apply(p, c int) int { return 0 }\n",
            ),
            "src/cart.js": (
                "function total(p) { return 0; }\nmodule.exports = { total };\n",
                "function total(p) { return 0; }\n"
                "async function discounted(p, percent) { return 0; }\n"
                "const FREE = 0;\nexports.rate = 10;\nmodule.exports = { total, discounted };\n"
                "total(1);\n",
            ),
            "src/coupons/index.js": (None, "export class Coupon {\n  apply(price) {\n  }\n}\n"),
            "src/prices.ts": (None, "export default function price(): number { return 1; }\n"),
        }
    )
).additions()


def test_go_s_and_javascript_s_packages_and_definitions_are_added_too() -> None:
    assert GO_AND_NODE.modules == {
        "coupons",
        "src/coupons/index",
        "src/coupons",
        "src/prices",
    }
    assert GO_AND_NODE.names == {
        "Discounted",
        "Empty",
        "Cart",
        "Rate",
        "helper",
        "Apply",
        "discounted",
        "FREE",
        "rate",
        "Coupon",
        "apply",
        "price",
    }


@pytest.mark.parametrize(
    ("missing", "provided"),
    [
        (Missing(Absence.NAME, "Discounted"), True),
        (Missing(Absence.NAME, "Discounted", "shop"), True),
        (Missing(Absence.NAME, "Total"), False),
        (Missing(Absence.MODULE, "example.com/shop/coupons"), True),
        (Missing(Absence.MODULE, "example.com/shop/prices"), False),
        (Missing(Absence.MODULE, "src/coupons"), True),
        (Missing(Absence.MODULE, "src/prices"), True),
        (Missing(Absence.MODULE, "src/cart"), False),
        (Missing(Absence.NAME, "discounted", "src/cart"), True),
        (Missing(Absence.NAME, "total"), False),  # only called on an added line
    ],
)
def test_what_go_and_node_say_is_missing_is_provided_only_by_what_the_change_adds(
    missing: Missing, provided: bool
) -> None:
    assert GO_AND_NODE.provide(missing) is provided
