"""The change both token scenarios review, as the one review unit it is reviewed as, what its
pull request says it does, and where its lines are.

A ~490-line diff over three Python files of a shop (orders, payments, inventory; about 120
changed lines each, in four hunks), the same on every run; `sample_intent` is its title and
description as an author writes them on GitHub (a template's headings, a list of changes,
the reasons, a checklist); `line_of` and `span` locate the lines the scenarios' scripted
findings and patches are about.
"""

import difflib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agents.diff import Diff, ReviewUnit
from agents.intent import pull_intent
from agents.models.tokens import typical_tokens
from bench.billing import ScenarioBroken

# -- the diff -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Function:
    template: str
    noun: str
    state: str


def _camel(noun: str) -> str:
    return "".join(part.title() for part in noun.split("_"))


def _a(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


def _load(f: _Function, changed: bool) -> str:
    noun, cls = f.noun, _camel(f.noun)
    options = "include_archived=False, for_update=False" if changed else "include_archived=False"
    lock = "    if for_update:\n        query = query.with_for_update()\n" if changed else ""
    return (
        f"def load_{noun}(session, {noun}_id, *, {options}):\n"
        f'    """Return the {noun} with the given id, or raise LookupError."""\n'
        f"    query = session.query({cls}).filter({cls}.id == {noun}_id)\n"
        f"    if not include_archived:\n"
        f"        query = query.filter({cls}.archived_at.is_(None))\n"
        f"{lock}"
        f"    record = query.one_or_none()\n"
        f"    if record is None:\n"
        f'        raise LookupError(f"no {noun} {{{noun}_id}}")\n'
        f"    return record\n"
    )


def _total(f: _Function, changed: bool) -> str:
    noun = f.noun
    trace = f'    log.debug("summed %d {noun} records", len(records))\n' if changed else ""
    return (
        f'def total_{noun}_amount(records, *, currency="EUR"):\n'
        f'    """Sum the amounts of the {noun} records in one currency."""\n'
        f'    total = Decimal("0")\n'
        f"    for record in records:\n"
        f"        if record.currency != currency:\n"
        f'            raise ValueError(f"mixed currencies: {{record.currency}} and {{currency}}")\n'
        f"        total += record.amount\n"
        f"{trace}"
        f"    return total.quantize(CENT, rounding=ROUND_HALF_UP)\n"
    )


def _mark(f: _Function, changed: bool) -> str:
    noun, state = f.noun, f.state
    trace = (
        f'    log.info("%s %s marked {state} by %s", "{noun}", {noun}.id, actor.id)\n'
        if changed
        else ""
    )
    return (
        f"def mark_{noun}_{state}(session, {noun}, *, actor, now=None):\n"
        f'    """Move the {noun} to {state} and record who did it."""\n'
        f'    if {noun}.status == "{state}":\n'
        f"        return {noun}\n"
        f'    {noun}.status = "{state}"\n'
        f"    {noun}.updated_by = actor.id\n"
        f"    {noun}.updated_at = now or datetime.now(timezone.utc)\n"
        f'    session.add(AuditEvent(kind="{noun}.{state}", subject_id={noun}.id, '
        f"actor_id=actor.id))\n"
        f"{trace}"
        f"    session.flush()\n"
        f"    return {noun}\n"
    )


def _to_dict(f: _Function, changed: bool) -> str:
    noun = f.noun
    amount = f"str({noun}.amount.quantize(CENT))" if changed else f"str({noun}.amount)"
    updated = f'        "updated_at": {noun}.updated_at.isoformat(),\n' if changed else ""
    return (
        f"def {noun}_to_dict({noun}):\n"
        f'    """The public JSON representation of {_a(noun)}."""\n'
        f"    return {{\n"
        f'        "id": str({noun}.id),\n'
        f'        "status": {noun}.status,\n'
        f'        "amount": {amount},\n'
        f'        "currency": {noun}.currency,\n'
        f'        "created_at": {noun}.created_at.isoformat(),\n'
        f"{updated}"
        f"    }}\n"
    )


_TEMPLATES: dict[str, Callable[[_Function, bool], str]] = {
    "load": _load,
    "total": _total,
    "mark": _mark,
    "to_dict": _to_dict,
}


@dataclass(frozen=True, slots=True)
class _Module:
    path: str
    doc: str
    nouns: tuple[str, ...]
    states: tuple[str, ...]


MODULES = (
    _Module(
        "shop/orders.py",
        "Orders and carts: loading, totals, state changes and their JSON form.",
        ("order", "cart", "line_item", "coupon"),
        ("paid", "shipped", "cancelled"),
    ),
    _Module(
        "shop/payments.py",
        "Payments, invoices and payouts: loading, totals, state changes and their JSON form.",
        ("payment", "invoice", "payout", "chargeback"),
        ("captured", "refunded", "disputed"),
    ),
    _Module(
        "shop/inventory.py",
        "Stock, reservations and shipments: loading, totals, state changes and their JSON form.",
        ("stock_item", "reservation", "shipment", "warehouse"),
        ("reserved", "released", "delivered"),
    ),
)

_BEFORE = 9
"""Functions in each file before the change; the change adds ten and edits four."""
_EDITED = (0, 3, 6, 8)
_INSERTED_AFTER = {3: 3, 6: 3, 8: 4}
"""Where new functions go (after which old one) and how many: one hunk each."""


def _functions(module: _Module) -> list[_Function]:
    """Every (template, noun) pair, then `mark` with the other states, in a fixed order."""
    pairs = [
        _Function(template, noun, module.states[0])
        for noun, template in itertools.product(module.nouns, _TEMPLATES)
    ]
    extra = [_Function("mark", noun, state) for state in module.states[1:] for noun in module.nouns]
    # A fixed interleaving, so that neither version is sorted by template.
    return pairs[::2] + pairs[1::2] + extra


def _source(module: _Module, functions: Sequence[tuple[_Function, bool]]) -> str:
    classes = ", ".join(_camel(n) for n in module.nouns)
    header = (
        f'"""{module.doc}"""\n\n'
        "import logging\n"
        "from datetime import datetime, timezone\n"
        "from decimal import ROUND_HALF_UP, Decimal\n\n"
        "from shop.audit import AuditEvent\n"
        f"from shop.models import {classes}\n\n"
        "log = logging.getLogger(__name__)\n"
        'CENT = Decimal("0.01")\n'
    )
    bodies = [_TEMPLATES[f.template](f, changed) for f, changed in functions]
    return header + "".join(f"\n\n{body}" for body in bodies)


def _versions(module: _Module) -> tuple[str, str]:
    functions = _functions(module)
    old, new = functions[:_BEFORE], iter(functions[_BEFORE:])
    after: list[tuple[_Function, bool]] = []
    for i, function in enumerate(old):
        after.append((function, i in _EDITED))
        after.extend((next(new), False) for _ in range(_INSERTED_AFTER.get(i, 0)))
    return _source(module, [(f, False) for f in old]), _source(module, after)


def sample_diff() -> str:
    """The scenario's diff, in git's format, the same on every run."""
    out = []
    for module in MODULES:
        before, after = _versions(module)
        out.append(f"diff --git a/{module.path} b/{module.path}\n")
        out.extend(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                f"a/{module.path}",
                f"b/{module.path}",
            )
        )
    return "".join(out)


def sample_sources() -> dict[str, str]:
    """Each file of the scenario at the change's head, as the agents' context reads it."""
    return {module.path: _versions(module)[1] for module in MODULES}


def sample_unit(diff_text: str) -> ReviewUnit:
    """The scenario's diff as the one review unit it is reviewed as."""
    # The whole diff in one unit: a limit well above its size, whatever the rounding per file.
    units = Diff.parse(diff_text).units(max_tokens=2 * typical_tokens(diff_text))
    if len(units) != 1:
        raise ScenarioBroken(f"the diff split into {len(units)} units")
    return units[0]


TITLE = "Lock rows loaded for an update, log state changes, totals and JSON for every record"
DESCRIPTION = """\
## What

- `load_*` take `for_update=False`: with `True` the row stays locked (`SELECT … FOR UPDATE`)
  until the transaction ends, so two workers capturing and refunding the same payment no
  longer both see it unpaid.
- Every `mark_*` logs the change at INFO, with the record's id and who made it; the audit
  event is unchanged.
- New `total_*_amount` and `*_to_dict` for carts, line items, invoices, payouts,
  reservations and shipments, like those orders and payments already had.
- `*_to_dict` rounds `amount` to the cent and adds `updated_at`. This is intended: the
  mobile app showed `12.5` for €12.50, and asked for `updated_at` to sync.

## Why

Refunds raced with captures twice last week (#1482), and support could not tell who marked a
shipment delivered without querying the audit table.

## Not in this change

The callers of `load_payment` still pass `for_update=False`; they move over in the next pull
request, one endpoint at a time.

## Checklist

- [x] Tests for the new totals
- [x] CHANGELOG.md
- [ ] Docs
"""


def sample_intent() -> str:
    """What the scenario's pull request says it does, as its agents read it."""
    return pull_intent(TITLE, DESCRIPTION)


# -- where its lines are ------------------------------------------------------------------------


def line_of(diff: Diff, path: str, function: str, text: str) -> int:
    """The new-file line number of `text` in `function` (named by its `def` line) of `path`."""
    diff_file = diff.file(path)
    if diff_file is None:
        raise LookupError(f"{path} is not in the diff")
    for hunk in diff_file.hunks:
        numbers = sorted(hunk.lines)
        starts = [n for n in numbers if hunk.lines[n].startswith(f"def {function}(")]
        if starts:
            return next(n for n in numbers if n > starts[0] and hunk.lines[n] == text)
    raise LookupError(f"def {function} is not in a hunk of {path}")


def span(path: str, line: int, end: int | None = None) -> dict[str, Any]:
    """The location of a finding or a patch: lines `line`..`end` of `path`."""
    return {"path": path, "start_line": line, "end_line": line if end is None else end}
