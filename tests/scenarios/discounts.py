"""The shop project (:mod:`tests.scenarios.shop`) whose head adds code with a bug in it: a new
function in a module the base has, and a new module. A test of either fails at the base
only because the code it tests is not there, whatever that code does; at the head it fails
because of the bug.

`shop/cart.py` gains `discounted`, which divides by 10 where it means 100; `shop/coupons.py`
is new, and its `apply` lets a coupon larger than the price make it negative.
"""

from pathlib import Path

from agents.protocol import Patch, Reproduction
from tests.scenarios.shop import CART_BASE, Project, make_project

CART_WITH_DISCOUNTS = (
    CART_BASE
    + '''

def discounted(prices, percent):
    """The total with `percent` off, rounded down."""
    return total(prices) * (100 - percent) // 10
'''
)
DISCOUNT_LINE = 14
"""The head's line of `shop/cart.py` with the wrong divisor, in the function it adds."""
COUPONS = '''\
"""Coupons taken off a price."""


def apply(price, coupon):
    """The price with the coupon's amount off, never below zero."""
    return price - coupon
'''
COUPON_LINE = 6
"""The line of the new `shop/coupons.py` that lets a price go below zero."""

DISCOUNT_TEST = Reproduction(
    path="tests/test_discounted.py",
    content=(
        "from shop.cart import discounted\n\n\n"
        "def test_ten_percent_off():\n    assert discounted([60, 40], 10) == 90\n"
    ),
)
COUPON_TEST = Reproduction(
    path="tests/test_coupons.py",
    content=(
        "from shop.coupons import apply\n\n\n"
        "def test_a_large_coupon_makes_it_free():\n    assert apply(5, 10) == 0\n"
    ),
)
DISCOUNT_FIX = Patch(
    path="shop/cart.py",
    start_line=DISCOUNT_LINE,
    end_line=DISCOUNT_LINE,
    replacement="    return total(prices) * (100 - percent) // 100",
)
COUPON_FIX = Patch(
    path="shop/coupons.py",
    start_line=COUPON_LINE,
    end_line=COUPON_LINE,
    replacement="    return max(price - coupon, 0)",
)


def make_discounts(root: Path) -> Project:
    """The project at `root` (new), checked out at the head that adds the discounts."""
    return make_project(root, {"shop/cart.py": CART_WITH_DISCOUNTS, "shop/coupons.py": COUPONS})
