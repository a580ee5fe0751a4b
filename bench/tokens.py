"""What one review costs in input tokens, with prompt caching on and off, per token of diff.

A fixed scenario runs through the real :class:`agents.models.claude.ClaudeLLM` and the real debate
engine against a local fake of the Messages API (`tests.fakes.messages_api`), which counts
tokens at four characters a token and caches prompt prefixes as the API documents it:

* a ~490-line diff over three Python files (about 120 changed lines each, in four hunks),
  reviewed as one unit;
* the tester reports three findings; in round 1 the coder concedes F1 with a patch and
  disputes F2 and F3, and the tester accepts F1 and rejects the rest; in round 2 the coder
  concedes F2 and disputes F3 again with a new argument, and the tester accepts F2 and
  rejects F3; the round limit (2) sends F3 to the arbiter, who forces a fix.

The benchmark checks that the debate ran exactly so before it prints anything. Billed input is
counted as the API bills it: uncached input at 1, cache writes (5-minute TTL) at 1.25, cache
reads at 0.1 base input tokens each; the figure is that sum divided by the diff's own tokens.
The diff is `bench.shop_diff`'s, the scripted replies are `bench.tokens_script`'s, and the
run and its bill are `bench.billing`'s, which the panel scenario shares.

A second section runs the first scenario again with the code around the changes read from the
files at the head (`agents.context.reading`, the default budget): the review's billed input per diff
token beside the figure without context, the context's share of it, and what each context
token is billed over the review, beside the goal of one cache write and a read per later call
(1.25 + 0.1 * (calls - 1)).

A third section is the panel scenario (`bench.panel_tokens`): the same diff reviewed by a
panel of five testers, one per focus, in a `ring` (each hears its two neighbours) and in a
`full` panel (each hears everyone), under the same rules: seven findings, two rounds, two of
them contested into round 2. It prints both topologies' billed tokens side by side, with
caching on and off, and the ring's saving next to the ~40% fewer input tokens Li et al.
(2024) report for sparse debate topologies.

A fourth section runs the first scenario again with what its pull request says it does, a
title and a description as an author writes them (`bench.shop_diff.sample_intent`): the
review's billed input per diff token beside the figure without one, the description's share
of it, and what each of its tokens is billed over the review, beside the same goal as the
context's.

A fifth section is what the walkthrough adds to the review (`bench.walkthrough_tokens`), per
diff token, beside the goal of 0.15.

A sixth section is what proving its findings with tests adds to the review
(`bench.proof_tokens`): the tests the tester writes, their runs told in later turns and a
retest turn, per finding and per diff token, beside the review's billed input per diff token
without tests and with them.

    uv run python -m bench.tokens
"""

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import replace

from agents.context.reading import Reading
from agents.debate.engine import Debate
from agents.diff import Diff, ReviewUnit
from agents.models.claude import ClaudeLLM
from agents.models.tokens import typical_tokens
from agents.outcome import Consensus, Resolution, StopReason
from bench import panel_tokens, proof_tokens, walkthrough_tokens
from bench.billing import (
    KEY,
    READ_RATE,
    WRITE_RATE,
    CallCost,
    Figures,
    Run,
    ScenarioBroken,
    call_costs,
    usage_problems,
)
from bench.shop_diff import MODULES, sample_diff, sample_intent, sample_sources, sample_unit
from bench.tokens_script import script
from policies.arbitration import ArbitrationTrigger
from policies.debate import DebatePolicy
from tests.fakes.messages_api import FakeMessagesAPI, ManualClock, QueuedResponder

GOAL = 2.0
"""Billed-equivalent input tokens per diff token we aim for, with caching."""

MAX_ROUNDS = 2
EXPECTED_TOOLS = (
    "report_findings",
    "answer_findings",
    "evaluate_answers",
    "answer_findings",
    "evaluate_answers",
    "arbitrate",
)

# -- running it ---------------------------------------------------------------------------------


WARM_UP = """\
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1,1 +1,2 @@
 # Shop
+Run `make test` before pushing.
"""
"""An earlier, unrelated review whose calls leave the prompt every review shares cached."""


async def run(unit: ReviewUnit, *, cache: bool, warm: bool = False) -> Run:
    """The scenario on a fresh fake API, through ClaudeLLM and the engine.

    With `warm`, another review runs first on the same API, as on a server that reviewed
    something in the last five minutes; its calls are not counted.
    """
    replies = script(unit.diff)
    if warm:
        replies["report_findings"].insert(0, {"findings": []})
    responder = QueuedResponder(**replies)
    # A clock that never moves: no entry expires mid-run, whatever the machine's speed.
    with FakeMessagesAPI(responder, api_key=KEY, clock=ManualClock()) as api:
        # No retries: an unexpected error must fail the run, not be absorbed by the SDK.
        llm = ClaudeLLM.connect(api_key=KEY, base_url=api.base_url, cache=cache, max_retries=0)
        try:
            if warm:
                (earlier,) = Diff.parse(WARM_UP).units()
                await Debate(llm).run(earlier)
            outcome = await Debate(llm, DebatePolicy(max_rounds=MAX_ROUNDS)).run(unit)
        finally:
            await llm.aclose()
    result = Run(cache, outcome, list(api.requests)[1 if warm else 0 :])
    _check(result, responder)
    return result


def _check(result: Run, responder: QueuedResponder) -> None:
    outcome = result.outcome
    fates = [
        (f.finding.id, f.consensus, f.resolution, f.closed_in_round, f.trigger)
        for f in outcome.findings
    ]
    expected = [
        ("F1", Consensus.UNANIMOUS, Resolution.FIXED, 1, None),
        ("F2", Consensus.UNANIMOUS, Resolution.FIXED, 2, None),
        ("F3", Consensus.ARBITER, Resolution.FIXED, 2, ArbitrationTrigger.ROUND_LIMIT),
    ]
    problems = []
    if fates != expected:
        problems.append(f"findings ended {fates}, not {expected}")
    if (outcome.stop, outcome.rounds, outcome.failed_turns) != (StopReason.SETTLED, 2, 0):
        problems.append(
            f"stop {outcome.stop}, {outcome.rounds} rounds, {outcome.failed_turns} failed turns"
        )
    tools = tuple(r.tool for r in result.requests)
    if tools != EXPECTED_TOOLS or outcome.calls != len(EXPECTED_TOOLS):
        problems.append(f"calls {tools} ({outcome.calls} turns), not {EXPECTED_TOOLS}")
    if responder.remaining():
        problems.append(f"replies left unused: {responder.remaining()}")
    problems += usage_problems(result)
    if problems:
        raise ScenarioBroken("; ".join(problems))


# -- printing -----------------------------------------------------------------------------------


def _parts(costs: Sequence[CallCost]) -> dict[str, float]:
    """Billed input by part of the prompt, over all calls."""
    parts = {"tools": 0.0, "system prompt": 0.0, "diff block": 0.0, "turn material": 0.0}
    for cost in costs:
        rate = cost.prefix_rate
        parts["tools"] += cost.tools * rate
        parts["system prompt"] += cost.system * rate
        parts["diff block"] += cost.diff_block * rate
        # The turn follows the breakpoint: always plain input.
        parts["turn material"] += cost.billed - cost.prefix * rate
    return parts


def report(on: Run, off: Run, warm: Run, diff_text: str) -> str:
    diff_tokens = typical_tokens(diff_text)
    a, b = Figures.of(on, diff_tokens), Figures.of(off, diff_tokens)
    w = Figures.of(warm, diff_tokens)
    lines = [
        f"Scenario: {diff_text.count(chr(10))}-line diff over {len(MODULES)} files, one review "
        f"unit, 3 findings, {MAX_ROUNDS} rounds, 1 arbitration",
        "",
        f"{'':34}{'caching on':>14}{'caching off':>14}",
    ]
    rows = [
        ("calls", a.calls, b.calls),
        ("uncached input tokens", a.uncached, b.uncached),
        ("cache writes", a.writes, b.writes),
        ("cache reads", a.reads, b.reads),
        ("output tokens", a.output, b.output),
        ("diff tokens", a.diff_tokens, b.diff_tokens),
    ]
    lines += [f"{label:34}{x:>14,}{y:>14,}" for label, x, y in rows]
    lines.append(f"{'billed-equivalent input tokens':34}{a.billed:>14,.1f}{b.billed:>14,.1f}")
    lines.append(
        f"{'billed input / diff tokens':34}{a.ratio:>14.2f}{b.ratio:>14.2f}"
        f"   goal ≤ {GOAL} (caching on)"
    )
    lines.append(
        f"{'  the same after an earlier review':34}{w.ratio:>14.2f}"
        "                (shared prompt already cached)"
    )

    costs_on, costs_off = call_costs(on), call_costs(off)
    first = costs_on[0]
    lines += [
        "",
        f"Prompt of every call: tools {first.tools:,} + system prompt {first.system:,} + "
        f"diff block {first.diff_block:,} (diff {diff_tokens:,} + wrapper)",
        f"  = a prefix of {first.prefix:,} tokens, the same in every call; then the turn.",
        "",
        "Where the billed input goes (billed-equivalent tokens, and per diff token)",
        f"{'':34}{'caching on':>14}{'caching off':>14}",
    ]
    parts_on, parts_off = _parts(costs_on), _parts(costs_off)
    for part in parts_on:
        x, y = parts_on[part], parts_off[part]
        lines.append(
            f"  {part:32}{x:>7,.0f} ({x / diff_tokens:.2f}){y:>7,.0f} ({y / diff_tokens:.2f})"
        )
    lines.append(
        f"  {'total':32}{a.billed:>7,.0f} ({a.ratio:.2f}){b.billed:>7,.0f} ({b.ratio:.2f})"
    )
    lines += [
        "",
        "Per call, caching on",
        f"  {'#':>2} {'role':8}{'tool':18}{'model':19}{'turn':>6}{'uncached':>10}"
        f"{'writes':>8}{'reads':>8}{'output':>8}{'billed':>9}",
    ]
    turns = on.outcome.transcript.turns
    for i, (turn, cost, request) in enumerate(zip(turns, costs_on, on.requests, strict=True), 1):
        u = cost.usage
        model = request.body["model"]
        lines.append(
            f"  {i:>2} {turn.role:8}{turn.tool:18}{model:19}{cost.turn:>6,}{u.input_tokens:>10,}"
            f"{u.cache_creation_input_tokens:>8,}{u.cache_read_input_tokens:>8,}"
            f"{u.output_tokens:>8,}{cost.billed:>9,.1f}"
        )
    return "\n".join(lines)


def context_report(plain: Run, with_context: Run, diff_text: str) -> str:
    """The scenario again with the code around the changes read (the default budget): what
    the review is billed per diff token, the context's share of it, and what each context
    token was billed over the review against the goal of one cache write and then reads."""
    diff_tokens = typical_tokens(diff_text)
    a, c = Figures.of(plain, diff_tokens), Figures.of(with_context, diff_tokens)
    costs = call_costs(with_context)
    context_tokens = costs[0].context_block
    context_billed = sum(cost.context_block * cost.prefix_rate for cost in costs)
    per_token = context_billed / context_tokens
    goal = WRITE_RATE + READ_RATE * (len(costs) - 1)
    return "\n".join(
        [
            f"With context (caching on): a context block of {context_tokens:,} tokens "
            f"(default budget), after the diff in the cached prefix",
            f"{'':34}{'context off':>14}{'context on':>14}",
            f"{'billed input / diff tokens':34}{a.ratio:>14.2f}{c.ratio:>14.2f}",
            f"{'  context share of billed input':34}{'':>14}{context_billed / c.billed:>14.0%}",
            f"{'billed per context token':34}{'':>14}{per_token:>14.2f}"
            f"   goal ≤ 1.25 + 0.1 * ({len(costs)} calls - 1) = {goal:.2f}",
        ]
    )


def intent_report(plain: Run, with_intent: Run, diff_text: str) -> str:
    """The scenario again with its pull request's title and description: what the review is
    billed per diff token, the description's share of it, and what each of its tokens was
    billed over the review against the goal of one cache write and then reads."""
    diff_tokens = typical_tokens(diff_text)
    a, d = Figures.of(plain, diff_tokens), Figures.of(with_intent, diff_tokens)
    costs = call_costs(with_intent)
    intent_tokens = costs[0].intent_block
    intent_billed = sum(cost.intent_block * cost.prefix_rate for cost in costs)
    goal = WRITE_RATE + READ_RATE * (len(costs) - 1)
    return "\n".join(
        [
            f"With a description (caching on): the pull request's title and description, "
            f"{len(sample_intent()):,} characters, a block of {intent_tokens:,} tokens after the "
            "diff in the cached prefix",
            f"{'':34}{'without':>14}{'with':>14}",
            f"{'billed-equivalent input tokens':34}{a.billed:>14,.1f}{d.billed:>14,.1f}",
            f"{'billed input / diff tokens':34}{a.ratio:>14.2f}{d.ratio:>14.2f}",
            f"{'  description share of billed input':34}{'':>14}{intent_billed / d.billed:>14.1%}",
            f"{'billed per description token':34}{'':>14}{intent_billed / intent_tokens:>14.2f}"
            f"   goal ≤ 1.25 + 0.1 * ({len(costs)} calls - 1) = {goal:.2f}",
        ]
    )


async def measure_intent(unit: ReviewUnit) -> Run:
    """The scenario with its pull request's title and description, caching on."""
    return await run(replace(unit, intent=sample_intent()), cache=True)


async def measure() -> tuple[Run, Run, Run, Run, str]:
    """The scenario with caching on, off, on after an earlier review, and on with the code
    around the changes, each on a fresh fake API."""
    diff_text = sample_diff()
    unit = sample_unit(diff_text)
    on = await run(unit, cache=True)
    off = await run(unit, cache=False)
    warm = await run(unit, cache=True, warm=True)
    (read,) = Reading(sample_sources()).attach([unit])
    with_context = await run(read, cache=True)
    return on, off, warm, with_context, diff_text


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    on, off, warm, with_context, diff_text = asyncio.run(measure())
    print(report(on, off, warm, diff_text))
    print()
    print(context_report(on, with_context, diff_text))
    print()
    with_intent = asyncio.run(measure_intent(sample_unit(diff_text)))
    print(intent_report(on, with_intent, diff_text))
    print()
    print(panel_tokens.report(asyncio.run(panel_tokens.measure())))
    print()
    unit = sample_unit(diff_text)
    print(walkthrough_tokens.report(asyncio.run(walkthrough_tokens.measure(unit, diff_text))))
    print()
    print(proof_tokens.report(asyncio.run(proof_tokens.measure(unit, diff_text))))


if __name__ == "__main__":
    main()
