"""What the transcript page shows of a run, computed from its record.

Everything here is plain data for the template: numbers formatted, patches turned into
unified diffs against the lines they replace, each budget history into the points of a small
chart. The template escapes every string it prints; nothing here builds HTML.
"""

import difflib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from agents.diff import Diff
from agents.models.llm import Role, Usage
from agents.outcome import FindingOutcome, Message, MessageKind, Outcome, Turn
from agents.patches import current_lines
from agents.protocol import Patch, Severity
from app.publishing import follow_text, proof_text
from app.publishing.finding_text import STANDS, TRIGGER, location, stands
from app.publishing.publication import FollowedThread
from app.store.transcripts import TranscriptRecord
from policies.budget import BudgetEvent
from policies.panel import Tally

CHART_WIDTH = 320
CHART_HEIGHT = 90
CHART_PAD = 6


@dataclass(frozen=True)
class ThreadItem:
    round: int
    speaker: str
    kind: str
    text: str
    patch: str | None = None
    """The message's patch as a unified diff."""
    person: bool = False
    """A person's reply on the pull request, not an agent's message."""


@dataclass(frozen=True)
class ProofView:
    """What a finding's test showed, for the page."""

    verdict: str
    """`reproduced`, `fails at base`, …, with the fix's check when one ran."""
    test: str
    reason: str
    content: str
    output: str
    """The end of what the test printed at the head."""


@dataclass(frozen=True)
class FollowedView:
    """An earlier proven finding whose test the run ran again at its head, for the page."""

    location: str
    claim: str
    test: str
    shown: str
    """What the run at the head showed: still fails, passes, not run."""
    reason: str
    output: str
    """The end of what the test printed at the head."""
    ended: bool
    """A person had ended the finding: the run decided nothing."""


@dataclass(frozen=True)
class FindingView:
    id: str
    severity: str
    location: str
    claim: str
    evidence: str
    raised_by: str
    consensus: str
    resolution: str
    ended: str
    """How it ended, as the page says it: its resolution, or `stands` for a finding a panel's
    majority keeps against the coder."""
    published: bool
    """Whether the config's `min_severity` let the finding onto the pull request."""
    trigger: str | None
    """Why the debate on it ended without agreement, in words: why it went to the arbiter, or
    (for a finding that stands) why its debate stopped."""
    warning: str | None
    note: str | None
    note_label: str
    """What the note explains: why it is unresolved, or why it stands."""
    exchanges: int
    tokens: int
    thread: list[ThreadItem]
    kept_by: list[str] = field(default_factory=list)
    """The panel's testers whose latest vote keeps the finding against the coder's answer."""
    accepted_by: list[str] = field(default_factory=list)
    """The panel's testers whose latest vote accepts the coder's answer."""
    proof: ProofView | None = None
    """What its test showed, when it had one run."""


@dataclass(frozen=True)
class BudgetChart:
    edge: str
    limit_points: str
    spent_points: str
    peak: int
    summary: str
    events: list[BudgetEvent]


@dataclass(frozen=True)
class TurnView:
    round: int
    agent: str
    tool: str
    attempt: int
    usage: Usage
    seconds: str
    error: str | None


@dataclass(frozen=True)
class UnitView:
    id: str
    stop: str
    rounds: int
    calls: int
    error: str | None
    findings: list[FindingView]
    notices: list[ThreadItem]
    budgets: list[BudgetChart]
    turns: list[TurnView]
    testers: list[str] = field(default_factory=list)
    """The testers that took part in the debate, in the order they first spoke."""
    unused_edges: list[str] = field(default_factory=list)
    """Edges whose budget was never spent on: no chart, one line."""
    learned: tuple[str, ...] = ()
    """The repository's learnings its agents read, as they read them (model text: escaped)."""


@dataclass(frozen=True)
class RunView:
    run_id: str
    repository: str
    number: int
    title: str
    html_url: str
    head_sha: str
    conclusion: str
    started: str
    duration: str
    calls: int
    rounds: int
    usage: Usage
    usage_by_role: dict[str, Usage]
    spent: int
    ceiling: int
    units: list[UnitView] = field(default_factory=list)
    followed: list[FollowedView] = field(default_factory=list)
    notice: str = ""
    """What the page says first of the run, above all else (`tiebreak demo`'s label); empty
    for a pull request's review."""


def run_view(record: TranscriptRecord) -> RunView:
    review = record.review
    diff = Diff.parse(record.diff, allow_empty=True)
    by_role: dict[str, Usage] = {}
    for unit in review.units:
        for role, usage in unit.usage_by_role.items():
            by_role[str(role)] = by_role.get(str(role), Usage()) + usage
    return RunView(
        run_id=record.run_id,
        repository=record.ref.full_name,
        number=record.ref.number,
        title=record.title,
        html_url=record.html_url,
        head_sha=record.ref.head_sha,
        conclusion=record.conclusion,
        started=datetime.fromtimestamp(record.started_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        duration=_seconds(record.finished_at - record.started_at),
        calls=review.calls,
        rounds=review.rounds,
        usage=review.usage,
        usage_by_role={str(r): by_role[str(r)] for r in Role if str(r) in by_role},
        spent=record.spent,
        ceiling=record.ceiling,
        units=[
            replace(
                _unit(unit, diff, Severity(record.min_severity)),
                learned=record.learned.get(unit.unit_id, ()),
            )
            for unit in review.units
        ],
        followed=[_followed(f) for f in record.followed],
    )


def _followed(followed: FollowedThread) -> FollowedView:
    follow = followed.follow
    finding = follow.result.finding
    return FollowedView(
        location=location(finding.path, finding.start_line, finding.end_line),
        claim=finding.claim,
        test=follow.test,
        shown=follow_text.WORDS[follow.retest],
        reason=follow.reason,
        output=follow.output,
        ended=followed.ended,
    )


def _unit(unit: Outcome, diff: Diff, min_severity: Severity) -> UnitView:
    return UnitView(
        id=unit.unit_id,
        stop=str(unit.stop),
        rounds=unit.rounds,
        calls=unit.calls,
        error=unit.error,
        findings=[
            _finding(f, unit.transcript.thread(f.finding.id), diff, min_severity)
            for f in unit.findings
        ],
        notices=[_item(m, diff) for m in unit.transcript.messages if m.finding_id is None],
        budgets=[
            _chart(edge, events) for edge, events in unit.budget_history.items() if _used(events)
        ],
        unused_edges=[edge for edge, events in unit.budget_history.items() if not _used(events)],
        turns=[_turn(t) for t in unit.transcript.turns],
        testers=list(
            dict.fromkeys(t.agent for t in unit.transcript.turns if t.role is Role.TESTER)
        ),
    )


def _finding(
    result: FindingOutcome, thread: list[Message], diff: Diff, min_severity: Severity
) -> FindingView:
    finding, tally = result.finding, Tally.of(result.votes)
    standing = stands(result)
    trigger = None
    if result.trigger is not None:
        why = TRIGGER[result.trigger]
        trigger = f"its debate ended: {why}" if standing else f"sent to the arbiter: {why}"
    lines = (
        f"{finding.start_line}"
        if finding.start_line == finding.end_line
        else f"{finding.start_line}-{finding.end_line}"
    )
    return FindingView(
        id=finding.id,
        severity=str(finding.severity),
        location=f"{finding.path}:{lines}",
        claim=finding.claim,
        evidence=finding.evidence,
        raised_by=result.raised_by,
        consensus=str(result.consensus),
        resolution=str(result.resolution),
        ended=STANDS if standing else str(result.resolution),
        published=finding.severity.rank <= min_severity.rank,
        trigger=trigger,
        warning=result.warning,
        note=result.note,
        note_label="Stands" if standing else "Unresolved",
        exchanges=result.exchanges,
        tokens=result.tokens,
        # The claim heads the finding; the message that raised it would only repeat it.
        thread=[_item(m, diff) for m in thread if not _raising(m, finding.claim)],
        kept_by=list(tally.keep),
        accepted_by=list(tally.accept),
        proof=_proof(result),
    )


def _proof(result: FindingOutcome) -> ProofView | None:
    tested = result.verification
    if tested is None:
        return None
    reproduction = result.finding.reproduction
    shown = reproduction is not None and reproduction.path == tested.test
    return ProofView(
        verdict=proof_text.verdict(result),
        test=tested.test,
        reason=tested.reason,
        content=reproduction.content if shown and reproduction else "",
        output=tested.output_tail,
    )


def _raising(message: Message, claim: str) -> bool:
    return message.kind is MessageKind.FINDING and message.text == claim


def _item(message: Message, diff: Diff) -> ThreadItem:
    return ThreadItem(
        round=message.round,
        speaker=message.speaker,
        kind=str(message.kind),
        text=message.text,
        patch=patch_diff(message.patch, diff) if message.patch else None,
        person=message.kind is MessageKind.PERSON,
    )


def patch_diff(patch: Patch, diff: Diff) -> str:
    """The patch as a unified diff of the lines it replaces (as the pull request's head has
    them) against its replacement."""
    before = current_lines(diff, patch)
    after = patch.replacement.removesuffix("\n").split("\n") if patch.replacement else []
    body = list(difflib.unified_diff(before, after, lineterm="", n=len(before) + len(after)))
    header = f"--- {patch.path}\n+++ {patch.path}\n"
    hunk = f"@@ -{patch.start_line},{len(before)} +{patch.start_line},{len(after)} @@\n"
    return header + hunk + "\n".join(line for line in body[3:])


def _used(events: list[BudgetEvent]) -> bool:
    """Whether an edge saw anything after it opened (an arbiter never called did not)."""
    return len(events) > 1 or any(e.spent for e in events)


def _chart(edge: str, events: list[BudgetEvent]) -> BudgetChart:
    peak = max(max(e.limit, e.spent) for e in events) or 1
    last = events[-1]
    dropped = next((e for e in events if str(e.kind) == "drop"), None)
    summary = (
        f"limit {events[0].limit:,} → {last.limit:,}, spent {last.spent:,}"
        + (f", dropped in round {dropped.round}" if dropped else "")
        + f" ({len(events)} event{'s' if len(events) != 1 else ''})"
    )
    return BudgetChart(
        edge=edge,
        limit_points=_points([e.limit for e in events], peak),
        spent_points=_points([e.spent for e in events], peak),
        peak=peak,
        summary=summary,
        events=events,
    )


def _points(values: list[int], peak: int) -> str:
    """SVG polyline points of `values` scaled into the chart (one value: a level line)."""
    width, height, pad = CHART_WIDTH, CHART_HEIGHT, CHART_PAD
    values = values * 2 if len(values) == 1 else values
    step = (width - 2 * pad) / max(len(values) - 1, 1)
    return " ".join(
        f"{pad + i * step:.1f},{height - pad - v / peak * (height - 2 * pad):.1f}"
        for i, v in enumerate(values)
    )


def _turn(turn: Turn) -> TurnView:
    return TurnView(
        round=turn.round,
        agent=turn.agent,
        tool=str(turn.tool),
        attempt=turn.attempt,
        usage=turn.usage,
        seconds=f"{turn.seconds:.1f} s" if turn.seconds else "—",
        error=turn.error,
    )


def _seconds(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s"
