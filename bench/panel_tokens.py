"""The panel scenario of the token benchmark: five testers heard in a ring or by everyone.

Sparse communication is a panel's cost argument: Li et al. (2024, "Improving Multi-Agent
Debate with Sparse Communication Topology") report roughly 40% fewer input tokens for sparse
topologies than for a fully connected debate. This scenario bills a `ring` of five testers
against a `full` panel of five, on the diff, the client and the fake API of `bench.tokens`,
with caching on and off, each run on a fresh fake API, and prints what it measures next to
that anchor.

Both topologies run the same rules. The fake answers every call from the request alone: it
tells the testers apart by the focus their role brief names, and each tester votes on the
answer it is shown by its own judgement, never by what it hears, so the same findings end
the same way in both:

* correctness raises F1 (a draft cart's missing amount breaks a sum, major) and F2 (an
  amount rendered unquantized, minor); security F3 (a refund from any state, major);
  performance F4 (a lock on a popular coupon's row, minor); concurrency F5 (a reservation
  released twice, major); error handling F6 (`len()` of a generator after the sum, major)
  and F7 (a status set before a flush that may fail, minor);
* round 1: the coder concedes F1 and F6 with patches, which every tester accepts, and
  disputes the rest. All accept its answer to F2, the raiser too: withdrawn. The raisers
  keep F4 and F7 and the others accept: withdrawn by majority. Security, its ring
  neighbour correctness and concurrency keep F3; concurrency, its ring neighbour error
  handling and correctness keep F5: both stand, 2 to 1 in the ring, 3 to 2 on the full panel;
* round 2: every tester has heard of F3 and F5, in the ring through a neighbour that voted
  on them (shown to it as `testers_you_hear`). The coder concedes F3 with a patch, which all
  five accept; it disputes F5 again and the same three keep it, so at the round limit (2)
  F5 stands by majority, open, without the arbiter.

The benchmark checks that both debates ran so — every finding's end, the voters on it (in a
ring, a finding closed in round 1 has the votes of its raiser and the raiser's two
neighbours; on the full panel, all five), 17 calls each, no failed turn, the engine's usage
equal to the API's — before it prints anything. Billed input is counted as in
`bench.tokens`.
"""

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.claude import ClaudeLLM
from agents.diff import Diff, ReviewUnit
from agents.engine import Debate
from agents.llm import Role
from agents.outcome import Consensus, Resolution, StopReason
from agents.prompts import FOCUS
from agents.protocol import ToolName
from agents.tokens import typical_tokens
from bench.tokens import (
    KEY,
    MODULES,
    Figures,
    Run,
    ScenarioBroken,
    call_costs,
    line_of,
    sample_diff,
    sample_unit,
    span,
    usage_problems,
)
from policies.arbitration import ArbitrationTrigger
from policies.debate import DebatePolicy
from policies.panel import Focus, Panel, Topology
from tests.fakes.messages_api import (
    Body,
    FakeMessagesAPI,
    ManualClock,
    Unscripted,
    forced_tool,
)

TESTERS = 5
ROUNDS = 2

ANCHOR = 0.40
"""The input tokens a sparse topology saves against a fully connected debate, roughly, in
Li et al. 2024."""

# -- the courses of the findings ----------------------------------------------------------------


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


# -- the fake's answers -------------------------------------------------------------------------

_DATA = re.compile(r"<untrusted-(\w+)-([0-9a-f]{16})>\n(.*?)\n</untrusted-\1-\2>", re.DOTALL)


class PanelResponder:
    """Answers every call of the scenario from the request body alone, by the courses' rules,
    so that a ring and a full panel are answered alike: a tester reports its focus's findings
    and votes on each answer it is shown as the course says; the coder gives each open
    finding its next answer."""

    def __init__(self, plan: Sequence[Course]) -> None:
        self.plan = tuple(plan)
        self.by_claim = {course.claim: course for course in plan}

    def __call__(self, body: Body) -> dict[str, Any]:
        tool = forced_tool(body)
        text = _user_text(body)
        if tool == ToolName.REPORT_FINDINGS:
            focus = _focus(text)
            return {"findings": [c.finding for c in self.plan if c.raiser is focus]}
        if tool == ToolName.ANSWER_FINDINGS:
            shown = _data(text, "findings")["open_findings"]
            return {"answers": [self._answer(entry) for entry in shown]}
        if tool == ToolName.EVALUATE_ANSWERS:
            focus = _focus(text)
            return {"evaluations": [self._vote(entry, focus) for entry in _data(text, "answers")]}
        raise Unscripted(f"the scenario makes no {tool} call")

    def _answer(self, entry: dict[str, Any]) -> dict[str, Any]:
        course = self._course(entry["finding"])
        last = entry.get("your_last_answer")
        index = 0 if last is None else self._exchange(course, last["argument"]) + 1
        if index >= len(course.exchanges):
            raise Unscripted(f"{entry['finding']['id']} has no answer for exchange {index + 1}")
        exchange = course.exchanges[index]
        answer: dict[str, Any] = {
            "finding_id": entry["finding"]["id"],
            "stance": "dispute" if exchange.patch is None else "concede",
            "argument": exchange.argument,
        }
        if exchange.patch is not None:
            answer["patch"] = exchange.patch
        return answer

    def _vote(self, entry: dict[str, Any], focus: Focus) -> dict[str, Any]:
        course = self._course(entry["finding"])
        exchange = course.exchanges[self._exchange(course, entry["coder_answer"]["argument"])]
        reason = exchange.kept.get(focus)
        return {
            "finding_id": entry["finding"]["id"],
            "decision": "accept" if reason is None else "reject",
            "reason": exchange.accepted if reason is None else reason,
        }

    def _course(self, finding: dict[str, Any]) -> Course:
        course = self.by_claim.get(finding["claim"])
        if course is None:
            raise Unscripted(f"no course raises {finding['claim']!r}")
        return course

    @staticmethod
    def _exchange(course: Course, argument: str) -> int:
        for i, exchange in enumerate(course.exchanges):
            if exchange.argument == argument:
                return i
        raise Unscripted(f"the coder never answers {course.claim!r} with {argument!r}")


def _user_text(body: Body) -> str:
    """The text of the request's user message: the role brief and the turn."""
    return "\n".join(
        block["text"]
        for message in body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    )


def _focus(text: str) -> Focus:
    """The focus the request's role brief gives its tester."""
    named = [f for f, says in FOCUS.items() if f"Your focus is {says}." in text]
    if len(named) != 1:
        raise Unscripted(f"the request names {len(named)} focuses")
    return named[0]


def _data(text: str, kind: str) -> Any:
    """The JSON of the request's one `<untrusted-{kind}-…>` block."""
    blocks = [m.group(3) for m in _DATA.finditer(text) if m.group(1) == kind]
    if len(blocks) != 1:
        raise Unscripted(f"the request has {len(blocks)} {kind} blocks")
    return json.loads(blocks[0])


# -- running it ---------------------------------------------------------------------------------


def policy(topology: Topology) -> DebatePolicy:
    return DebatePolicy(testers=TESTERS, topology=topology, max_rounds=ROUNDS)


async def run(unit: ReviewUnit, topology: Topology, *, cache: bool, plan: Sequence[Course]) -> Run:
    """The panel scenario in one topology on a fresh fake API, through ClaudeLLM and the
    engine; checked, so a run that strays from `plan` raises :class:`ScenarioBroken`."""
    chosen = policy(topology)
    with FakeMessagesAPI(PanelResponder(plan), api_key=KEY, clock=ManualClock()) as api:
        llm = ClaudeLLM.connect(api_key=KEY, base_url=api.base_url, cache=cache, max_retries=0)
        try:
            outcome = await Debate(llm, chosen).run(unit)
        finally:
            await llm.aclose()
    result = Run(cache, outcome, list(api.requests))
    check(result, chosen.panel(), plan)
    return result


def _seat(panel: Panel, focus: Focus) -> str:
    return next(seat.name for seat in panel.seats if seat.focus is focus)


def check(result: Run, panel: Panel, plan: Sequence[Course]) -> None:
    """Raise :class:`ScenarioBroken` unless the debate ran as `plan` says: every finding ended
    as its course does, voted on by the testers who heard of it, in the expected calls."""
    outcome = result.outcome
    problems = []
    ended = {f.finding.id: f for f in outcome.findings}
    for n, course in enumerate(plan, 1):
        got = ended.pop(f"F{n}", None)
        if got is None or got.finding.claim != course.claim:
            problems.append(f"F{n} is not the {course.raiser} finding {course.claim[:40]!r}…")
            continue
        end = End(got.consensus, got.resolution, got.closed_in_round, got.trigger)
        if end != course.end:
            problems.append(f"F{n} ended {end}, not {course.end}")
        raiser = _seat(panel, course.raiser)
        heard = {raiser, *panel.neighbours(raiser)} if course.end.round == 1 else set(panel.names)
        if set(got.votes) != heard:
            problems.append(f"F{n} was voted on by {sorted(got.votes)}, not {sorted(heard)}")
    if ended:
        problems.append(f"findings no course raised: {sorted(ended)}")
    if (outcome.stop, outcome.rounds, outcome.failed_turns) != (StopReason.SETTLED, ROUNDS, 0):
        problems.append(
            f"stop {outcome.stop}, {outcome.rounds} rounds, {outcome.failed_turns} failed turns"
        )
    evaluations = tuple((ToolName.EVALUATE_ANSWERS, t) for t in panel.names)
    expected = (
        *((ToolName.REPORT_FINDINGS, t) for t in panel.names),
        *((ToolName.ANSWER_FINDINGS, str(Role.CODER)), *evaluations) * ROUNDS,
    )
    calls = tuple((t.tool, t.agent) for t in outcome.transcript.turns)
    tools = tuple(r.tool for r in result.requests)
    if calls != expected or tools != tuple(tool for tool, _ in expected):
        problems.append(f"calls {calls}, requests {tools}, not {expected}")
    problems += usage_problems(result)
    if problems:
        raise ScenarioBroken("; ".join(problems))
    call_costs(result)


@dataclass(frozen=True)
class Pair:
    """The scenario in both topologies, with the same caching."""

    ring: Run
    full: Run


@dataclass(frozen=True)
class PanelRuns:
    """Every run of the panel scenario."""

    plan: tuple[Course, ...]
    on: Pair
    off: Pair
    diff_tokens: int


async def measure() -> PanelRuns:
    """The panel scenario in a ring and on a full panel, with caching on and off."""
    diff_text = sample_diff()
    unit = sample_unit(diff_text)
    plan = courses(unit.diff)
    pairs = [
        Pair(
            ring=await run(unit, Topology.RING, cache=cache, plan=plan),
            full=await run(unit, Topology.FULL, cache=cache, plan=plan),
        )
        for cache in (True, False)
    ]
    return PanelRuns(plan, pairs[0], pairs[1], typical_tokens(diff_text))


# -- the figures --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PanelFigures:
    """What one run billed, in total and by the calls the topology shapes."""

    totals: Figures
    evaluations: float
    """Billed input of the testers' evaluations."""
    answers: float
    """Billed input of the coder's answers."""
    turn: int
    """Prompt tokens after the shared prefix (tools, system prompt, diff), over all calls."""
    shown: int
    """Answers the testers' evaluations showed them."""
    heard: int
    """Votes of other testers the evaluations showed (`testers_you_hear`)."""

    @classmethod
    def of(cls, result: Run, diff_tokens: int) -> "PanelFigures":
        costs = call_costs(result)
        by_tool: dict[str | None, float] = {}
        shown = heard = 0
        for request, cost in zip(result.requests, costs, strict=True):
            by_tool[request.tool] = by_tool.get(request.tool, 0.0) + cost.billed
            if request.tool == ToolName.EVALUATE_ANSWERS:
                entries = _data(_user_text(request.body), "answers")
                shown += len(entries)
                heard += sum(len(e.get("testers_you_hear", [])) for e in entries)
        return cls(
            totals=Figures.of(result, diff_tokens),
            evaluations=by_tool.get(ToolName.EVALUATE_ANSWERS, 0.0),
            answers=by_tool.get(ToolName.ANSWER_FINDINGS, 0.0),
            turn=sum(cost.turn for cost in costs),
            shown=shown,
            heard=heard,
        )


def reduction(ring: float, full: float) -> float:
    """How much less the ring bills than the full panel: 1 - ring/full."""
    return 1 - ring / full


def _row(label: str, values: Sequence[float], fmt: str) -> str:
    """One figure of the four runs: ring, full and their ratio, caching on, then off."""
    ring_on, full_on, ring_off, full_off = values
    cells = "".join(
        f"{ring:>10{fmt}}{full:>10{fmt}}" + (f"{ring / full:>13.2f}" if full else f"{'-':>13}")
        for ring, full in ((ring_on, full_on), (ring_off, full_off))
    )
    return f"{label:40}{cells}"


def report(runs: PanelRuns) -> str:
    """The panel section of the benchmark's report."""
    on = [PanelFigures.of(r, runs.diff_tokens) for r in (runs.on.ring, runs.on.full)]
    off = [PanelFigures.of(r, runs.diff_tokens) for r in (runs.off.ring, runs.off.full)]
    panel = policy(Topology.RING).panel()
    focus = ", ".join(str(panel.focus(name)) for name in panel.names)
    lines = [
        f"Panel scenario: {TESTERS} testers ({focus}), {len(runs.plan)} findings, "
        f"{runs.on.ring.outcome.rounds} rounds",
        "  in a ring and on a full panel: the same diff and rules, each run on a fresh fake API",
    ]
    for result in runs.on.ring.outcome.findings:
        how = f"{result.consensus}, {result.resolution}, round {result.closed_in_round}"
        trigger = f" ({result.trigger})" if result.trigger else ""
        lines.append(
            f"  {result.finding.id:4}{result.raised_by:24}{result.finding.severity:7}{how}{trigger}"
        )
    pair = f"{'ring':>10}{'full':>10}{'ring / full':>13}"
    lines += [
        "  Every finding ends so in both topologies (checked). A finding closed in round 1 has",
        "  the votes of its raiser and the raiser's two neighbours in the ring, of all five on",
        "  the full panel.",
        "",
        f"{'':40}{'caching on':^33}{'caching off':^33}".rstrip(),
        f"{'':40}{pair}{pair}",
    ]

    figures = [*on, *off]
    lines += [
        _row("calls", [f.totals.calls for f in figures], ",d"),
        _row("answers shown to testers", [f.shown for f in figures], ",d"),
        _row("other testers' votes shown", [f.heard for f in figures], ",d"),
        _row("turn tokens (after the shared prefix)", [f.turn for f in figures], ",d"),
        _row("uncached input tokens", [f.totals.uncached for f in figures], ",d"),
        _row("cache writes", [f.totals.writes for f in figures], ",d"),
        _row("cache reads", [f.totals.reads for f in figures], ",d"),
        _row("output tokens", [f.totals.output for f in figures], ",d"),
        _row("billed-equivalent input tokens", [f.totals.billed for f in figures], ",.1f"),
        _row("billed input of tester evaluations", [f.evaluations for f in figures], ",.1f"),
        _row("billed input of coder answers", [f.answers for f in figures], ",.1f"),
    ]
    total_on = reduction(on[0].totals.billed, on[1].totals.billed)
    total_off = reduction(off[0].totals.billed, off[1].totals.billed)
    evals_on = reduction(on[0].evaluations, on[1].evaluations)
    evals_off = reduction(off[0].evaluations, off[1].evaluations)
    turns = reduction(on[0].turn, on[1].turn)
    prefix = call_costs(runs.on.ring)[0].prefix
    lines += [
        "",
        f"Anchor: sparse topologies use ~{ANCHOR:.0%} fewer input tokens than a fully connected "
        "debate (Li et al. 2024).",
        f"Measured 1 - ring/full: billed input {total_on:.1%} (caching on), {total_off:.1%} "
        f"(off); tester evaluations alone {evals_on:.1%} (on), {evals_off:.1%} (off).",
        f"  Every call carries the same {prefix:,}-token prefix (tools, system prompt, diff) in",
        f"  both topologies; only the turn after it differs, by {turns:.1%} over all calls.",
    ]
    return "\n".join(lines)
