"""What the walkthrough costs: its one call per unit, billed per token of diff.

`bench.tokens`' review runs again with the walkthrough asked for (the config's defaults:
effort, no diagram), through the real :class:`agents.claude.ClaudeLLM` against the local fake
Messages API. The walkthrough's call comes after the debate, on the tester's model, with the
same tools, system prompt and diff: it reads that prefix from the cache the debate wrote,
and pays in full only for its short turn and its answer. Its bill (cache reads at 0.1, the
turn's uncached input, its output) is divided by the diff's tokens; the goal is 0.15.
"""

from dataclasses import dataclass
from typing import Any

from agents.claude import ClaudeLLM
from agents.diff import Diff, ReviewUnit
from agents.engine import Debate
from agents.tokens import typical_tokens
from bench.billing import KEY, ScenarioBroken, billed
from bench.shop_diff import MODULES
from bench.tokens_script import script
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig
from tests.fakes.messages_api import FakeMessagesAPI, ManualClock, QueuedResponder, Usage

GOAL = 0.15
"""Billed tokens of the walkthrough per diff token: cache reads plus its own turn and output."""


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
class WalkthroughCost:
    diff_tokens: int
    usage: Usage

    @property
    def billed(self) -> float:
        u = self.usage
        return (
            billed(u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens)
            + u.output_tokens
        )

    @property
    def ratio(self) -> float:
        return self.billed / self.diff_tokens

    @property
    def read_ratio(self) -> float:
        """The prefix's cache read alone (tools, system prompt, diff), per diff token."""
        return billed(0, 0, self.usage.cache_read_input_tokens) / self.diff_tokens


async def measure(unit: ReviewUnit, diff_text: str) -> WalkthroughCost:
    """The scenario with the walkthrough, caching on; the walkthrough's call's bill."""
    replies = script(unit.diff)
    replies["describe_change"] = [walkthrough_reply(unit.diff)]
    responder = QueuedResponder(**replies)
    with FakeMessagesAPI(responder, api_key=KEY, clock=ManualClock()) as api:
        llm = ClaudeLLM.connect(api_key=KEY, base_url=api.base_url, max_retries=0)
        try:
            debate = Debate(llm, DebatePolicy(max_rounds=2), summary=SummaryConfig())
            outcome = await debate.run(unit)
        finally:
            await llm.aclose()
    last = list(api.requests)[-1]
    if last.tool != "describe_change" or outcome.walkthrough is None or last.usage is None:
        raise ScenarioBroken(f"the last call was {last.tool}, not the walkthrough's")
    if responder.remaining():
        raise ScenarioBroken(f"replies left unused: {responder.remaining()}")
    return WalkthroughCost(typical_tokens(diff_text), last.usage)


def report(cost: WalkthroughCost) -> str:
    u = cost.usage
    return "\n".join(
        [
            "Walkthrough (one call after the debate, caching on)",
            f"  cache reads {u.cache_read_input_tokens:,} · cache writes "
            f"{u.cache_creation_input_tokens:,} · uncached input {u.input_tokens:,} · "
            f"output {u.output_tokens:,}",
            f"  billed {cost.billed:,.1f} tokens = {cost.ratio:.3f} per diff token"
            f"   goal ≤ {GOAL} (cache reads plus its own output)",
            f"  of which the cached prefix read once: {cost.read_ratio:.3f} per diff token",
        ]
    )
