"""One finding in Markdown: how it ended, who settled it, and the debate its comment tells.

A single tester's finding reads as a debate between the tester and the coder. A panel's
finding adds the panel's vote — who raised it, who keeps it against the coder's answer and
who accepts the answer — and each keeping tester's own latest reason, by name. Model text
goes through :mod:`app.publishing.markdown`; so do tester names, which a review loaded from a
transcript carries as data.
"""

from collections.abc import Sequence

from agents.outcome import Consensus, FindingOutcome, Message, MessageKind, Resolution
from agents.protocol import Severity
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
from app.publishing.proof_text import fix_check, proof
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


def debate(result: FindingOutcome, thread: Sequence[Message], *, committable: bool) -> list[str]:
    """The finding's claim and evidence, then its debate as it ended: Markdown blocks."""
    finding = result.finding
    blocks = [*proof(result), prose(finding.claim)]
    if finding.evidence.strip():
        blocks.append("**Evidence**\n" + prose(finding.evidence))
    if result.votes:
        raised = f"Raised by {inline(result.raised_by, 100)}. "
        blocks.append(f"**The panel's vote**\n{raised}{vote(result)}")
    ruling = _last(thread, (MessageKind.RULING,))
    reasoning = ruling.text if ruling else ""
    coder = coder_answer(thread)
    majority = result.consensus is Consensus.MAJORITY
    match result.resolution:
        case Resolution.FIXED:
            blocks += _labelled("The arbiter's reasoning", reasoning)
            blocks += _keepers(result, thread, "Outvoted: {} kept it") if majority else []
            blocks += _fix(result, committable=committable)
        case Resolution.WARNING:
            blocks += _labelled("The arbiter's warning", result.warning or "")
            blocks += _labelled("The arbiter's reasoning", reasoning)
            overruled = _keepers(result, thread, "Overruled: {} kept it")
            blocks += overruled or _tester(_last(thread, (MessageKind.REJECT,)), overruled=True)
            blocks += _labelled("The coder's argument", coder.text if coder else "")
            blocks += fix_check(result)
        case Resolution.OPEN if stands(result):
            blocks += _keepers(result, thread, "Kept by {}")
            blocks += [*_coder(coder), *fix_check(result)]
            blocks.append(f"**Why it stands**\n{_why_it_stands(result)}")
        case Resolution.OPEN:
            kept = _keepers(result, thread, "Kept by {}")
            blocks += kept or _tester(_last(thread, (MessageKind.REJECT,)), overruled=False)
            blocks += [*_coder(coder), *fix_check(result)]
            blocks += _labelled("Why it is unresolved", result.note or "no agreement was reached")
        case Resolution.INTENDED:
            blocks += evidence(result)
            blocks += _labelled("The coder's argument", coder.text if coder else "")
            blocks += _labelled("The arbiter's reasoning", reasoning)
            blocks += _keepers(result, thread, "Overruled: {} kept it") if majority else []
        case Resolution.WITHDRAWN:
            blocks += _labelled("Withdrawn after the coder's argument", coder.text if coder else "")
            blocks += _keepers(result, thread, "Outvoted: {} kept it") if majority else []
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


def _keepers(result: FindingOutcome, thread: Sequence[Message], label: str) -> list[str]:
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
            blocks += _labelled(heading, said.text)
    return blocks


def _share(names: Sequence[str], total: int) -> str:
    if total == 1:
        return _names(names)
    share = f"all {total}" if len(names) == total else f"{len(names)} of {total}"
    return f"{share} testers ({', '.join(inline(n, 100) for n in names)})"


def _names(names: Sequence[str]) -> str:
    shown = [inline(n, 100) for n in names]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _fix(result: FindingOutcome, *, committable: bool) -> list[str]:
    patch, finding = result.patch, result.finding
    assert patch is not None
    where = code(location(patch.path, patch.start_line, patch.end_line))
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


def _tester(rejection: Message | None, *, overruled: bool) -> list[str]:
    label = "Overruled: the tester's position" if overruled else "The tester's position"
    if rejection is None or not rejection.text.strip():
        return [f"**{label}**\nThe claim above."]
    return _labelled(label, rejection.text)


def _coder(answer: Message | None) -> list[str]:
    if answer is None:
        return ["**The coder's position**\nThe coder did not answer."]
    blocks = _labelled("The coder's position", answer.text or "(no argument given)")
    if answer.patch is not None:
        patch = answer.patch
        lines = replacement_lines(clip(patch.replacement, PROSE_LIMIT))
        where = code(location(patch.path, patch.start_line, patch.end_line))
        blocks += [f"Its last patch for {where}, not agreed:", code_block(lines)]
    return blocks


def _labelled(label: str, text: str) -> list[str]:
    return [f"**{label}**\n{prose(text)}"] if text.strip() else []
