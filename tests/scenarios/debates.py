"""A small pull request and shorthand for scripting debates over it."""

import difflib
from collections.abc import Mapping
from typing import Any

from agents.diff import Diff, ReviewUnit
from agents.models.llm import LLMRequest

PAYMENTS_BEFORE = """\
import decimal


def split(total, parts):
    share = total / parts
    return [share] * parts


def refund(payment, amount):
    payment.balance -= amount
    return payment
"""

PAYMENTS_AFTER = """\
import decimal


def split(total, parts):
    if parts == 0:
        return []
    share = decimal.Decimal(total) / parts
    shares = [share.quantize(decimal.Decimal("0.01"))] * parts
    return shares


def refund(payment, amount):
    if amount > payment.balance:
        raise ValueError("refund exceeds balance")
    payment.balance = payment.balance - amount
    log(payment.id, amount)
    return payment
"""

WORKFLOW_BEFORE = "on: push\njobs:\n  build: {}\n"
WORKFLOW_AFTER = "on: push\njobs:\n  test: {}\n  build: {}\n"

PAYMENTS = "app/payments.py"
ORDERS = "app/orders.py"
ORDERS_V1 = """\
def total(items):
    return sum(i.price for i in items)


def discount(order, rate):
    return order.total * rate


def ship(order):
    send(order.address)
    return order
"""
"""A new file with three problems on lines 2, 6 and 10, for reviews over several pushes."""
WORKFLOW = ".github/workflows/ci.yml"


def git_diff(files: Mapping[str, tuple[str | None, str]]) -> str:
    """A git-style unified diff of `{path: (before, after)}`; a file whose `before` is None
    is one the change creates."""
    out = []
    for path, (before, after) in files.items():
        out.append(f"diff --git a/{path} b/{path}\n")
        if before is None:
            out.append("new file mode 100644\n")
        out.extend(
            difflib.unified_diff(
                (before or "").splitlines(keepends=True),
                after.splitlines(keepends=True),
                "/dev/null" if before is None else f"a/{path}",
                f"b/{path}",
                n=3,
            )
        )
    return "".join(out)


def payments_unit() -> ReviewUnit:
    diff = Diff.parse(
        git_diff(
            {
                PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER),
                WORKFLOW: (WORKFLOW_BEFORE, WORKFLOW_AFTER),
            }
        )
    )
    (unit,) = diff.units()
    return unit


def finding(
    line: int, claim: str, severity: str = "major", path: str = PAYMENTS, end: int | None = None
) -> dict[str, Any]:
    return {
        "path": path,
        "start_line": line,
        "end_line": end or line,
        "severity": severity,
        "claim": claim,
        "evidence": f"see line {line}",
    }


def report(*findings: dict[str, Any]) -> dict[str, Any]:
    return {"findings": list(findings)}


def patch(
    line: int, replacement: str, end: int | None = None, path: str = PAYMENTS
) -> dict[str, Any]:
    return {"path": path, "start_line": line, "end_line": end or line, "replacement": replacement}


def concede(finding_id: str, fix: dict[str, Any], argument: str = "Agreed.") -> dict[str, Any]:
    return {"finding_id": finding_id, "stance": "concede", "argument": argument, "patch": fix}


def dispute(finding_id: str, argument: str) -> dict[str, Any]:
    return {"finding_id": finding_id, "stance": "dispute", "argument": argument}


def answers(*items: dict[str, Any]) -> dict[str, Any]:
    return {"answers": list(items)}


def accept(finding_id: str, reason: str = "Right.") -> dict[str, Any]:
    return {"finding_id": finding_id, "decision": "accept", "reason": reason}


def reject(finding_id: str, reason: str) -> dict[str, Any]:
    return {"finding_id": finding_id, "decision": "reject", "reason": reason}


def evaluations(*items: dict[str, Any], new: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    return {"evaluations": list(items), "new_findings": list(new)}


def force_fix(finding_id: str, fix: dict[str, Any]) -> dict[str, Any]:
    return {
        "finding_id": finding_id,
        "ruling": "force_fix",
        "reasoning": "The tester is right.",
        "patch": fix,
    }


def warn(finding_id: str, warning: str) -> dict[str, Any]:
    return {
        "finding_id": finding_id,
        "ruling": "accept_with_warning",
        "reasoning": "Acceptable.",
        "warning": warning,
    }


def rulings(*items: dict[str, Any]) -> dict[str, Any]:
    return {"rulings": list(items)}


# -- one finding, and the conversation in which the coder fixes it ------------------------------

UNDEFINED = finding(16, "`log` is not defined anywhere: every refund raises NameError.", "blocker")
LOG_LINE = "    logger.info('refund %s %s', payment.id, amount)"
LOG_FIX = patch(16, LOG_LINE)

AGREED: dict[str, list[dict[str, Any]]] = {
    "report_findings": [report(UNDEFINED)],
    "answer_findings": [answers(concede("F1", LOG_FIX, "Right."))],
    "evaluate_answers": [evaluations(accept("F1", "Fixed."))],
}
"""The tester reports UNDEFINED, the coder concedes it with LOG_FIX, the tester accepts:
one tool input per call, by tool."""


def agreed_by_tool(request: LLMRequest) -> dict[str, Any]:
    """AGREED answered by the tool asked for, whatever many debates run at once."""
    replies = AGREED.get(request.tool.name)
    if not replies:
        raise AssertionError(f"unexpected {request.role} call ({request.tool.name})")
    return replies[0]


def agreed_by_role() -> dict[str, list[dict[str, Any]]]:
    """AGREED as `agents.models.scripted.by_role` takes it."""
    return {
        "tester": [*AGREED["report_findings"], *AGREED["evaluate_answers"]],
        "coder": list(AGREED["answer_findings"]),
    }


NEGATIVE = finding(13, "A negative amount passes the check and increases the balance.", "minor")


NEGATIVE_FIX = patch(13, "    if amount <= 0 or amount > payment.balance:")
