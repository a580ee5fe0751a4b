"""A behaviour change the pull request means to make, in Markdown: the note a finding shown
intended is posted as, and the summary's list of the pull request's proven behaviour changes.

A finding whose test proves that behaviour changed, and that ended `intended`, is no defect:
it is posted as a **Behaviour change** note — never a suggestion that would revert it, never
a blocker — with the evidence of intent the coder cited and Tiebreak checked (the quote from
the description, the lines of the changelog, docs or docstring, the pull request's own tests
run at the head) and, collapsed, the test that shows the change
(:func:`app.publishing.proof_text.proof`). The summary lists every proven behaviour change,
each with the test that shows it: what a reviewer who reads the summary alone should know
changed. Model and author text goes through :mod:`app.publishing.markdown`.
"""

from collections.abc import Sequence

from agents.outcome import FindingOutcome
from agents.protocol import Citation
from app.publishing.markdown import code, inline

HEADING = "🔵 Behaviour change"
"""How a finding shown intended is headed, where others show their severity."""
QUOTE_CHARS = 300


def evidence(result: FindingOutcome) -> list[str]:
    """The blocks that tell why the change is intended (none for another finding)."""
    shown = result.intended
    if shown is None:
        return []
    lines = [f"- {_citation(c)}" for c in shown.citations]
    for run in shown.tests:
        lines.append(f"- the pull request's test {code(run.test)}: {inline(run.reason, 200)}")
    test = result.verification
    what = (
        f"The test {code(test.test)} shows that this behaviour changed; the pull request "
        "means the change, as it shows:"
        if test is not None and test.verdict.proof
        else "The pull request means this behaviour, as it shows:"
    )
    return [f"**{HEADING}**: not a defect. {what}\n" + "\n".join(lines)]


def behaviour_changes(findings: Sequence[FindingOutcome]) -> list[str]:
    """The summary's list of the pull request's proven behaviour changes, each with the test
    that shows it (nothing when there is none)."""
    changes = [f for f in findings if f.behaviour_change]
    if not changes:
        return []
    pieces = ["**Proven behaviour changes**\n\n"]
    for result in changes:
        finding, test = result.finding, result.verification
        assert test is not None
        where = code(f"{finding.path}:{finding.start_line}")
        pieces.append(
            f"- {where}: {inline(finding.claim, 300)} — shown by {code(test.test)}, "
            f"{inline(test.reason, 200)}\n"
        )
    return [*pieces, "\n"]


def _citation(citation: Citation) -> str:
    if citation.quote is not None:
        return f"the description says “{inline(citation.quote, QUOTE_CHARS)}”"
    start, end = citation.start_line, citation.end_line
    lines = f"{citation.path}:{start}" if start == end else f"{citation.path}:{start}-{end}"
    return f"{code(lines)}, changed by the pull request"
