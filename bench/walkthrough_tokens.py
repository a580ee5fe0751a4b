"""What the walkthrough costs, billed per token of diff.

`bench.tokens`' review runs twice, caching on, through the real
:class:`agents.models.claude.ClaudeLLM` against the local fake Messages API: once without a
walkthrough, once with the config's defaults (a description, a line per file, where to look,
the effort; no diagram). The walkthrough is written by the unit's first tester in the report
it makes anyway (`agents.debate.unit_walkthrough`), so the review makes the same calls both
times; what it costs is the difference between the two bills: its field in the report's
schema, which every call reads from the cache, the words that ask for it in the report's turn,
and its answer.
Input is billed as the API bills it (uncached at 1, cache writes at 1.25, reads at 0.1) and
the answer counted token for token, as the goal counts it; the answer at its own price (five
times an input token on Anthropic's list) is printed beside it.
"""

from dataclasses import dataclass
from typing import Any

from agents.debate.engine import Debate
from agents.diff import Diff, ReviewUnit
from agents.models.claude import ClaudeLLM
from agents.models.tokens import typical_tokens
from bench.billing import KEY, ScenarioBroken, billed
from bench.shop_diff import MODULES
from bench.tokens_script import script
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig
from tests.fakes.messages_api import FakeMessagesAPI, ManualClock, QueuedResponder, Recorded

GOAL = 0.15
"""Billed tokens of the walkthrough per diff token: cache reads plus its own turn and output."""

OUTPUT_PRICE = 5
"""An output token's price in input tokens (Claude's list prices: $15 against $3 a million)."""


def walkthrough_reply(diff: Diff) -> dict[str, Any]:
    """A walkthrough as a model writes one for the scenario's three files."""
    orders, payments, inventory = (m.path for m in MODULES)
    return {
        "description": (
            "Adds totals over carts, refunds of payments and the release of reserved stock, "
            "each with its own status checks and timestamps."
        ),
        "files": [
            {"path": orders, "summary": "sums cart amounts and lists a customer's open carts"},
            {"path": payments, "summary": "marks payments refunded, once, with the time"},
            {"path": inventory, "summary": "releases reserved stock items and stamps them"},
        ],
        "attention": [
            {"path": payments, "why": "a refund that runs twice must not pay out twice"},
            {"path": orders, "why": "draft carts have no amount yet"},
        ],
        "effort": 3,
    }


@dataclass(frozen=True, slots=True)
class Bill:
    """One review's bill, in tokens."""

    input: float
    """Input, billed: uncached at 1, cache writes at 1.25, reads at 0.1."""
    output: int
    calls: int

    @classmethod
    def of(cls, requests: list[Recorded]) -> "Bill":
        usages = [r.usage for r in requests if r.usage is not None]
        return cls(
            input=sum(
                billed(u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens)
                for u in usages
            ),
            output=sum(u.output_tokens for u in usages),
            calls=len(requests),
        )


@dataclass(frozen=True, slots=True)
class WalkthroughCost:
    diff_tokens: int
    without: Bill
    with_walkthrough: Bill

    @property
    def input(self) -> float:
        """The billed input the walkthrough adds: its schema read by every call, its ask."""
        return self.with_walkthrough.input - self.without.input

    @property
    def output(self) -> int:
        return self.with_walkthrough.output - self.without.output

    @property
    def ratio(self) -> float:
        return (self.input + self.output) / self.diff_tokens

    @property
    def priced_ratio(self) -> float:
        """The same, its answer at an output token's price."""
        return (self.input + self.output * OUTPUT_PRICE) / self.diff_tokens


async def _run(unit: ReviewUnit, summary: SummaryConfig | None) -> list[Recorded]:
    replies = script(unit.diff)
    if summary is not None:
        (report, *rest) = replies["report_findings"]
        assert isinstance(report, dict)
        replies["report_findings"] = [{**report, "walkthrough": walkthrough_reply(unit.diff)}]
        replies["report_findings"] += rest
    responder = QueuedResponder(**replies)
    with FakeMessagesAPI(responder, api_key=KEY, clock=ManualClock()) as api:
        llm = ClaudeLLM.connect(api_key=KEY, base_url=api.base_url, max_retries=0)
        try:
            debate = Debate(llm, DebatePolicy(max_rounds=2), summary=summary)
            outcome = await debate.run(unit)
        finally:
            await llm.aclose()
    if responder.remaining():
        raise ScenarioBroken(f"replies left unused: {responder.remaining()}")
    if (outcome.walkthrough is None) is (summary is not None):
        raise ScenarioBroken(f"the walkthrough is {outcome.walkthrough!r}")
    return list(api.requests)


async def measure(unit: ReviewUnit, diff_text: str) -> WalkthroughCost:
    """The scenario without a walkthrough and with one, caching on."""
    without = Bill.of(await _run(unit, None))
    described = Bill.of(await _run(unit, SummaryConfig()))
    if described.calls != without.calls:
        raise ScenarioBroken(f"{described.calls} calls with a walkthrough, {without.calls} without")
    return WalkthroughCost(typical_tokens(diff_text), without, described)


def report(cost: WalkthroughCost) -> str:
    a, b = cost.without, cost.with_walkthrough
    return "\n".join(
        [
            "Walkthrough (written in the first tester's report, caching on)",
            f"{'':34}{'without':>12}{'with':>12}{'added':>12}",
            f"{'calls':34}{a.calls:>12,}{b.calls:>12,}{b.calls - a.calls:>12,}",
            f"{'billed input tokens':34}{a.input:>12,.1f}{b.input:>12,.1f}{cost.input:>12,.1f}",
            f"{'output tokens':34}{a.output:>12,}{b.output:>12,}{cost.output:>12,}",
            f"  added {cost.input + cost.output:,.1f} tokens = {cost.ratio:.3f} per diff token"
            f"   goal ≤ {GOAL} (its reads, its ask and its output)",
            f"  its output at an output token's price ({OUTPUT_PRICE} times an input token): "
            f"{cost.priced_ratio:.3f} per diff token",
        ]
    )
