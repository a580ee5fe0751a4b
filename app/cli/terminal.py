"""How a review looks in a terminal: progress while it runs, then every finding and the totals.

Every text the model, a test or a diff wrote is shown through :func:`app.cli.printable.printable`,
so that none of it drives the terminal it is printed to.
"""

from collections.abc import Callable, Mapping, Sequence

import click

from agents.models.llm import LLMClient, LLMRequest, LLMResponse
from agents.outcome import Consensus, FindingOutcome, Resolution
from agents.review import Review, Unreviewed
from agents.verification import Evidence
from agents.walkthrough import Walkthrough, walkthrough
from agents.wording import counted
from app.cli.printable import json_text, printable
from app.publishing import proof_text
from app.publishing.finding_text import STANDS, stands
from policies.panel import Tally

_RESOLUTION_COLOUR = {
    Resolution.FIXED: "green",
    Resolution.WITHDRAWN: "cyan",
    Resolution.WARNING: "yellow",
    Resolution.OPEN: "red",
    Resolution.INTENDED: "blue",
}
_TALLY = {
    Resolution.FIXED: "fixed",
    Resolution.WITHDRAWN: "withdrawn",
    Resolution.WARNING: "with a warning",
    Resolution.OPEN: "open",
    Resolution.INTENDED: "intended",
    STANDS: "standing by majority",
}
"""How the totals count the findings of each ending, in words that read after any number."""


class CallProgress:
    """An :class:`LLMClient` wrapper that reports each call as it completes: which unit of
    how many, the round, who was asked what, and the running totals. The billed total is
    each call's, added up, as the ceiling and the review's own total count it."""

    def __init__(
        self, llm: LLMClient, report: Callable[[str], None], units: Sequence[str] = ()
    ) -> None:
        self.llm = llm
        self.report = report
        self.units = {unit: n for n, unit in enumerate(units, 1)}
        """Each unit's place in the review, by id."""
        self.calls = 0
        self.tokens = 0

    def count(self, units: Sequence[str]) -> None:
        """Number the review's units, once they are known, for the lines that follow."""
        self.units = {unit: n for n, unit in enumerate(units, 1)}

    def spent(self) -> str:
        """What the calls so far cost, as the last line of each call says it."""
        return f"{counted(self.calls, 'call')} · {self.tokens:,} billed tokens"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        try:
            response = await self.llm.complete(request)
        finally:
            self.calls += 1
        self.tokens += response.usage.billed
        about = f" on {', '.join(request.subject)}" if request.subject else ""
        place = self.units.get(request.unit or "")
        unit = f"unit {place}/{len(self.units)} · " if place is not None else ""
        self.report(
            f"{unit}round {request.round} · {request.role} · {request.tool.name}{about} · "
            f"{self.spent()}"
        )
        return response


def render(review: Review, *, notice: str = "") -> str:
    """The review as text: the walkthrough, each finding, then the totals; `notice` (the
    demo's label) first and after the totals."""
    lines = [click.style(notice, fg="yellow", bold=True), ""] if notice else []
    lines += [*_walkthrough(walkthrough(review)), *_behaviour_changes(review)]
    findings = sorted(review.findings, key=lambda f: (f.finding.severity.rank, f.finding.path))
    for result in findings:
        lines += _finding(result)
        lines.append("")
    lines += _unreviewed(review)
    if not review.findings and not review.failed_units:
        lines.append(click.style("No findings: the change looks sound.", fg="green"))
    lines.append(_totals(review) + (f" · {notice}" if notice else ""))
    return "\n".join(lines)


def review_json(review: Review, about: Mapping[str, str] | None = None) -> str:
    """The review as `--json` prints it: every unit's outcome, and the merged `walkthrough`;
    `about` (the demo's label and transcript) first."""
    merged = walkthrough(review)
    data = {**(about or {}), **review.model_dump(mode="json")}
    data["walkthrough"] = None if merged is None else merged.model_dump(mode="json")
    # The texts as the model wrote them, for a program to read: what would drive a terminal
    # is written as JSON's escapes, not removed.
    return json_text(data)


def _walkthrough(merged: Walkthrough | None) -> list[str]:
    """The walkthrough first, as a person reads a pull request's summary first."""
    if merged is None or not (merged.description or merged.files):
        return []
    lines = [click.style("Walkthrough", bold=True)]
    lines += [f"  {_plain(p)}" for p in merged.description]
    if merged.effort is not None:
        lines.append(f"  Review effort: {merged.effort}/5")
    for file in merged.files:
        lines.append(
            f"  {_plain(file.path)}" + (f": {_plain(file.summary)}" if file.summary else "")
        )
    lines += [f"  {_plain(path)}: not reviewed" for path in merged.unreviewed]
    if merged.attention:
        lines.append("  Deserves a closer look:")
        lines += [f"    {_plain(a.path)}: {_plain(a.why)}" for a in merged.attention]
    for diagram in merged.diagrams:
        lines += [f"  {_plain(line)}" for line in diagram.splitlines()]
    return [*lines, ""]


def _behaviour_changes(review: Review) -> list[str]:
    """The pull request's proven behaviour changes, each with the test that shows it."""
    changes = [f for f in review.findings if f.behaviour_change]
    if not changes:
        return []
    lines = [click.style("Proven behaviour changes", bold=True)]
    for result in changes:
        finding, test = result.finding, result.verification
        assert test is not None
        lines.append(
            f"  {_plain(finding.path)}:{finding.start_line}: {_plain(finding.claim)} "
            f"(shown by {_plain(test.test)})"
        )
    return [*lines, ""]


def _plain(text: str) -> str:
    """Text from outside on one line, as the terminal may show it."""
    return printable(text, one_line=True)


def _prose(text: str, indent: str) -> str:
    """Text from outside, its lines kept and each indented as the first."""
    return f"\n{indent}".join(printable(text).splitlines())


def _unreviewed(review: Review) -> list[str]:
    """Every file not reviewed, under its reason."""
    by_reason: dict[str, list[Unreviewed]] = {}
    for file in review.unreviewed:
        by_reason.setdefault(file.reason, []).append(file)
    lines = []
    for reason, files in by_reason.items():
        lines.append(click.style(f"Not reviewed ({_plain(reason)}):", fg="red"))
        lines += [f"  {_plain(f.path)}{' (in part)' if f.in_part else ''}" for f in files]
    for unit in review.failed_units:
        if not unit.paths:  # an outcome kept from before units named their files
            said = f"Unit {_plain(unit.unit_id)} was not reviewed: {_plain(str(unit.error))}"
            lines.append(click.style(said, fg="red"))
    if lines:
        lines.append("")
    return lines


def _finding(result: FindingOutcome) -> list[str]:
    finding = result.finding
    where = f"{_plain(finding.path)}:{finding.start_line}"
    if finding.end_line != finding.start_line:
        where += f"-{finding.end_line}"
    how = str(result.consensus)
    if result.trigger is not None and result.consensus is not Consensus.UNANIMOUS:
        how += f" ({result.trigger})"
    verdict = click.style(_verdict(result), fg=_colour(result))
    out = [
        f"{click.style(where, bold=True)}  {finding.severity}  {verdict} · {how} · "
        f"round {result.closed_in_round} · {result.tokens:,} billed tokens",
        f"  {_prose(finding.claim, '  ')}",
    ]
    if (tested := result.verification) is not None:
        binds = tested.verdict.proof and tested.relevant is not False
        shows = tested.relevance if tested.relevant is False else tested.reason
        out.append(
            click.style(
                f"  Test {_plain(tested.test)}: {proof_text.verdict(result)}",
                fg="green" if binds else None,
            )
            + f" — {_plain(shows or '')}"
        )
    if result.votes:
        out.append(f"  Raised by {result.raised_by}; {Tally.of(result.votes).describe()}.")
    if result.patch is not None:
        patch = result.patch
        span = f"{_plain(patch.path)}:{patch.start_line}-{patch.end_line}"
        out.append(f"  Suggested replacement for {span}:")
        out += [f"    {line}" for line in printable(patch.replacement).splitlines()] or [
            "    (delete)"
        ]
    if result.intended is not None:
        out += _intended(result)
    if result.warning:
        out.append(click.style(f"  Warning: {_prose(result.warning, '    ')}", fg="yellow"))
    if result.note:
        said = "Stands" if stands(result) else "Unresolved"
        out.append(f"  {said}: {_prose(result.note, '    ')}")
    return out


def _intended(result: FindingOutcome) -> list[str]:
    """Why a finding is a behaviour change the pull request means: the evidence cited."""
    assert result.intended is not None
    what = "Behaviour change" if result.behaviour_change else "Intended"
    out = [click.style(f"  {what}: the pull request means it, as it shows:", fg="blue")]
    for citation in result.intended.citations:
        if citation.quote is not None:
            out.append(f"    the description says: {_plain(citation.quote)}")
        else:
            span = f"{citation.path}:{citation.start_line}-{citation.end_line}"
            out.append(f"    {_plain(span)}, changed by the pull request")
    for run in result.intended.tests:
        out.append(f"    its test {_plain(run.test)}: {_plain(run.reason)}")
    return out


def _totals(review: Review) -> str:
    by_role = " · ".join(f"{role} {n:,}" for role, n in review.billed_by_role().items())
    counts = dict.fromkeys(_TALLY.values(), 0)
    for result in review.findings:
        counts[_TALLY[_verdict(result)]] += 1
    summary = ", ".join(f"{n} {words}" for words, n in counts.items() if n)
    findings = counted(len(review.findings), "finding") + (f" ({summary})" if summary else "")
    line = (
        f"{findings} · {counted(len(review.units), 'unit')} · {counted(review.rounds, 'round')} · "
        f"{counted(review.calls, 'call')}, {review.failures()} · "
        f"{review.billed:,} billed tokens ({by_role or 'none'})"
    )
    tested = [f.verification for f in review.findings if f.verification is not None]
    if tested:
        binding = [v for v in tested if v.relevant is not False]
        reproduced = sum(1 for v in binding if v.verdict is Evidence.REPRODUCED)
        introduced = sum(1 for v in binding if v.verdict is Evidence.INTRODUCED)
        more = f", {introduced} {proof_text.WORDS[Evidence.INTRODUCED]}" if introduced else ""
        if set_aside := len(tested) - len(binding):
            more += f", {set_aside} {proof_text.NOT_RELEVANT}"
        changes = sum(1 for f in review.findings if f.behaviour_change)
        if changes:
            more += f", {counted(changes, 'intended behaviour change')}"
        line += (
            f"\nTests: {counted(len(tested), 'finding')} tested, {reproduced} reproduced"
            f"{more} · {review.verification_seconds:.1f} s of test runs · about "
            f"{review.test_tokens:,} output tokens writing tests"
        )
    return line


def _verdict(result: FindingOutcome) -> str:
    """How the finding ended: its resolution, or `stands` when a panel's majority keeps it
    against the coder (open, but no deadlock)."""
    return STANDS if stands(result) else str(result.resolution)


def _colour(result: FindingOutcome) -> str:
    """The colour of a consensus and resolution: a finding that stands is open, but the
    testers agree on it."""
    return "magenta" if stands(result) else _RESOLUTION_COLOUR[result.resolution]
