"""A small shop's git history whose bugs each misuse a definition from another module, for
`bench.context_recall` to mine cases from (`tiebreak eval cases`' own mining) and measure.

The base commit lays out the modules; four commits each bring in a bug on a line that uses
a name imported from elsewhere (a helper whose contract refuses the input, through a
package's re-export; a module's function called with a negated count; a function's
arguments swapped, reached through `import … as`; a constant read as a percentage that is a
fraction, through a relative import); four later commits fix them.
"""

import subprocess
from pathlib import Path

BASE = {
    "shop/__init__.py": '"""The shop."""\n\nfrom .money import to_cents\n',
    "shop/money.py": '''\
"""Money: amounts as integer cents."""

VAT_RATE = 0.2
"""The VAT, as a fraction of the price (not a percentage)."""


def to_cents(amount):
    """"12.30" as 1230.

    The amount must be a plain decimal: strip the currency sign first ("EUR 12.30" raises).
    """
    return round(float(amount) * 100)
''',
    "shop/stock.py": '''\
"""What is left on the shelves."""

SHELVES = {}


def reserve(item, count):
    """Take `count` (positive) of `item` off the shelf; the count left. A negative count
    puts items back."""
    SHELVES[item] = SHELVES.get(item, 0) - count
    return SHELVES[item]
''',
    "shop/mail.py": '''\
"""Outgoing mail."""

OUTBOX = []


def send(to, subject, body=""):
    """Queue a mail to the address `to`."""
    OUTBOX.append((to, subject, body))
''',
    "shop/orders.py": '"""Orders."""\n\n\ndef order_total(order):\n    return 0\n',
    "shop/checkout.py": '"""Checking out."""\n\n\ndef checkout(order):\n    return order\n',
    "shop/receipts.py": '"""Receipts."""\n\n\ndef mail_receipt(order):\n    return None\n',
    "shop/tax.py": '"""Taxes."""\n\n\ndef with_vat(cents):\n    return cents\n',
}

ORDERS = '''\
"""Orders."""

from shop import to_cents


def order_total(order):
    """The order's total, in cents."""
    total = 0
    for line in order.lines:
        total += to_cents(line.label)
    return total
'''
CHECKOUT = '''\
"""Checking out."""

from shop import stock


def checkout(order):
    """Reserve the order's items; the order."""
    for item, count in order.items.items():
        if stock.reserve(item, -count) < 0:
            raise ValueError(f"{item} is out of stock")
    return order
'''
RECEIPTS = '''\
"""Receipts."""

import shop.mail as mail


def mail_receipt(order):
    """Mail the order's receipt to its buyer."""
    mail.send(f"Your order {order.id}", order.email)
'''
TAX = '''\
"""Taxes."""

from .money import VAT_RATE


def with_vat(cents):
    """`cents` with the VAT added."""
    return round(cents * (1 + VAT_RATE / 100))
'''
BUGS = [
    ("Totals are summed from the lines' labels", {"shop/orders.py": ORDERS}),
    ("Checking out reserves the stock", {"shop/checkout.py": CHECKOUT}),
    ("A receipt is mailed to the buyer", {"shop/receipts.py": RECEIPTS}),
    ("Prices include the VAT", {"shop/tax.py": TAX}),
]
FIXES = [
    ("Fix totals of labels that carry a currency sign",
     {"shop/orders.py": ORDERS.replace("line.label)", "line.label.split()[-1])")}),
    ("Fix checkout putting the stock back instead of taking it",
     {"shop/checkout.py": CHECKOUT.replace("-count", "count")}),
    ("Fix receipts mailed to their subject",
     {"shop/receipts.py": RECEIPTS.replace(
         'mail.send(f"Your order {order.id}", order.email)',
         'mail.send(order.email, f"Your order {order.id}")')}),
    ("Fix the VAT added a hundred times too small",
     {"shop/tax.py": TAX.replace("VAT_RATE / 100", "VAT_RATE")}),
]  # fmt: skip


def make_history(root: Path) -> Path:
    """The shop's history in a new repository under `root`."""
    repo = root / "recall-shop"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for subject, files in [("The shop's modules", BASE), *BUGS, *FIXES]:
        for path, text in files.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", subject)
    return repo


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=Bench", "-c", "user.email=bench@example.com",
         *args],
        check=True,
        capture_output=True,
    )  # fmt: skip
