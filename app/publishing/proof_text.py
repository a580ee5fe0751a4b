"""What a finding's test showed, in Markdown: the proof beside the claim.

A proven finding says so first — its test fails at the head and passes at the base, or fails
at the head while the base does not have the code it tests — with the test (whole, fenced in
the language of its file: `go`, `javascript`, `python`…) and the end of its failing output in
collapsed blocks (at the base too, when it failed there); a test that
proved nothing says why; a fix says whether the finding's test passes with it, and a patch
refused because its test still fails says so on a finding left without a fix. Every verdict
reads beside every fix check without contradicting it. The test and its output are untrusted
text: they only ever appear inside code blocks whose fence nothing inside can close.
A review whose tests found the project's environment unable to run any says so once, in its
summary and check run (:func:`environment_note`). A test ruled not to test its claim
(`agents.debate.relevance`) is said to be so, and why, in place of what its runs showed: it
proves nothing, whatever they were.
"""

from collections.abc import Sequence

from agents.outcome import FindingOutcome, Resolution
from agents.verification import UNFIT, Evidence
from agents.wording import counted
from app.publishing.markdown import clip, code, code_block, fence_language, inline

OUTPUT_LINES = 20
"""Lines of a test's output shown: its end, where a failure is told."""
LINE_CHARS = 200
TEST_CHARS = 24_000
"""Characters of a test shown: any test a finding is likely to carry, whole; a longer one is
cut at a line. A comment that would not fit GitHub's limit shows less of it
(:mod:`app.publishing.comment_text`)."""

_HEADLINE = {
    Evidence.REPRODUCED: "**Reproduced**: {test} fails at the head and passes at the base.",
    Evidence.INTRODUCED: (
        "**Proven in new code**: {test} fails at the head; the base does not have this code "
        "({reason})."
    ),
    Evidence.FAILS_AT_BASE: (
        "**Not a regression**: {test} fails at the base too ({reason}): the bug it shows, if "
        "it is one, is older than this change."
    ),
    Evidence.NOT_REPRODUCED: "**Not reproduced**: {test} passes at the head.",
    Evidence.BROKEN: "**Test did not run**: {test} ({reason}); it shows nothing.",
    Evidence.NOT_RUN: "**Test not run**: {test} ({reason}).",
}
WORDS = {
    Evidence.REPRODUCED: "reproduced",
    Evidence.INTRODUCED: "proven in new code",
    Evidence.FAILS_AT_BASE: "fails at base",
    Evidence.NOT_REPRODUCED: "not reproduced",
    Evidence.BROKEN: "broken",
    Evidence.NOT_RUN: "not run",
}
"""Each verdict in a few words, for a table or a terminal line."""
FAILING = (Evidence.REPRODUCED, Evidence.INTRODUCED, Evidence.FAILS_AT_BASE)
"""The verdicts of a test that fails at the head."""
SET_ASIDE = "**Test ruled not to test its claim**: {test} ({why}); its runs prove nothing."
RULED_RELEVANT = "**Test ruled to test its claim**: {why}."
NOT_RELEVANT = "ruled not to test its claim"


def proof(
    result: FindingOutcome, *, test_chars: int = TEST_CHARS, output_lines: int = OUTPUT_LINES
) -> list[str]:
    """The blocks that tell what the finding's test showed (none if it had no test run): at
    most `test_chars` of its test and `output_lines` of each of its outputs."""
    verification = result.verification
    if verification is None:
        return []
    test = code(verification.test)
    reason = inline(verification.reason, 200)
    why = inline((verification.relevance or "").rstrip(". "), 300)
    if verification.relevant is False:
        blocks = [SET_ASIDE.format(test=test, why=why)]
    else:
        blocks = [_HEADLINE[verification.verdict].format(test=test, reason=reason)]
        if verification.relevant:
            blocks.append(RULED_RELEVANT.format(why=why))
    reproduction = result.finding.reproduction
    if reproduction is not None and reproduction.path == verification.test:
        shown = _whole(reproduction.content.splitlines(), test_chars)
        language = fence_language(reproduction.path)
        blocks.append(_details(f"The test, {test}", code_block(shown, language)))
    if verification.verdict in FAILING and verification.relevant is not False:
        at_head = output(verification.output_tail, output_lines)
        blocks.append(_details("How it fails at the head", at_head))
        if verification.verdict is not Evidence.REPRODUCED and verification.base_output_tail:
            at_base = output(verification.base_output_tail, output_lines)
            blocks.append(_details("How it fails at the base", at_base))
    return blocks


def fix_check(result: FindingOutcome) -> list[str]:
    """Whether the finding's test passes with its fix; on a finding left without one, that
    the patch conceded was refused as its test still fails (nothing if none was checked)."""
    if result.fix_verified is None:
        return []
    if result.resolution is not Resolution.FIXED:
        if result.fix_verified:
            return []
        return ["**Patch refused**: the finding's test still fails with the coder's patch."]
    if result.fix_verified:
        return ["**Fix verified**: the finding's test passes with this patch."]
    return ["**Fix not verified**: the finding's test still fails with this patch."]


def verdict(result: FindingOutcome) -> str:
    """The test's verdict in a word or three, for a table or a terminal line ("" if none)."""
    if result.verification is None:
        return ""
    shown = WORDS[result.verification.verdict]
    if result.verification.relevant is False:
        shown = NOT_RELEVANT
    fixed = result.resolution is Resolution.FIXED
    if result.fix_verified is True and fixed:
        shown += ", fix verified"
    elif result.fix_verified is False:
        shown += ", fix fails" if fixed else ", patch fails"
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


def _whole(lines: list[str], chars: int) -> list[str]:
    """The test's lines, whole, up to `chars`; then how many more there are."""
    shown: list[str] = []
    used = 0
    for n, line in enumerate(lines):
        used += len(line) + 1
        if used > chars:
            return [*shown, f"… {len(lines) - n} more lines"]
        shown.append(line)
    return shown


def output(tail: str, most: int = OUTPUT_LINES) -> str:
    """The end of what a test printed, in a code block nothing inside can close: its last
    :data:`OUTPUT_LINES`, or the last `most` of those and how many more there are."""
    lines = tail.splitlines()[-OUTPUT_LINES:]
    shown = [clip(line, LINE_CHARS) for line in lines[len(lines) - most :]] if most else []
    cut = [f"… {counted(len(lines) - len(shown), 'line')} cut"] if len(shown) < len(lines) else []
    return code_block([*cut, *shown] or ["(no output)"])


def _details(summary: str, body: str) -> str:
    # A blank line after the summary, so that GitHub renders the block inside as Markdown.
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"
