"""Scripted debates of a panel of testers: majorities, a tie, a coder that repeats itself.

Each script is by agent (`agents.models.scripted.by_agent`): three testers — correctness, security,
performance — or two for a tie, the coder, and the arbiter where a split calls it. They
debate the payments change of :mod:`tests.scenarios.debates` (its lines 8 and 16).
"""

from typing import Any

from agents.models.scripted import ScriptStep
from tests.scenarios.debates import (
    LOG_FIX,
    UNDEFINED,
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    finding,
    force_fix,
    reject,
    report,
    rulings,
    warn,
)

CORRECTNESS, SECURITY, PERFORMANCE = "tester-correctness", "tester-security", "tester-performance"
SPLIT = finding(8, "Quantizing each share loses the remainder: 10 split 3 ways gives 9.99.")

Script = dict[str, list[ScriptStep]]

KEPT: Script = {
    CORRECTNESS: [
        report(UNDEFINED),
        evaluations(reject("F1", "Nothing imports log.")),
        evaluations(reject("F1", "The patch logs, but nothing imports logger either.")),
    ],
    SECURITY: [
        report(),
        evaluations(reject("F1", "A NameError aborts the refund half done.")),
        evaluations(reject("F1", "The refund is still aborted after the balance moved.")),
    ],
    PERFORMANCE: [
        report(),
        evaluations(accept("F1", "The module defines log at import time.")),
        evaluations(accept("F1", "The logger call is fine.")),
    ],
    "coder": [
        answers(dispute("F1", "log is a module-level helper.")),
        answers(concede("F1", LOG_FIX, "Then use the module's logger.")),
    ],
}
"""Two of three testers keep F1 against the coder twice: it stands when its exchanges run
out (`max_exchanges_per_finding=2`). The coder's last answer carries a patch."""

FIXED_BY_MAJORITY: Script = {
    CORRECTNESS: [report(UNDEFINED), evaluations(accept("F1", "Fixed."))],
    SECURITY: [report(), evaluations(accept("F1", "The logger is defined."))],
    PERFORMANCE: [report(), evaluations(reject("F1", "Logging every refund is slow."))],
    "coder": [answers(concede("F1", LOG_FIX))],
}
"""Two of three testers accept the coder's patch; tester-performance keeps the finding."""

WITHDRAWN_BY_MAJORITY: Script = {
    CORRECTNESS: [report(SPLIT), evaluations(reject("F1", "Splitting must never lose a cent."))],
    SECURITY: [report(), evaluations(accept("F1", "Previews may round."))],
    PERFORMANCE: [report(), evaluations(accept("F1", "The ledger sums exactly."))],
    "coder": [answers(dispute("F1", "split() only feeds a preview."))],
}
"""Two of three testers accept the coder's argument; tester-correctness, which raised it, keeps
it."""


REPEATED: Script = {
    CORRECTNESS: [report(UNDEFINED), evaluations(reject("F1", "Nothing imports it."))],
    SECURITY: [report(), evaluations(reject("F1", "It fails at runtime."))],
    PERFORMANCE: [report(), evaluations(accept("F1"))],
    "coder": [answers(dispute("F1", "log is a module-level helper."))] * 2,
}
"""The coder repeats its answer: every coder-tester budget drops to zero and every tester
leaves the debate; two of three kept F1, so it stands."""


def tie(ruling: dict[str, Any]) -> Script:
    """Two testers split on the coder's answer; the arbiter rules on F1 with `ruling`."""
    return {
        CORRECTNESS: [report(UNDEFINED), evaluations(reject("F1", "Nothing imports log."))],
        SECURITY: [report(), evaluations(accept("F1", "log is a builtin of this runtime."))],
        "coder": [answers(dispute("F1", "log is provided by the runtime."))],
        "arbiter": [rulings(ruling)],
    }


TIE_FIXED = tie(force_fix("F1", LOG_FIX))
TIE_WARNED = tie(warn("F1", "log exists only on the production runtime."))
