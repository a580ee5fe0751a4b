"""A change whose bug shows only with the code around it: an invoice module in which a hunk
starts calling a helper with input its contract refuses.

`cents` is defined near the top of the file and says that the caller must strip the currency
sign; far below, inside `invoice_total`, the change passes it `line.price_label` (which holds
the sign). The diff's three lines of context show neither the helper nor the top of the
enclosing function. The file is large enough not to be shown whole.
"""

from tests.scenarios.debates import git_diff

INVOICES = "billing/invoices.py"

HEADER = '''\
"""Invoices: their lines, totals and lifecycle."""

from decimal import Decimal


def cents(amount):
    """Parse a plain decimal amount such as "12.30" into integer cents.

    CONTRACT: the caller must strip the currency sign first; "EUR 12.30" raises ValueError.
    """
    return int(Decimal(amount) * 100)

'''

FILLER_NAMES = [
    "archive_invoice",
    "reopen_invoice",
    "send_reminder",
    "mark_disputed",
    "assign_collector",
    "export_ledger_row",
    "schedule_dunning",
    "close_period",
]


def _filler(name: str) -> str:
    return f'''
def {name}(invoice, *, actor, now=None):
    """Record that {name.replace("_", " ")} happened to the invoice, and by whom."""
    if invoice.closed_at is not None and not actor.is_admin:
        raise PermissionError("{name}: the invoice is closed")
    entry = {{"action": "{name}", "actor": actor.id, "at": now or invoice.clock()}}
    invoice.history.append(entry)
    invoice.touched_by = actor.id
    invoice.version += 1
    return entry

'''


def _total(changed: bool) -> str:
    amount = "cents(line.price_label)" if changed else "line.price_cents"
    return f'''
def invoice_total(invoice):
    """The invoice's total in cents: its lines, less discounts, plus tax."""
    if invoice.currency is None:
        raise ValueError("an invoice needs a currency before it is totalled")
    lines = [line for line in invoice.lines if not line.voided]
    subtotal = 0
    for line in lines:
        quantity = max(line.quantity, 0)
        discount = line.discount_cents or 0
        if discount > 0 and line.kind == "service":
            discount = min(discount, 5_000)
        price = {amount}
        subtotal += quantity * price - discount
    tax = subtotal * invoice.tax_rate // 100
    return subtotal + tax

'''


def module(changed: bool) -> str:
    half = len(FILLER_NAMES) // 2
    return (
        HEADER
        + "".join(_filler(n) for n in FILLER_NAMES[:half])
        + _total(changed)
        + "".join(_filler(n) for n in FILLER_NAMES[half:])
    )


BEFORE, AFTER = module(False), module(True)
DIFF = git_diff({INVOICES: (BEFORE, AFTER)})
CHANGED_LINE = AFTER.splitlines().index("        price = cents(line.price_label)") + 1
HELPER_LINE = AFTER.splitlines().index("def cents(amount):") + 1
