"""One finding in Markdown: how it ended, who settled it, and the debate its comment tells.

A single tester's finding reads as a debate between the tester and the coder. A panel's
finding adds the panel's vote — who raised it, who keeps it against the coder's answer and
who accepts the answer — and each keeping tester's own latest reason, by name. Model text
goes through :mod:`app.publishing.markdown`; so do tester names, which a review loaded from a
transcript carries as data.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

from agents.outcome import Consensus, FindingOutcome, Message, MessageKind, Resolution
from agents.protocol import Severity
from app.bodies import LIMIT
from app.publishing.intent_text import evidence
from app.publishing.markdown import (
    PROSE_LIMIT,
    clip,
    code,
    code_block,
    inline,
    prose,
    replacement_lines,
    suggestion,
)
from app.publishing.proof_text import OUTPUT_LINES, TEST_CHARS, fix_check, proof
from policies.arbitration import ArbitrationTrigger
from policies.panel import Tally

SEVERITY = {
    Severity.BLOCKER: "🔴 Blocker",
    Severity.MAJOR: "🟠 Major",
    Severity.MINOR: "🟡 Minor",
    Severity.NIT: "⚪ Nit",
}
RESOLUTION = {
    Resolution.FIXED: "fix suggested",
    Resolution.WARNING: "accepted with a warning",
    Resolution.WITHDRAWN: "withdrawn",
    Resolution.OPEN: "unresolved",
    Resolution.INTENDED: "behaviour change",
}
STANDS = "stands"
"""How a finding a panel's majority keeps against the coder ended: open, but not a deadlock."""
TRIGGER = {
    ArbitrationTrigger.LOOP: "the debate went in circles",
    ArbitrationTrigger.BUDGET: "the debate's token budget ran out",
    ArbitrationTrigger.EXCHANGE_LIMIT: "too many exchanges on this finding",
    ArbitrationTrigger.CONVERGED: "the debate stopped making progress",
    ArbitrationTrigger.ROUND_LIMIT: "the round limit was reached",
    ArbitrationTrigger.CEILING: "the review's token ceiling was reached",
    ArbitrationTrigger.REQUESTED: "a person asked for a ruling",
    ArbitrationTrigger.TIE: "the testers split evenly",
}
_AGREEMENT = {
    Consensus.UNANIMOUS: "tester and coder agreed",
    Consensus.MAJORITY: "a majority of the testers agreed",
    Consensus.ARBITER: "the arbiter ruled",
    Consensus.UNRESOLVED: "no agreement",
}
_CODER = (MessageKind.CONCEDE, MessageKind.DISPUTE, MessageKind.INTENDED)
LEAST_PROSE = 300
"""Characters of each piece of prose a comment shows however much it is cut: enough to read
what the piece is about."""


@dataclass(frozen=True)
class Extent:
    """How much of a finding's longest parts its comment shows: the last lines of each of its
    test's outputs, the characters of its test and of each piece of prose, and whether its fix
    is a committable suggestion (see :mod:`app.publishing.comment_text`)."""

    output_lines: int = OUTPUT_LINES
    test_chars: int = TEST_CHARS
    prose_chars: int = PROSE_LIMIT
    suggestion: bool = True

    @classmethod
    def less(cls, cut: int, *, suggestion: bool) -> Self:
        """The most shown, less `cut`: lines of the test's output first, then characters of
        the test, then characters of each piece of prose, down to :data:`LEAST_PROSE`."""
        output = min(cut, OUTPUT_LINES)
        test = min(cut - output, TEST_CHARS)
        prose_cut = min(cut - output - test, PROSE_LIMIT - LEAST_PROSE)
        return cls(OUTPUT_LINES - output, TEST_CHARS - test, PROSE_LIMIT - prose_cut, suggestion)

    @property
    def cut(self) -> bool:
        """Whether it shows less than the most of a test's output, a test or prose."""
        shown = (self.output_lines, self.test_chars, self.prose_chars)
        return shown != (OUTPUT_LINES, TEST_CHARS, PROSE_LIMIT)


MOST = Extent()
"""Every part shown as much as any comment shows it."""
MOST_CUT = OUTPUT_LINES + TEST_CHARS + PROSE_LIMIT - LEAST_PROSE
"""The largest cut :meth:`Extent.less` takes: the least a comment shows."""


def location(path: str, start: int, end: int) -> str:
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


def stands(result: FindingOutcome) -> bool:
    """Whether a panel's majority keeps the finding against the coder: it is open, but the
    testers agree on it."""
    return result.consensus is Consensus.MAJORITY and result.resolution is Resolution.OPEN


def resolution(result: FindingOutcome) -> str:
    """How the finding ended, in a word or three."""
    return STANDS if stands(result) else RESOLUTION[result.resolution]


def agreement(result: FindingOutcome) -> str:
    """Who settled the finding — on a panel's majority, how many of its testers — and why the
    arbiter was called if it was."""
    if result.consensus is Consensus.MAJORITY:
        return _majority(result)
    if result.consensus is Consensus.UNANIMOUS and result.votes:
        return "the testers and the coder agreed"
    text = _AGREEMENT[result.consensus]
    if result.trigger is not None and result.consensus is not Consensus.UNANIMOUS:
        text += f" ({TRIGGER[result.trigger]})"
    return text


def consensus(result: FindingOutcome) -> str:
    """The consensus as the summary's table shows it, with the reason the debate on the
    finding ended when it did not end by agreement."""
    how = str(result.consensus)
    tally = Tally.of(result.votes)
    majority = tally.keep if stands(result) else tally.accept
    if result.consensus is Consensus.MAJORITY and majority:
        how += f" {len(majority)} of {len(result.votes)}"
    if result.trigger is not None and result.consensus is not Consensus.UNANIMOUS:
        how += f" · {result.trigger.replace('_', ' ')}"
    return how


def vote(result: FindingOutcome) -> str:
    """A panel's vote on the finding, e.g. `Kept by 2 of 3 testers (a, b); c accepted the
    coder's answer.` Empty for a single tester's finding."""
    if not result.votes:
        return ""
    tally, total = Tally.of(result.votes), len(result.votes)
    keep, accept = tally.keep, tally.accept
    if len(keep) > len(accept):
        head = f"Kept by {_share(keep, total)}"
        rest = f"{_names(accept)} accepted the coder's answer" if accept else ""
    elif len(accept) > len(keep):
        head = f"Accepted by {_share(accept, total)}"
        rest = f"{_names(keep)} kept it against the coder's answer" if keep else ""
    else:
        head = f"The testers split evenly: {_names(keep)} kept it"
        rest = f"{_names(accept)} accepted the coder's answer"
    return f"{head}; {rest}." if rest else f"{head}."


def debate(
    result: FindingOutcome,
    thread: Sequence[Message],
    *,
    committable: bool,
    extent: Extent = MOST,
) -> list[str]:
    """The finding's claim and evidence, then its debate as it ended, as much of each as
    `extent` says: Markdown blocks."""
    finding, limit = result.finding, extent.prose_chars
    tested = proof(result, test_chars=extent.test_chars, output_lines=extent.output_lines)
    blocks = [*tested, prose(finding.claim, limit)]
    if finding.evidence.strip():
        blocks.append("**Evidence**\n" + prose(finding.evidence, limit))
    if result.votes:
        raised = f"Raised by {inline(result.raised_by, 100)}. "
        blocks.append(f"**The panel's vote**\n{raised}{vote(result)}")
    ruling = _last(thread, (MessageKind.RULING,))
    reasoning = ruling.text if ruling else ""
    coder = coder_answer(thread)
    majority = result.consensus is Consensus.MAJORITY
    match result.resolution:
        case Resolution.FIXED:
            blocks += _labelled("The arbiter's reasoning", reasoning, limit)
            blocks += _keepers(result, thread, "Outvoted: {} kept it", limit) if majority else []
            blocks += _fix(result, committable=committable, suggested=extent.suggestion)
        case Resolution.WARNING:
            blocks += _labelled("The arbiter's warning", result.warning or "", limit)
            blocks += _labelled("The arbiter's reasoning", reasoning, limit)
            overruled = _keepers(result, thread, "Overruled: {} kept it", limit)
            rejection = _last(thread, (MessageKind.REJECT,))
            blocks += overruled or _tester(rejection, limit, overruled=True)
            blocks += _labelled("The coder's argument", coder.text if coder else "", limit)
            blocks += fix_check(result)
        case Resolution.OPEN if stands(result):
            blocks += _keepers(result, thread, "Kept by {}", limit)
            blocks += [*_coder(coder, limit), *fix_check(result)]
            blocks.append(f"**Why it stands**\n{_why_it_stands(result)}")
        case Resolution.OPEN:
            kept = _keepers(result, thread, "Kept by {}", limit)
            rejection = _last(thread, (MessageKind.REJECT,))
            blocks += kept or _tester(rejection, limit, overruled=False)
            blocks += [*_coder(coder, limit), *fix_check(result)]
            why = result.note or "no agreement was reached"
            blocks += _labelled("Why it is unresolved", why, limit)
        case Resolution.INTENDED:
            blocks += evidence(result)
            blocks += _labelled("The coder's argument", coder.text if coder else "", limit)
            blocks += _labelled("The arbiter's reasoning", reasoning, limit)
            blocks += _keepers(result, thread, "Overruled: {} kept it", limit) if majority else []
        case Resolution.WITHDRAWN:
            argument = coder.text if coder else ""
            blocks += _labelled("Withdrawn after the coder's argument", argument, limit)
            blocks += _keepers(result, thread, "Outvoted: {} kept it", limit) if majority else []
    return blocks


def coder_answer(thread: Sequence[Message]) -> Message | None:
    """The coder's latest answer in a finding's thread."""
    return _last(thread, _CODER)


def _last(thread: Sequence[Message], kinds: tuple[MessageKind, ...]) -> Message | None:
    return next((m for m in reversed(thread) if m.kind in kinds), None)


def _majority(result: FindingOutcome) -> str:
    tally, total = Tally.of(result.votes), len(result.votes)
    if stands(result):
        if not tally.keep:
            return "a majority of the testers keeps it against the coder"
        return f"kept by {len(tally.keep)} of {total} testers against the coder"
    if not tally.accept:
        return _AGREEMENT[Consensus.MAJORITY]
    return f"accepted by {len(tally.accept)} of {total} testers"


def _why_it_stands(result: FindingOutcome) -> str:
    ended = f" The debate on it ended: {TRIGGER[result.trigger]}." if result.trigger else ""
    return (
        "A majority of the testers keeps it against the coder's answer, so it stands without "
        f"a ruling.{ended} It needs a person: change the code, or comment "
        "`/tiebreak arbitrate` to ask the arbiter."
    )


def _keepers(
    result: FindingOutcome, thread: Sequence[Message], label: str, limit: int
) -> list[str]:
    """Each tester that keeps the finding, with its latest rejection (the claim itself, for
    a tester that raised it and never rejected an answer)."""
    blocks = []
    for tester in Tally.of(result.votes).keep:
        said = next(
            (m for m in reversed(thread) if m.kind is MessageKind.REJECT and m.speaker == tester),
            None,
        )
        heading = label.format(inline(tester, 100))
        if said is None or not said.text.strip():
            blocks.append(f"**{heading}**\nThe claim above.")
        else:
            blocks += _labelled(heading, said.text, limit)
    return blocks


def _share(names: Sequence[str], total: int) -> str:
    if total == 1:
        return _names(names)
    share = f"all {total}" if len(names) == total else f"{len(names)} of {total}"
    return f"{share} testers ({', '.join(inline(n, 100) for n in names)})"


def _names(names: Sequence[str]) -> str:
    shown = [inline(n, 100) for n in names]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _fix(result: FindingOutcome, *, committable: bool, suggested: bool) -> list[str]:
    patch, finding = result.patch, result.finding
    assert patch is not None
    where = code(location(patch.path, patch.start_line, patch.end_line))
    if committable and not suggested:
        return [_too_long(patch.replacement, where), *fix_check(result)]
    if committable:
        moved = (patch.path, patch.start_line, patch.end_line) != (
            finding.path,
            finding.start_line,
            finding.end_line,
        )
        raised = code(location(finding.path, finding.start_line, finding.end_line))
        note = [f"Raised on {raised}; the suggestion replaces {where}."] if moved else []
        return [*note, suggestion(patch.replacement), *fix_check(result)]
    lines = replacement_lines(patch.replacement)
    if not lines:
        return [f"The fix deletes {where}.", *fix_check(result)]
    return [f"The fix replaces {where} with:", code_block(lines), *fix_check(result)]


def _too_long(replacement: str, where: str) -> str:
    """What a comment says in place of a suggestion too long to fit it: a suggestion cut
    short would commit a broken file."""
    return (
        f"**Fix not shown**: the suggested fix for {where} ({len(replacement):,} characters) "
        f"does not fit in this comment, which GitHub limits to {LIMIT:,} characters, and a "
        "suggestion cut short would commit a broken file. Comment `/tiebreak apply` to commit "
        "it with the review's other fixes."
    )


def _tester(rejection: Message | None, limit: int, *, overruled: bool) -> list[str]:
    label = "Overruled: the tester's position" if overruled else "The tester's position"
    if rejection is None or not rejection.text.strip():
        return [f"**{label}**\nThe claim above."]
    return _labelled(label, rejection.text, limit)


def _coder(answer: Message | None, limit: int) -> list[str]:
    if answer is None:
        return ["**The coder's position**\nThe coder did not answer."]
    blocks = _labelled("The coder's position", answer.text or "(no argument given)", limit)
    if answer.patch is not None:
        patch = answer.patch
        lines = replacement_lines(clip(patch.replacement, limit))
        where = code(location(patch.path, patch.start_line, patch.end_line))
        blocks += [f"Its last patch for {where}, not agreed:", code_block(lines)]
    return blocks


def _labelled(label: str, text: str, limit: int) -> list[str]:
    return [f"**{label}**\n{prose(text, limit)}"] if text.strip() else []
