"""What proving findings with tests costs in tokens, per finding and per token of diff.

`bench.tokens`' review runs twice, caching on, through the real
:class:`agents.models.claude.ClaudeLLM` against the local fake Messages API: once without
tests, once with each finding carrying one, run by a scripted verifier
(`tests.scenarios.proofs.ScriptedVerifier`: what a test shows is given by its path, what a patch
does by its text; the tests' real runs are `bench.verify`'s). F1's test reproduces it and the
coder's patch makes it pass; F2's fails at the base too, proving nothing, so its debate goes
on as without tests; F3's first test passes at the head, so its tester is asked for another
or its withdrawal (the retest turn, an evaluation of its own) and gives one, which fails at
both. The findings end as they do without tests.

What the proofs cost is the difference between the two bills: the tests the tester writes
(output), every run told in the findings' threads of the later turns (input), and the retest
turn (its input and output). Input is billed as the API bills it (uncached at 1, cache writes
at 1.25, reads at 0.1) and output counted token for token, as `bench.walkthrough_tokens`
counts it; each also at an output token's price.
"""

from dataclasses import dataclass
from typing import Any

from agents.debate.engine import Debate
from agents.debate.proofs import Proving
from agents.diff import ReviewUnit
from agents.models.claude import ClaudeLLM
from agents.models.tokens import typical_tokens
from agents.outcome import Outcome, Resolution
from agents.verification import Evidence
from bench.billing import KEY, ScenarioBroken
from bench.shop_diff import MODULES
from bench.tokens_script import script
from bench.walkthrough_tokens import OUTPUT_PRICE, Bill
from policies.debate import DebatePolicy
from tests.fakes.messages_api import FakeMessagesAPI, ManualClock, QueuedResponder, Recorded
from tests.scenarios.proofs import ScriptedVerifier

FINDINGS = 3
TOOLS_WITH_TESTS = (
    "report_findings",
    "evaluate_answers",  # the retest turn: F3's first test passed at the head
    "answer_findings",
    "evaluate_answers",
    "answer_findings",
    "evaluate_answers",
    "arbitrate",
)
RETEST = 1
"""The retest turn's place among the calls."""


def _test(path: str, name: str, body: str) -> dict[str, str]:
    module = path.removesuffix(".py").replace("/", ".")
    return {
        "path": f"tests/test_{name}.py",
        "content": f"from {module} import *\n\n\ndef test_{name}():\n{body}",
    }


def _tests() -> dict[str, dict[str, str]]:
    """The tests the tester writes, by finding (F3's second as `F3+`)."""
    orders, payments, inventory = (m.path for m in MODULES)
    return {
        "F1": _test(
            orders,
            "draft_cart_total",
            "    carts = [Cart(amount=5), Cart(amount=None)]\n"
            "    assert total_cart_amount(carts) == 5\n",
        ),
        "F2": _test(
            payments,
            "refund_needs_capture",
            "    payment = Payment(status='authorised')\n"
            "    try:\n"
            "        mark_payment_refunded(payment)\n"
            "    except ValueError:\n"
            "        return\n"
            "    raise AssertionError('an authorised payment was refunded')\n",
        ),
        "F3": _test(
            inventory,
            "naive_now",
            "    item = StockItem()\n"
            "    mark_stock_item_released(item, now=datetime(2024, 1, 1))\n"
            "    assert item.updated_at.tzinfo is not None\n",
        ),
        "F3+": _test(
            inventory,
            "naive_now_compared",
            "    item, other = StockItem(), StockItem()\n"
            "    mark_stock_item_released(item, now=datetime(2024, 1, 1))\n"
            "    mark_stock_item_released(other)\n"
            "    assert sorted([item.updated_at, other.updated_at])\n",
        ),
    }


def _with_tests(replies: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """`bench.tokens_script`'s replies with a test on each finding, and the retest turn."""
    tests = _tests()
    (report, *rest) = replies["report_findings"]
    findings = [{**f, "reproduction": tests[f"F{n}"]} for n, f in enumerate(report["findings"], 1)]
    retest = {
        "evaluations": [
            {
                "finding_id": "F3",
                "decision": "reject",
                "reason": "The first test compared nothing; this one sorts the two timestamps.",
                "reproduction": tests["F3+"],
            }
        ]
    }
    return {
        **replies,
        "report_findings": [{**report, "findings": findings}, *rest],
        "evaluate_answers": [retest, *replies["evaluate_answers"]],
    }


def _verifier(replies: dict[str, list[Any]]) -> ScriptedVerifier:
    tests = _tests()
    shows = {
        tests["F1"]["path"]: Evidence.REPRODUCED,
        tests["F2"]["path"]: Evidence.FAILS_AT_BASE,
        tests["F3"]["path"]: Evidence.NOT_REPRODUCED,
        tests["F3+"]["path"]: Evidence.FAILS_AT_BASE,
    }
    patches = [
        answer["patch"]["replacement"]
        for reply in replies["answer_findings"]
        for answer in reply["answers"]
        if "patch" in answer
    ]
    patches += [
        r["patch"]["replacement"] for reply in replies["arbitrate"] for r in reply["rulings"]
    ]
    return ScriptedVerifier(shows, fixes=dict.fromkeys(patches, True))


async def _run(unit: ReviewUnit, tests: bool) -> tuple[list[Recorded], Outcome]:
    replies: dict[str, list[Any]] = script(unit.diff)
    proving = Proving(_verifier(replies)) if tests else None
    if tests:
        replies = _with_tests(replies)
    responder = QueuedResponder(**replies)
    with FakeMessagesAPI(responder, api_key=KEY, clock=ManualClock()) as api:
        llm = ClaudeLLM.connect(api_key=KEY, base_url=api.base_url, max_retries=0)
        try:
            outcome = await Debate(llm, DebatePolicy(max_rounds=2), proving=proving).run(unit)
        finally:
            await llm.aclose()
    if responder.remaining():
        raise ScenarioBroken(f"replies left unused: {responder.remaining()}")
    return list(api.requests), outcome


@dataclass(frozen=True, slots=True)
class ProofCost:
    diff_tokens: int
    without: Bill
    with_tests: Bill
    retest: Bill
    """The retest turn alone."""
    ratio_without: float
    ratio_with: float
    """Billed input per diff token, the review's whole, without tests and with them."""

    @property
    def input(self) -> float:
        return self.with_tests.input - self.without.input

    @property
    def output(self) -> int:
        return self.with_tests.output - self.without.output

    def per_finding(self, price: int = 1) -> float:
        return (self.input + self.output * price) / FINDINGS

    def per_diff_token(self, price: int = 1) -> float:
        return (self.input + self.output * price) / self.diff_tokens


async def measure(unit: ReviewUnit, diff_text: str) -> ProofCost:
    """The scenario without tests and with them, caching on; checked to end the same way."""
    plain, plain_outcome = await _run(unit, tests=False)
    proven, outcome = await _run(unit, tests=True)
    tools = tuple(r.tool for r in proven)
    if tools != TOOLS_WITH_TESTS:
        raise ScenarioBroken(f"with tests the calls were {tools}, not {TOOLS_WITH_TESTS}")
    ended = [(f.finding.id, f.resolution) for f in outcome.findings]
    if ended != [(f.finding.id, f.resolution) for f in plain_outcome.findings] or any(
        r is not Resolution.FIXED for _, r in ended
    ):
        raise ScenarioBroken(f"with tests the findings ended {ended}")
    verified = {f.finding.id: f.fix_verified for f in outcome.findings}
    if verified["F1"] is not True:
        raise ScenarioBroken(f"F1's fix was not verified: {verified}")
    diff_tokens = typical_tokens(diff_text)
    without, with_tests = Bill.of(plain), Bill.of(proven)
    return ProofCost(
        diff_tokens,
        without,
        with_tests,
        Bill.of(proven[RETEST : RETEST + 1]),
        without.input / diff_tokens,
        with_tests.input / diff_tokens,
    )


def report(cost: ProofCost) -> str:
    a, b, r = cost.without, cost.with_tests, cost.retest
    return "\n".join(
        [
            f"Findings' tests (a test on each of the {FINDINGS} findings, one retest turn, "
            "caching on)",
            f"{'':34}{'without':>12}{'with':>12}{'added':>12}",
            f"{'calls':34}{a.calls:>12,}{b.calls:>12,}{b.calls - a.calls:>12,}",
            f"{'billed input tokens':34}{a.input:>12,.1f}{b.input:>12,.1f}{cost.input:>12,.1f}",
            f"{'output tokens':34}{a.output:>12,}{b.output:>12,}{cost.output:>12,}",
            f"{'billed input / diff tokens':34}{cost.ratio_without:>12.2f}{cost.ratio_with:>12.2f}",
            f"  of the added: the retest turn {r.input:,.1f} billed input and {r.output:,} "
            "output tokens; the rest, the tests written and their runs told",
            f"  a proof costs {cost.per_finding():,.1f} tokens a finding, "
            f"{cost.per_diff_token():.3f} per diff token (input and output counted alike)",
            f"  its output at an output token's price ({OUTPUT_PRICE} times an input token): "
            f"{cost.per_finding(OUTPUT_PRICE):,.1f} a finding, "
            f"{cost.per_diff_token(OUTPUT_PRICE):.3f} per diff token",
        ]
    )
