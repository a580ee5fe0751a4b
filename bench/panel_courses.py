"""The seven findings of the panel scenario (`bench.panel_tokens`) and their courses: which
tester raises each, the coder's answer to it in each round, which testers keep it, and how it
must end."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.diff import Diff
from agents.outcome import Consensus, Resolution
from bench.shop_diff import MODULES, line_of, span
from policies.arbitration import ArbitrationTrigger
from policies.panel import Focus


@dataclass(frozen=True, slots=True)
class Exchange:
    """The coder's answer to a finding in one round, and how the testers take it: those in
    `kept` keep the finding, each for its reason; the others accept, for `accepted`."""

    argument: str
    accepted: str
    patch: dict[str, Any] | None = None
    """A concession's patch; none for a dispute."""
    kept: Mapping[Focus, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class End:
    """How a finding ends: its consensus and resolution, the round, and why it left the
    debate if a trigger ended it."""

    consensus: Consensus
    resolution: Resolution
    round: int
    trigger: ArbitrationTrigger | None = None


@dataclass(frozen=True, slots=True)
class Course:
    """One finding from its report to its end: who raises it, the coder's answer and the
    testers' votes in each round, and how it must end."""

    raiser: Focus
    finding: dict[str, Any]
    exchanges: tuple[Exchange, ...]
    end: End

    @property
    def claim(self) -> str:
        return str(self.finding["claim"])


def _only_line(diff: Diff, path: str, text: str) -> int:
    """The new-file line number of the one line of `path` the diff shows with `text`."""
    diff_file = diff.file(path)
    hunks = diff_file.hunks if diff_file else ()
    numbers = [n for hunk in hunks for n, line in hunk.lines.items() if line == text]
    if len(numbers) != 1:
        raise LookupError(f"{len(numbers)} lines of {path} read {text!r}")
    return numbers[0]


def courses(diff: Diff) -> tuple[Course, ...]:
    """The scenario's findings in the order the engine numbers them (the testers report in
    panel order, each most severe first): the n-th course is F<n>."""
    orders, payments, inventory = (m.path for m in MODULES)
    cart_sum = line_of(diff, orders, "total_cart_amount", "        total += record.amount")
    amount = line_of(diff, payments, "invoice_to_dict", '        "amount": str(invoice.amount),')
    refund = line_of(
        diff, payments, "mark_payment_refunded", '    if payment.status == "refunded":'
    )
    lock = line_of(diff, orders, "load_coupon", "    if for_update:")
    release = line_of(
        diff, inventory, "mark_reservation_released", '    if reservation.status == "released":'
    )
    count = _only_line(diff, payments, '    log.debug("summed %d payment records", len(records))')
    status = line_of(diff, payments, "mark_payout_refunded", '    payout.status = "refunded"')
    flush = line_of(diff, payments, "mark_payout_refunded", "    session.flush()")
    return (
        Course(
            Focus.CORRECTNESS,
            {
                **span(orders, cart_sum),
                "severity": "major",
                "claim": (
                    "Draft carts have amount None, so `total += record.amount` raises TypeError "
                    "for any list of carts that contains a draft."
                ),
                "evidence": (
                    "Cart.amount is nullable until checkout; total_cart_amount sums every record "
                    "it is given without filtering drafts."
                ),
            },
            (
                Exchange(
                    "Right: drafts reach this path. Skip records with no amount.",
                    "The patch skips drafts before summing.",
                    patch={
                        **span(orders, cart_sum),
                        "replacement": (
                            "        if record.amount is None:\n"
                            "            continue  # a draft has no amount yet\n"
                            "        total += record.amount"
                        ),
                    },
                ),
            ),
            End(Consensus.UNANIMOUS, Resolution.FIXED, 1),
        ),
        Course(
            Focus.CORRECTNESS,
            {
                **span(payments, amount),
                "severity": "minor",
                "claim": (
                    "invoice_to_dict renders the amount with str(): Decimal('10.5') becomes "
                    '"10.5", while the clients of this JSON expect two decimals.'
                ),
                "evidence": "Nothing quantizes the amount to CENT before it is rendered.",
            },
            (
                Exchange(
                    "Invoice.amount is a NUMERIC(12, 2) column: the database hands back every "
                    "amount with two decimals, so str() already renders 10.50.",
                    "A NUMERIC(12, 2) column always carries two decimals; str() keeps them.",
                ),
            ),
            End(Consensus.UNANIMOUS, Resolution.WITHDRAWN, 1),
        ),
        Course(
            Focus.SECURITY,
            {
                **span(payments, refund, refund + 1),
                "severity": "major",
                "claim": (
                    "mark_payment_refunded trusts its caller on the payment's state: an "
                    "authorised-only or disputed payment can be marked refunded, and the "
                    "ledger then books money that never moved."
                ),
                "evidence": (
                    "The only guard returns early when the payment is already refunded; the "
                    "provider's refund webhook calls this function with whatever payment it "
                    "names."
                ),
            },
            (
                Exchange(
                    "Refunds are only started from the payment page, which offers the button "
                    "for captured payments only; other statuses never get here.",
                    "If the payment page is the only caller, its status check suffices.",
                    kept={
                        Focus.SECURITY: (
                            "The provider's refund webhook calls this function directly, "
                            "whatever the payment's status: the page is not the only caller, "
                            "and the webhook's payload is not ours to trust."
                        ),
                        Focus.CORRECTNESS: (
                            "Refunded may only follow captured, and nothing in the function "
                            "enforces that transition: any caller can break the invariant."
                        ),
                        Focus.CONCURRENCY: (
                            "A payment that turns disputed between the page's check and this "
                            "call is still marked refunded: the check and the write are apart."
                        ),
                    },
                ),
                Exchange(
                    "Fair: the webhook bypasses the page. Refuse anything but a captured "
                    "payment here.",
                    "Refunds now require a captured payment, whoever calls.",
                    patch={
                        **span(payments, refund, refund + 1),
                        "replacement": (
                            '    if payment.status == "refunded":\n'
                            "        return payment\n"
                            '    if payment.status != "captured":\n'
                            '        raise ValueError(f"cannot refund a {payment.status} payment")'
                        ),
                    },
                ),
            ),
            End(Consensus.UNANIMOUS, Resolution.FIXED, 2),
        ),
        Course(
            Focus.PERFORMANCE,
            {
                **span(orders, lock, lock + 1),
                "severity": "minor",
                "claim": (
                    "load_coupon(for_update=True) locks the coupon row until the transaction "
                    "ends: during a promotion every checkout redeeming the same coupon queues "
                    "on that one lock."
                ),
                "evidence": (
                    "with_for_update() holds the row lock to commit, and a checkout's "
                    "transaction also waits on the payment provider."
                ),
            },
            (
                Exchange(
                    "Only the redemption of a limited coupon passes for_update=True, and there "
                    "serialising is the point: the redemption count must not overshoot the "
                    "limit. Every other lookup keeps the default, False.",
                    "The lock guards a limited coupon's redemption count; that is its job.",
                    kept={
                        Focus.PERFORMANCE: (
                            "Serialising redemptions is right, holding the lock across the "
                            "provider call is not: count redemptions with one atomic UPDATE."
                        ),
                    },
                ),
            ),
            End(Consensus.MAJORITY, Resolution.WITHDRAWN, 1),
        ),
        Course(
            Focus.CONCURRENCY,
            {
                **span(inventory, release, release + 2),
                "severity": "major",
                "claim": (
                    "mark_reservation_released checks the status and then writes it with no "
                    "lock on the reservation: two workers releasing the same reservation both "
                    "pass the check, both add an AuditEvent, and the stock is returned twice."
                ),
                "evidence": (
                    'The check `if reservation.status == "released"` and the assignment are '
                    "separate statements on an object loaded without for_update."
                ),
            },
            (
                Exchange(
                    "Callers lock the stock item with load_stock_item(..., for_update=True), "
                    "added in this diff, before they release a reservation, so concurrent "
                    "releases are serialised on the stock row.",
                    "Serialising on the stock row covers the releases the callers make.",
                    kept={
                        Focus.CONCURRENCY: (
                            "Locking the stock item does not lock the reservation: two releases "
                            "of one reservation still read the same status before either writes."
                        ),
                        Focus.ERROR_HANDLING: (
                            "Nothing makes a caller take that lock, and a second release that "
                            "then fails on flush leaves the stock returned once too often."
                        ),
                        Focus.CORRECTNESS: (
                            "'Released once' must hold in this function; here it depends on "
                            "every caller remembering a lock on another row."
                        ),
                    },
                ),
                Exchange(
                    "A double release is harmless downstream: the stock ledger ignores a second "
                    "reservation.released event for the same reservation, so the stock is not "
                    "returned twice.",
                    "With the ledger ignoring repeated releases, the race returns no stock twice.",
                    kept={
                        Focus.CONCURRENCY: (
                            "The ledger drops the repeat, but both workers still write an "
                            "AuditEvent and both report the reservation as freshly released."
                        ),
                        Focus.ERROR_HANDLING: (
                            "The ledger's deduplication does not cover a flush failing half way: "
                            "the reservation can end released while its stock never returns."
                        ),
                        Focus.CORRECTNESS: (
                            "Two audit events for one release make the audit trail wrong, "
                            "whatever the ledger does with them."
                        ),
                    },
                ),
            ),
            End(Consensus.MAJORITY, Resolution.OPEN, 2, ArbitrationTrigger.ROUND_LIMIT),
        ),
        Course(
            Focus.ERROR_HANDLING,
            {
                **span(payments, count),
                "severity": "major",
                "claim": (
                    "The new debug line calls len(records) after the loop: for a generator or a "
                    "query it raises TypeError, so total_payment_amount fails after summing "
                    "everything."
                ),
                "evidence": "records is any iterable; the payout report passes a generator.",
            },
            (
                Exchange(
                    "Right: records may be a generator. Log the total instead of the count.",
                    "The debug line no longer calls len().",
                    patch={
                        **span(payments, count),
                        "replacement": '    log.debug("summed payment records to %s", total)',
                    },
                ),
            ),
            End(Consensus.UNANIMOUS, Resolution.FIXED, 1),
        ),
        Course(
            Focus.ERROR_HANDLING,
            {
                **span(payments, status, flush),
                "severity": "minor",
                "claim": (
                    "mark_payout_refunded sets payout.status before it flushes: if the flush "
                    "fails, the session still holds a refunded payout, and a retry in the same "
                    "session takes the early return and reports success."
                ),
                "evidence": (
                    "The early return trusts the in-memory status; nothing restores it when "
                    "session.flush() raises."
                ),
            },
            (
                Exchange(
                    "A failed flush makes the session roll back, which expires every loaded "
                    "object: a retry reloads the payout with its stored status.",
                    "After the rollback the payout is reloaded with its stored status.",
                    kept={
                        Focus.ERROR_HANDLING: (
                            "Only once the caller calls rollback(): the refund webhook's handler "
                            "catches IntegrityError and retries in the same session without one."
                        ),
                    },
                ),
            ),
            End(Consensus.MAJORITY, Resolution.WITHDRAWN, 1),
        ),
    )
