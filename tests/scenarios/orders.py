"""A small Python project whose change needs its other files read: `shop/orders.py` starts
passing a price label to a helper of `shop/utils.py` whose contract refuses the currency
sign, and adds a required parameter to `order_total`, which two other modules and a test
call without it.

`shop/legacy.py` defines an `order_total` of its own that nothing imports: a search by name
alone would show it. Written to a directory by :func:`write`, or read in memory through
:class:`MemoryTree` (the analysis's own reader of files, for its pure tests).
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.scenarios.debates import git_diff

ORDERS = "shop/orders.py"
CONTRACT = "CONTRACT: strip the currency sign first; parse_cents('EUR 1.00') raises ValueError."

ORDERS_BEFORE = '''\
"""Orders and their totals."""

from shop import discount
from shop.utils import parse_cents as cents


def order_total(order):
    """The order's total, in cents, after its discount."""
    subtotal = sum(cents(line.amount) for line in order.lines)
    return discount(subtotal, order.code)
'''
ORDERS_AFTER = '''\
"""Orders and their totals."""

from shop import discount
from shop.utils import parse_cents as cents


def order_total(order, currency):
    """The order's total, in cents of `currency`, after its discount."""
    subtotal = sum(cents(line.label) for line in order.lines if line.currency == currency)
    return discount(subtotal, order.code.upper())
'''
CHANGED_LINES = (7, 10)

FILES = {
    "shop/__init__.py": '"""The shop."""\n\nfrom .pricing import discount\n',
    "shop/utils.py": f'''\
"""Small helpers."""

UNUSED = 1


def parse_cents(label):
    """"12.30" as 1230.

    {CONTRACT}
    """
    return round(float(label) * 100)
''',
    "shop/pricing.py": '''\
"""Discounts."""


def discount(amount, code):
    """The amount after the discount `code` gives; codes are case-sensitive."""
    return amount // 2 if code == "HALF" else amount
''',
    ORDERS: ORDERS_AFTER,
    "shop/checkout.py": '''\
"""Checking out."""

from shop import orders


def checkout(basket):
    """Charge the basket's order."""
    due = orders.order_total(basket.order)
    return basket.card.charge(due)
''',
    "shop/invoices.py": '''\
"""Invoices."""

from shop.orders import order_total as total_of


def invoice_line(order):
    return f"Total: {total_of(order) / 100:.2f}"
''',
    "shop/legacy.py": '''\
"""The old shop, kept for its archive."""


def order_total(order):
    return 0


def archive(order):
    return order_total(order)
''',
    "tests/test_orders.py": """\
from types import SimpleNamespace

from shop.orders import order_total


def test_an_order_without_lines_costs_nothing():
    order = SimpleNamespace(lines=[], code="")
    assert order_total(order) == 0
""",
    "README.md": "# Shop\n",
}
"""The project at the change's head, by path."""


def diff_text() -> str:
    return git_diff({ORDERS: (ORDERS_BEFORE, ORDERS_AFTER)})


def write(root: Path, files: Mapping[str, str] = FILES) -> Path:
    """The project written under `root`."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


class MemoryTree:
    """A tree of files held in memory, read as the analysis reads a directory."""

    def __init__(self, files: Mapping[str, str] = FILES) -> None:
        self.files = dict(files)
        self.read_paths: list[str] = []

    def paths(self, limit: int) -> Sequence[str]:
        return sorted(self.files)[:limit]

    def read(self, path: str) -> str | None:
        self.read_paths.append(path)
        return self.files.get(path)
