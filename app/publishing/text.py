"""A review in Markdown: findings in full, the findings table, totals and the check run's text.

Every piece of model- or author-written text goes through :mod:`app.publishing.markdown` first.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agents.outcome import FindingOutcome, Message, Resolution
from agents.review import Review
from agents.wording import counted
from app.bodies import LIMIT
from app.publishing import intent_text, proof_text
from app.publishing.finding_text import (
    SEVERITY,
    agreement,
    coder_answer,
    consensus,
    debate,
    location,
    resolution,
    stands,
    vote,
)
from app.publishing.markdown import cell, code, inline
from app.publishing.markers import ANSWERED_MARKER, REOPENED_MARKER, marker
from app.publishing.publication import Conversation, GoneFinding

_TALLY = {
    Resolution.FIXED: "with a suggested fix",
    Resolution.WITHDRAWN: "withdrawn",
    Resolution.WARNING: "accepted with a warning",
    Resolution.OPEN: "unresolved",
    Resolution.INTENDED: "intended",
}
_STANDING = "standing by majority"
"""The totals' word for findings a panel's majority keeps against the coder."""


@dataclass(frozen=True)
class FindingEntry:
    """One finding as it is published."""

    label: str
    """The finding's id, qualified by its unit when the review has several."""
    result: FindingOutcome
    thread: tuple[Message, ...]
    anchor: tuple[str, int, int]
    """Where its inline comment sits (path, start, end): on its fix's lines, if it has one."""
    inline: bool
    """Whether it is posted as an inline comment."""
    outside: str | None = None
    """Why the anchor cannot take an inline comment, when it cannot: `<anchor> {outside}`."""
    overflow: bool = False
    """Whether it could be posted inline but the review already has its most comments."""
    posted_in: int | None = None
    """The first comment of the review thread an earlier run started for it, if any."""


def thread_link(thread: int, pull_url: str | None) -> str:
    """A link to a review thread of the pull request (bare text without its address)."""
    return f"[thread]({pull_url}#discussion_r{thread})" if pull_url else "thread"


def heading(result: FindingOutcome) -> str:
    """A finding's severity; a behaviour change the pull request means has none."""
    if result.resolution is Resolution.INTENDED:
        return intent_text.HEADING
    return SEVERITY[result.finding.severity]


def section(entry: FindingEntry) -> str:
    """A finding in full, for a review body or a check run's text: no suggestion block."""
    result, finding = entry.result, entry.result.finding
    where = code(location(finding.path, finding.start_line, finding.end_line))
    blocks = [
        f"#### {entry.label} · {heading(result)} · {resolution(result)} · {where}",
        f"_{agreement(result)} · {rounds(result)} · {result.tokens:,} billed tokens_",
    ]
    if entry.outside:
        blocks.append(f"Not posted inline: {code(location(*entry.anchor))} {entry.outside}.")
    blocks += debate(result, entry.thread, committable=False)
    return "\n\n".join(blocks) + "\n\n"


def withdrawn_line(entry: FindingEntry) -> str:
    """A withdrawn finding in one line: the coder's argument and, on a panel, the vote."""
    finding = entry.result.finding
    where = code(location(finding.path, finding.start_line, finding.end_line))
    argument = coder_answer(entry.thread)
    why = f" — the coder: {inline(argument.text, 300)}" if argument and argument.text else ""
    if (tested := entry.result.verification) is not None and not why:
        why = f" — its test {code(tested.test)}: {inline(tested.reason, 200)}"
    votes = f" · {vote(entry.result)}" if entry.result.votes else ""
    return (
        f"- **{entry.label}** {where} ({finding.severity}): {inline(finding.claim, 300)}"
        f"{why}{votes}\n"
    )


def table(entries: Sequence[FindingEntry], pull_url: str | None = None) -> list[str]:
    """Every finding, one row each; each row is a piece that may be cut after."""
    rows = [
        "| Finding | Severity | Location | Resolution | Consensus | Rounds | Billed tokens "
        "| Where |\n|---|---|---|---|---|--:|--:|---|\n"
    ]
    for entry in entries:
        result, finding = entry.result, entry.result.finding
        if entry.posted_in is not None:
            where = thread_link(entry.posted_in, pull_url)
        else:
            where = "inline" if entry.inline else "below"
        rows.append(
            f"| {cell(entry.label)} | {SEVERITY[finding.severity]} "
            f"| {code(location(finding.path, finding.start_line, finding.end_line))} "
            f"| {_ended(result)} | {cell(consensus(result))} | {result.closed_in_round} "
            f"| {result.tokens:,} | {where} |\n"
        )
    return [*rows, "\n"]


def _ended(result: FindingOutcome) -> str:
    """How the finding ended, and what its test showed if it had one run."""
    tested = proof_text.verdict(result)
    return f"{resolution(result)} · {tested}" if tested else resolution(result)


def totals(review: Review) -> str:
    counts = dict.fromkeys([*_TALLY.values(), _STANDING], 0)
    for result in review.findings:
        counts[_STANDING if stands(result) else _TALLY[result.resolution]] += 1
    split = ", ".join(f"{n} {label}" for label, n in counts.items() if n)
    by_role = " · ".join(f"{role} {n:,}" for role, n in review.billed_by_role().items())
    text = (
        f"**{counted(len(review.findings), 'finding')}**{f' ({split})' if split else ''} · "
        f"{counted(len(review.debated), 'unit')} · {counted(review.rounds, 'round')} · "
        f"{counted(review.calls, 'call')} ({review.failures()}) · "
        f"{review.billed:,} billed tokens ({by_role or 'none'})"
    )
    dropped = sum(u.dropped_findings for u in review.debated)
    if dropped:
        text += f" · {counted(dropped, 'finding')} over the proposal budget dropped"
    return text + "\n\n"


def failed_units(review: Review) -> list[str]:
    """Each unit not reviewed with its reason, and every file it holds; then each file no
    unit holds (a binary file), with its reason."""
    unheld = [f for f in review.unreviewed if f.unit is None]
    if not review.failed_units and not unheld:
        return []
    in_part = {f.path: f.in_part for f in review.unreviewed}
    lines = []
    for u in review.failed_units:
        named = [f"{code(p)}{' (in part)' if in_part.get(p) else ''}" for p in u.paths]
        held = f" ({', '.join(named)})" if named else ""
        reason = inline(u.error or "no reason given", 500)
        lines.append(f"- Unit {code(u.unit_id)}{held}: {reason}\n")
    lines += [f"- {code(f.path)}: {f.reason}\n" for f in unheld]
    again = " Comment `/tiebreak review` to try again." if review.failed_units else ""
    expected = review.estimate
    foreseen = ""
    if expected is not None and expected.covered < len(expected.units):
        foreseen = (
            f"The review was expected to need about {expected.tokens:,} billed tokens, more "
            f"than its ceiling of {expected.ceiling:,}: its units took the riskiest files "
            "first (code before tests, docs and lock files; then the larger changes). A larger "
            "`debate.token_ceiling` in `.github/tiebreak.yml` covers more.\n\n"
        )
    return [
        "#### Not reviewed\n\nThese parts of the diff were not reviewed, so they have no "
        f"findings.{again}\n\n{foreseen}",
        *lines,
        "\n",
    ]


def overview(
    review: Review,
    entries: Sequence[FindingEntry],
    *,
    title: str,
    run_id: str,
    details_url: str | None,
    pull_url: str | None = None,
    opening: Sequence[str] = (),
) -> list[str]:
    """The review at a glance: the marker, the verdict, what opens it (the walkthrough),
    every finding's row, the totals."""
    return [
        marker(run_id) + "\n",
        f"### Tiebreak: {title}\n\n",
        *([f"[The debate, message by message]({details_url})\n\n"] if details_url else []),
        *opening,
        *(table(entries, pull_url) if entries else []),
        totals(review),
        *failed_units(review),
    ]


def not_inline(entries: Sequence[FindingEntry], max_inline: int) -> list[str]:
    """What the review body adds to the overview: findings that have no inline comment."""
    withdrawn = [withdrawn_line(e) for e in entries if e.result.resolution is Resolution.WITHDRAWN]
    overflow = [section(e) for e in entries if e.overflow]
    outside = [section(e) for e in entries if e.outside]
    pieces = ["#### Withdrawn\n\n", *withdrawn, "\n"] if withdrawn else []
    if overflow:
        why = (
            f"This repository posts at most {max_inline} inline "
            f"{'comment' if max_inline == 1 else 'comments'} per review; these did not fit."
            if max_inline
            else "These findings are not posted as inline comments."
        )
        pieces += [f"### More findings\n\n{why}\n\n", *overflow]
    if outside:
        pieces += ["### Findings on lines outside the diff\n\n", *outside]
    return pieces


def scope(conversation: Conversation, sha: str) -> list[str]:
    """What this run reviewed, when it was not simply everything for the first time."""
    if conversation.since is not None:
        files = counted(conversation.reviewed_files, "file")
        text = (
            f"_Reviewed {code(sha[:7])}: the {files} changed since {code(conversation.since[:7])}"
        )
        if conversation.carried:
            text += f"; {counted(conversation.carried, 'earlier finding')} on unchanged code stand"
        text += "._"
    elif conversation.why_full:
        text = (
            f"_Reviewed every file of {code(sha[:7])} again: {inline(conversation.why_full, 200)}._"
        )
    else:
        return []
    if conversation.dismissed:
        text += (
            f" _{counted(conversation.dismissed, 'finding')} not raised again: a writer or "
            "Tiebreak resolved its thread, or a writer marked it 👎._"
        )
    return [text + "\n\n"]


def gone(findings: Sequence[GoneFinding], pull_url: str | None) -> list[str]:
    """The earlier unresolved findings this run no longer finds."""
    if not findings:
        return []
    lines = []
    for g in findings:
        finding = g.result.finding
        where = code(location(finding.path, finding.start_line, finding.end_line))
        link = f" · {thread_link(g.thread, pull_url)}" if g.thread is not None else ""
        lines.append(f"- {where} ({finding.severity}): {inline(finding.claim, 300)}{link}\n")
    return [
        "#### No longer found\n\nUnresolved before; the code they were about has changed and "
        "this review does not raise them again.\n\n",
        *lines,
        "\n",
    ]


def review_intro(comments: int, *, run_id: str, sha: str) -> str:
    """The body of a run's review: its inline comments are the news; the summary has the rest."""
    return (
        f"{marker(run_id)}\n"
        f"**Tiebreak** · {counted(comments, 'new finding')} on {code(sha[:7])}. Every finding on "
        "this pull request is in Tiebreak's summary comment, kept up to date.\n"
    )


def answered(result: FindingOutcome, *, sha: str) -> str:
    """The reply on the thread of an unresolved finding that is gone at `sha`."""
    return (
        f"No longer found at {code(sha[:7])}: the code this finding was about has changed, and "
        f"Tiebreak's review of the change does not raise it again.\n\n{ANSWERED_MARKER}"
    )


def reopened() -> str:
    """The reply, once, on a finding's thread Tiebreak reopened: it was resolved by someone
    who may not write to the repository, and the finding stands."""
    return (
        "Reopened: only someone with write access to this repository can set a finding aside "
        "by resolving its thread, and this finding still stands. To dispute it, reply here."
        f"\n\n{REOPENED_MARKER}"
    )


def spend(*, spent: int, ceiling: int, daily_remaining: int, daily_cap: int) -> str:
    """What a run spent and what its installation has left today."""
    return (
        f"**Spend**: {spent:,} billed tokens of this review's {ceiling:,} ceiling · "
        f"{daily_remaining:,} of the installation's {daily_cap:,} daily tokens left "
        "(the allowance resets at 00:00 UTC)\n\n"
    )


def every_finding(entries: Sequence[FindingEntry]) -> list[str]:
    """A check run's text: every finding in full."""
    return ["## Every finding\n\n", *map(section, entries)] if entries else []


def truncation_note(details_url: str | None) -> Callable[[int], str]:
    rest = f" The whole debate: [the transcript]({details_url})." if details_url else ""

    def note(cut: int) -> str:
        return (
            f"\n\n---\n_Truncated: {cut:,} characters were cut to fit GitHub's limit of "
            f"{LIMIT:,} characters.{rest}_\n"
        )

    return note


def rounds(result: FindingOutcome) -> str:
    """In which round the finding's debate closed, or left it open."""
    verb = "left open" if result.resolution is Resolution.OPEN else "closed"
    return f"{verb} in round {result.closed_in_round}"
