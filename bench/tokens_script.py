"""The scripted replies of the token benchmark's scenario (`bench.tokens`): the tester's three
findings, the coder's answers and the tester's evaluations in two rounds, and the arbiter's
ruling on the finding still disputed at the round limit."""

from agents.diff import Diff
from bench.shop_diff import MODULES, line_of, span
from tests.fakes.messages_api import Step


def script(diff: Diff) -> dict[str, list[Step]]:
    """The scenario's replies, one queue per tool, in the order the engine will ask."""
    orders, payments, inventory = (m.path for m in MODULES)
    f1 = span(orders, line_of(diff, orders, "total_cart_amount", "        total += record.amount"))
    guard = line_of(diff, payments, "mark_payment_refunded", '    if payment.status == "refunded":')
    f2 = span(payments, guard, guard + 1)
    f3 = span(
        inventory,
        line_of(
            diff,
            inventory,
            "mark_stock_item_released",
            "    stock_item.updated_at = now or datetime.now(timezone.utc)",
        ),
    )
    findings = [
        {
            **f1,
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
        {
            **f2,
            "severity": "major",
            "claim": (
                "mark_payment_refunded accepts any prior status: a payment that was only "
                "authorised, or is under dispute, can be marked refunded, and the ledger then "
                "books money that never moved."
            ),
            "evidence": "The only guard returns early when the payment is already refunded.",
        },
        {
            **f3,
            "severity": "minor",
            "claim": (
                "A naive `now` passed by a caller is stored as is next to timezone-aware "
                "timestamps; comparing it with other updated_at values raises TypeError."
            ),
            "evidence": "Nothing checks that `now` is aware before it is stored.",
        },
    ]
    f1_patch = {
        **f1,
        "replacement": (
            "        if record.amount is None:\n"
            "            continue  # a draft has no amount yet\n"
            "        total += record.amount"
        ),
    }
    f2_patch = {
        **f2,
        "replacement": (
            '    if payment.status == "refunded":\n'
            "        return payment\n"
            '    if payment.status != "captured":\n'
            '        raise ValueError(f"cannot refund a {payment.status} payment")'
        ),
    }
    f3_patch = {
        **f3,
        "replacement": (
            "    stock_item.updated_at = (now or datetime.now(timezone.utc))"
            ".astimezone(timezone.utc)"
        ),
    }
    return {
        "report_findings": [{"findings": findings}],
        "answer_findings": [
            {
                "answers": [
                    {
                        "finding_id": "F1",
                        "stance": "concede",
                        "argument": "Right: drafts reach this path. Skip records with no amount.",
                        "patch": f1_patch,
                    },
                    {
                        "finding_id": "F2",
                        "stance": "dispute",
                        "argument": (
                            "Refunds are only started from the payment page, which offers the "
                            "button for captured payments only; other statuses never get here."
                        ),
                    },
                    {
                        "finding_id": "F3",
                        "stance": "dispute",
                        "argument": (
                            "Every caller passes datetime.now(timezone.utc) or nothing; the "
                            "scheduler builds its timestamps the same way."
                        ),
                    },
                ]
            },
            {
                "answers": [
                    {
                        "finding_id": "F2",
                        "stance": "concede",
                        "argument": "Fair: the webhook bypasses the page. Refuse other statuses.",
                        "patch": f2_patch,
                    },
                    {
                        "finding_id": "F3",
                        "stance": "dispute",
                        "argument": (
                            "Normalising here would hide a caller's bug; the column is "
                            "timezone-aware, so the database itself rejects a naive value."
                        ),
                    },
                ]
            },
        ],
        "evaluate_answers": [
            {
                "evaluations": [
                    {"finding_id": "F1", "decision": "accept", "reason": "The patch skips drafts."},
                    {
                        "finding_id": "F2",
                        "decision": "reject",
                        "reason": (
                            "The provider's refund webhook calls this function directly, "
                            "whatever the payment's status; the page is not the only caller."
                        ),
                    },
                    {
                        "finding_id": "F3",
                        "decision": "reject",
                        "reason": (
                            "The signature accepts any datetime and reports/export.py passes "
                            "datetime.utcnow(), which is naive."
                        ),
                    },
                ]
            },
            {
                "evaluations": [
                    {
                        "finding_id": "F2",
                        "decision": "accept",
                        "reason": "Refunds now require a captured payment.",
                    },
                    {
                        "finding_id": "F3",
                        "decision": "reject",
                        "reason": (
                            "The database converts a naive value with the session's time zone; "
                            "it does not reject it, so the wrong instant is stored silently."
                        ),
                    },
                ]
            },
        ],
        "arbitrate": [
            {
                "rulings": [
                    {
                        "finding_id": "F3",
                        "ruling": "force_fix",
                        "reasoning": (
                            "A naive datetime reaches this function today and is stored as the "
                            "wrong instant; converting to UTC here is cheap and safe."
                        ),
                        "patch": f3_patch,
                    }
                ]
            }
        ],
    }
