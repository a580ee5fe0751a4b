"""What a finding's test showed, in Markdown: the proof beside the claim.

A reproduced finding says so first — its test fails at the head and passes at the base — with
the test and the end of its failing output in collapsed blocks; a test that proved nothing
says why; a fix says whether the finding's test passes with it. The test and its output are
untrusted text: they only ever appear inside code blocks whose fence nothing inside can close.
A review whose tests found the project's environment unable to run any says so once, in its
summary and check run (:func:`environment_note`).
"""

from collections.abc import Sequence

from agents.outcome import FindingOutcome, Resolution
from agents.verification import UNFIT, Evidence, Verification
from app.publishing.markdown import clip, code, code_block, inline

OUTPUT_LINES = 20
"""Lines of a test's output shown: its end, where a failure is told."""
LINE_CHARS = 200
TEST_LINES = 120
"""Lines of a test shown; a longer one is cut."""

_HEADLINE = {
    Evidence.REPRODUCED: "**Reproduced**: {test} fails at the head and passes at the base.",
    Evidence.FAILS_AT_BASE: (
        "**Not a regression**: {test} fails at the base too, so it shows no bug the change "
        "brought in."
    ),
    Evidence.NOT_REPRODUCED: "**Not reproduced**: {test} passes at the head.",
    Evidence.BROKEN: "**Test did not run**: {test} ({reason}); it shows nothing.",
    Evidence.NOT_RUN: "**Test not run**: {test} ({reason}).",
}


def proof(result: FindingOutcome) -> list[str]:
    """The blocks that tell what the finding's test showed (none if it had no test run)."""
    verification = result.verification
    if verification is None:
        return []
    test = code(verification.test)
    reason = inline(verification.reason, 200)
    blocks = [_HEADLINE[verification.verdict].format(test=test, reason=reason)]
    reproduction = result.finding.reproduction
    if reproduction is not None and reproduction.path == verification.test:
        lines = reproduction.content.splitlines()
        shown = [clip(line, LINE_CHARS) for line in lines[:TEST_LINES]]
        if len(lines) > TEST_LINES:
            shown.append(f"… {len(lines) - TEST_LINES} more lines")
        blocks.append(_details(f"The test, {test}", code_block(shown, "python")))
    if verification.verdict in (Evidence.REPRODUCED, Evidence.FAILS_AT_BASE):
        blocks.append(_details("How it fails at the head", _output(verification)))
    return blocks


def fix_check(result: FindingOutcome) -> list[str]:
    """Whether the finding's test passes with its fix (nothing if it was not run)."""
    if result.resolution is not Resolution.FIXED or result.fix_verified is None:
        return []
    if result.fix_verified:
        return ["**Fix verified**: the finding's test passes with this patch."]
    return ["**Fix not verified**: the finding's test still fails with this patch."]


def verdict(result: FindingOutcome) -> str:
    """The test's verdict in a word or three, for a table or a terminal line ("" if none)."""
    if result.verification is None:
        return ""
    shown = str(result.verification.verdict).replace("_", " ")
    if result.fix_verified is True:
        shown += ", fix verified"
    elif result.fix_verified is False:
        shown += ", fix fails"
    return shown


def environment_note(findings: Sequence[FindingOutcome]) -> str | None:
    """The summary's note when a finding's test found the project's environment unable to
    run tests: the findings went on unverified, and why (None: no test found it so)."""
    for result in findings:
        shown = result.verification
        if shown is not None and shown.environment is not None:
            return (
                f"_Findings' tests were not run: {UNFIT}: {inline(shown.environment, 300)}. "
                "The findings are unverified._"
            )
    return None


def _output(verification: Verification) -> str:
    lines = verification.output_tail.splitlines()[-OUTPUT_LINES:]
    return code_block([clip(line, LINE_CHARS) for line in lines] or ["(no output)"])


def _details(summary: str, body: str) -> str:
    # A blank line after the summary, so that GitHub renders the block inside as Markdown.
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"
