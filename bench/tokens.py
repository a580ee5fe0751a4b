"""What one review costs in input tokens, with prompt caching on and off, per token of diff.

A fixed scenario runs through the real :class:`agents.claude.ClaudeLLM` and the real debate
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

A second section is the panel scenario (`bench.panel_tokens`): the same diff reviewed by a
panel of five testers, one per focus, in a `ring` (each hears its two neighbours) and in a
`full` panel (each hears everyone), under the same rules: seven findings, two rounds, two of
them contested into round 2. It prints both topologies' billed tokens side by side, with
caching on and off, and the ring's saving next to the ~40% fewer input tokens Li et al.
(2024) report for sparse debate topologies.

    uv run python -m bench.tokens
"""

import argparse
import asyncio
import difflib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agents.claude import ClaudeLLM
from agents.diff import Diff, ReviewUnit
from agents.engine import Debate
from agents.llm import Usage as LLMUsage
from agents.outcome import Consensus, Outcome, Resolution, StopReason
from agents.tokens import typical_tokens
from policies.arbitration import ArbitrationTrigger
from policies.debate import DebatePolicy
from tests.fakes.messages_api import (
    FakeMessagesAPI,
    ManualClock,
    QueuedResponder,
    Recorded,
    Step,
    Usage,
    prompt_units,
)

WRITE_RATE = 1.25
"""A 5-minute cache write costs 1.25 times base input."""

READ_RATE = 0.1
"""A cache read costs 0.1 times base input."""

GOAL = 2.0
"""Billed-equivalent input tokens per diff token we aim for, with caching."""

KEY = "sk-bench-tokens"
MAX_ROUNDS = 2
EXPECTED_TOOLS = (
    "report_findings",
    "answer_findings",
    "evaluate_answers",
    "answer_findings",
    "evaluate_answers",
    "arbitrate",
)

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


# -- the conversation ---------------------------------------------------------------------------


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


# -- running it ---------------------------------------------------------------------------------


class ScenarioBroken(AssertionError):
    """The debate did not run as scripted, so the figures would not mean what they say."""


@dataclass(frozen=True)
class Run:
    """One run of the scenario: the debate's outcome and every request the API saw."""

    cache: bool
    outcome: Outcome
    requests: list[Recorded]

    @property
    def usages(self) -> list[Usage]:
        return [r.usage for r in self.requests if r.usage is not None]


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


def usage_problems(result: Run) -> list[str]:
    """What is wrong with the run's accounts: the usage the engine counted must be the usage
    the API reported, call for call summed."""
    reported = sum(
        (
            LLMUsage(
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                cache_creation_input_tokens=u.cache_creation_input_tokens,
                cache_read_input_tokens=u.cache_read_input_tokens,
            )
            for u in result.usages
        ),
        LLMUsage(),
    )
    if result.outcome.usage != reported:
        return [f"the engine counted {result.outcome.usage}, the API reported {reported}"]
    return []


# -- the figures --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Figures:
    calls: int
    uncached: int
    writes: int
    reads: int
    output: int
    diff_tokens: int

    @classmethod
    def of(cls, result: Run, diff_tokens: int) -> "Figures":
        usages = result.usages
        return cls(
            calls=len(usages),
            uncached=sum(u.input_tokens for u in usages),
            writes=sum(u.cache_creation_input_tokens for u in usages),
            reads=sum(u.cache_read_input_tokens for u in usages),
            output=sum(u.output_tokens for u in usages),
            diff_tokens=diff_tokens,
        )

    @property
    def billed(self) -> float:
        return billed(self.uncached, self.writes, self.reads)

    @property
    def ratio(self) -> float:
        return self.billed / self.diff_tokens


def billed(uncached: float, writes: float, reads: float) -> float:
    """Billed-equivalent input tokens: what the input costs, in base input tokens."""
    return uncached + WRITE_RATE * writes + READ_RATE * reads


@dataclass(frozen=True, slots=True)
class CallCost:
    """One call's prompt by part, and what its input was billed."""

    tools: int
    system: int
    diff_block: int
    turn: int
    usage: Usage

    @property
    def prefix(self) -> int:
        return self.tools + self.system + self.diff_block

    @property
    def prefix_rate(self) -> float:
        """What one prefix token cost this call, in base input tokens."""
        u = self.usage
        plain = self.prefix - u.cache_read_input_tokens - u.cache_creation_input_tokens
        return billed(plain, u.cache_creation_input_tokens, u.cache_read_input_tokens) / self.prefix

    @property
    def billed(self) -> float:
        u = self.usage
        return billed(u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens)


def call_costs(result: Run) -> list[CallCost]:
    """Each call's prompt split into tools, system prompt, diff block and turn material.

    ClaudeLLM sends the shared system prompt and the diff block as the two system blocks (the
    breakpoint after the diff), and the turn as the user message.
    """
    costs = []
    for request in result.requests:
        if request.usage is None:
            raise ScenarioBroken(f"a call failed with HTTP {request.status}")
        units = prompt_units(request.body)
        by_label = {u.label: u.tokens for u in units}
        cost = CallCost(
            tools=sum(u.tokens for u in units if u.section == "tools"),
            system=by_label["system[0]"],
            diff_block=by_label["system[1]"],
            turn=sum(u.tokens for u in units if u.section == "messages"),
            usage=request.usage,
        )
        u = cost.usage
        counted = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
        if counted != cost.prefix + cost.turn:
            raise ScenarioBroken(f"{counted} input tokens reported, {cost.prefix + cost.turn} sent")
        costs.append(cost)
    if len({(c.tools, c.system, c.diff_block) for c in costs}) != 1:
        raise ScenarioBroken("the calls do not share one prompt prefix")
    return costs


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


# -- printing -----------------------------------------------------------------------------------


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


async def measure() -> tuple[Run, Run, Run, str]:
    """The scenario with caching on, off, and on after an earlier review, each on a fresh
    fake API."""
    diff_text = sample_diff()
    unit = sample_unit(diff_text)
    on = await run(unit, cache=True)
    off = await run(unit, cache=False)
    warm = await run(unit, cache=True, warm=True)
    return on, off, warm, diff_text


def sample_unit(diff_text: str) -> ReviewUnit:
    """The scenario's diff as the one review unit it is reviewed as."""
    # The whole diff in one unit: a limit well above its size, whatever the rounding per file.
    units = Diff.parse(diff_text).units(max_tokens=2 * typical_tokens(diff_text))
    if len(units) != 1:
        raise ScenarioBroken(f"the diff split into {len(units)} units")
    return units[0]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    # The panel scenario builds on this module, so it is imported once this one is loaded.
    from bench import panel_tokens

    on, off, warm, diff_text = asyncio.run(measure())
    print(report(on, off, warm, diff_text))
    print()
    print(panel_tokens.report(asyncio.run(panel_tokens.measure())))


if __name__ == "__main__":
    main()
