"""The panel scenario of the token benchmark: five testers heard in a ring or by everyone.

Sparse communication is a panel's cost argument: Li et al. (2024, "Improving Multi-Agent
Debate with Sparse Communication Topology") report roughly 40% fewer input tokens for sparse
topologies than for a fully connected debate. This scenario bills a `ring` of five testers
against a `full` panel of five, on the diff (`bench.shop_diff`), the client and the fake API
of `bench.tokens`, with caching on and off, each run on a fresh fake API, and prints what it
measures next to that anchor.

Both topologies run the same rules. The fake answers every call from the request alone
(`bench.panel_responder`): it tells the testers apart by the focus their role brief names,
and each tester votes on the answer it is shown by its own judgement, never by what it
hears, so the same findings end the same way in both (their courses: `bench.panel_courses`):

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
`bench.tokens`, by `bench.billing`.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from agents.debate.engine import Debate
from agents.diff import ReviewUnit
from agents.models.claude import ClaudeLLM
from agents.models.llm import Role
from agents.models.tokens import typical_tokens
from agents.outcome import StopReason
from agents.protocol import ToolName
from bench.billing import KEY, Figures, Run, ScenarioBroken, call_costs, usage_problems
from bench.panel_courses import Course, End, courses
from bench.panel_responder import PanelResponder, data, user_text
from bench.shop_diff import sample_diff, sample_unit
from policies.debate import DebatePolicy
from policies.panel import Focus, Panel, Topology
from tests.fakes.messages_api import FakeMessagesAPI, ManualClock

TESTERS = 5
ROUNDS = 2

ANCHOR = 0.40
"""The input tokens a sparse topology saves against a fully connected debate, roughly, in
Li et al. 2024."""

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
                entries = data(user_text(request.body), "answers")
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
