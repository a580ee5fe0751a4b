"""Reviews to publish and ways to read what publishing made of them, shared by the tests of
:mod:`app.publishing`: a finding's result, a unit, a published review, and its comments,
table and fences read back as a reader sees them."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.diff import Diff
from agents.models.llm import Role, Usage
from agents.outcome import (
    Consensus,
    FindingOutcome,
    IntendedBy,
    Message,
    MessageKind,
    Outcome,
    Resolution,
    StopReason,
    Transcript,
)
from agents.protocol import Citation, Finding, Patch, Severity
from agents.review import Review
from agents.verification import Verification
from app.bodies import ReviewComment, ReviewDraft
from app.publishing.plan import plan
from app.publishing.publication import Publication, RunInfo
from policies.arbitration import ArbitrationTrigger

BIG, NOTES, ADDED, NEW = "src/big.py", "docs/notes.txt", "src/added.py", "src/new_name.py"

# A real `git diff -M` (git 2.x): a binary file, a last line without a newline, a new file,
# a file with two hunks, a deleted file, a pure rename (no hunks) and a rename with changes.
CORPUS = (
    "diff --git a/assets/logo.png b/assets/logo.png\n"
    "index c866266..5663091 100644\n"
    "Binary files a/assets/logo.png and b/assets/logo.png differ\n"
    "diff --git a/docs/notes.txt b/docs/notes.txt\n"
    "index b9e9ab4..b8d2680 100644\n"
    "--- a/docs/notes.txt\n"
    "+++ b/docs/notes.txt\n"
    "@@ -1,3 +1,4 @@\n"
    " alpha\n"
    "-beta\n"
    "-gamma\n"
    "\\ No newline at end of file\n"
    "+BETA\n"
    "+gamma\n"
    "+delta\n"
    "\\ No newline at end of file\n"
    "diff --git a/src/added.py b/src/added.py\n"
    "new file mode 100644\n"
    "index 0000000..541e32a\n"
    "--- /dev/null\n"
    "+++ b/src/added.py\n"
    "@@ -0,0 +1,2 @@\n"
    "+VALUE = 1\n"
    "+OTHER = 2\n"
    "diff --git a/src/big.py b/src/big.py\n"
    "index bab081f..b8ddf4e 100644\n"
    "--- a/src/big.py\n"
    "+++ b/src/big.py\n"
    "@@ -2,8 +2,9 @@ line 1\n"
    " line 2\n"
    " line 3\n"
    " line 4\n"
    "-line 5\n"
    "+line 5 changed\n"
    " line 6\n"
    "+inserted after 6\n"
    " line 7\n"
    " line 8\n"
    " line 9\n"
    "@@ -27,12 +28,11 @@ line 26\n"
    " line 27\n"
    " line 28\n"
    " line 29\n"
    "-line 30\n"
    "+line 30 changed\n"
    " line 31\n"
    " line 32\n"
    " line 33\n"
    " line 34\n"
    "-line 35\n"
    " line 36\n"
    " line 37\n"
    " line 38\n"
    "diff --git a/src/gone.py b/src/gone.py\n"
    "deleted file mode 100644\n"
    "index ea06556..0000000\n"
    "--- a/src/gone.py\n"
    "+++ /dev/null\n"
    "@@ -1,3 +0,0 @@\n"
    "-import os\n"
    "-\n"
    "-print(os.getcwd())\n"
    "diff --git a/src/util.py b/src/helpers.py\n"
    "similarity index 100%\n"
    "rename from src/util.py\n"
    "rename to src/helpers.py\n"
    "diff --git a/src/old_name.py b/src/new_name.py\n"
    "similarity index 92%\n"
    "rename from src/old_name.py\n"
    "rename to src/new_name.py\n"
    "index 857b16d..901a708 100644\n"
    "--- a/src/old_name.py\n"
    "+++ b/src/new_name.py\n"
    "@@ -8,7 +8,7 @@ def f2():\n"
    "     return 2\n"
    " \n"
    " def f3():\n"
    "-    return 3\n"
    "+    return 33\n"
    " \n"
    " def f4():\n"
    "     return 4\n"
)
DIFF = Diff.parse(CORPUS)
GONE, LOGO, HELPERS, OLD = "src/gone.py", "assets/logo.png", "src/helpers.py", "src/old_name.py"
HEAD = "0123456789abcdef0123456789abcdef01234567"

DEFAULT_CONSENSUS = {
    Resolution.FIXED: Consensus.UNANIMOUS,
    Resolution.WITHDRAWN: Consensus.UNANIMOUS,
    Resolution.WARNING: Consensus.ARBITER,
    Resolution.OPEN: Consensus.UNRESOLVED,
    Resolution.INTENDED: Consensus.UNANIMOUS,
}
INTENT = IntendedBy(citations=[Citation(quote="Retries now stop at three.")])
"""What a finding that ended intended cites, by default."""


@dataclass
class Fenced:
    info: str
    fence: str
    lines: list[str]


RUN = RunInfo(run_id="run-42", head_sha=HEAD, details_url="https://tiebreak.example/runs/run-42")


def result(
    fid: str = "F1",
    path: str = BIG,
    start: int = 5,
    end: int | None = None,
    *,
    resolution: Resolution = Resolution.FIXED,
    severity: Severity = Severity.MAJOR,
    claim: str | None = None,
    evidence: str = "",
    fix: Patch | None = None,
    replacement: str = "fixed = True\n",
    consensus: Consensus | None = None,
    trigger: ArbitrationTrigger | None = None,
    warning: str = "Watch the retry count.",
    note: str = "the arbiter's call failed",
    rounds: int = 1,
    tokens: int = 100,
    intended: IntendedBy = INTENT,
    verification: Verification | None = None,
) -> FindingOutcome:
    """One finding's outcome, consistent by default: a fixed finding carries a patch on its
    own lines, an accepted one a warning, an unresolved one a note, an intended one its
    evidence."""
    end = end or start
    if resolution is Resolution.FIXED and fix is None:
        fix = Patch(path=path, start_line=start, end_line=end, replacement=replacement)
    return FindingOutcome(
        finding=Finding(
            id=fid,
            path=path,
            start_line=start,
            end_line=end,
            severity=severity,
            claim=claim or f"Finding {fid} on {path}:{start}.",
            evidence=evidence,
        ),
        raised_by="tester",
        consensus=consensus or DEFAULT_CONSENSUS[resolution],
        resolution=resolution,
        patch=fix if resolution is Resolution.FIXED else None,
        warning=warning if resolution is Resolution.WARNING else None,
        trigger=trigger,
        note=note if resolution is Resolution.OPEN else None,
        intended=intended if resolution is Resolution.INTENDED else None,
        verification=verification,
        closed_in_round=rounds,
        tokens=tokens,
    )


def says(
    fid: str, kind: MessageKind, text: str, *, patch: Patch | None = None, round: int = 1
) -> Message:
    speaker = {
        MessageKind.FINDING: "tester",
        MessageKind.ACCEPT: "tester",
        MessageKind.REJECT: "tester",
        MessageKind.CONCEDE: "coder",
        MessageKind.DISPUTE: "coder",
        MessageKind.INTENDED: "coder",
        MessageKind.RULING: "arbiter",
    }.get(kind, "system")
    return Message(round=round, speaker=speaker, kind=kind, text=text, finding_id=fid, patch=patch)


def unit(
    *findings: FindingOutcome,
    unit_id: str = "u1",
    messages: Sequence[Message] = (),
    usage: dict[Role, Usage] | None = None,
    dropped: int = 0,
) -> Outcome:
    """A unit's outcome; each finding's thread opens with the tester raising it."""
    raised = [says(f.finding.id, MessageKind.FINDING, f.finding.claim, round=0) for f in findings]
    return Outcome(
        unit_id=unit_id,
        stop=StopReason.SETTLED if findings else StopReason.NO_FINDINGS,
        findings=list(findings),
        rounds=max((f.closed_in_round for f in findings), default=0),
        calls=1 + 2 * len(findings),
        failed_turns=0,
        dropped_findings=dropped,
        usage_by_role=usage
        or {
            Role.TESTER: Usage(input_tokens=1_000, output_tokens=200),
            Role.CODER: Usage(input_tokens=800, output_tokens=300),
        },
        budget_history={},
        transcript=Transcript(messages=[*raised, *messages]),
    )


def publish(*units: Outcome, run: RunInfo = RUN, diff: Diff = DIFF) -> Publication:
    return plan(Review(units=list(units)), diff, run=run)


def draft(publication: Publication) -> ReviewDraft:
    assert publication.review is not None
    return publication.review


def the_comment(publication: Publication) -> ReviewComment:
    (comment,) = draft(publication).comments
    return comment


def read_fences(body: str) -> tuple[list[Fenced], list[str], bool]:
    """CommonMark fenced code blocks at top level: the blocks, the lines outside any block,
    and whether a fence was left open (swallowing the rest of the body)."""
    blocks: list[Fenced] = []
    outside: list[str] = []
    current: Fenced | None = None
    for line in body.split("\n"):
        if current is None:
            opening = re.match(r"^ {0,3}(`{3,}|~{3,})(.*)$", line)
            if opening and not (opening[1][0] == "`" and "`" in opening[2]):
                current = Fenced(opening[2].strip(), opening[1], [])
            else:
                outside.append(line)
        elif re.match(
            rf"^ {{0,3}}{re.escape(current.fence[0])}{{{len(current.fence)},}}\s*$", line
        ):
            blocks.append(current)
            current = None
        else:
            current.lines.append(line)
    return blocks, outside, current is not None


def visible_text(body: str) -> str:
    """The body's text outside code: where mentions ping and HTML acts."""
    _, outside, unclosed = read_fences(body)
    assert not unclosed
    return re.sub(r"<code>.*?</code>", "", "\n".join(outside), flags=re.DOTALL)


def raw_html_tags(body: str) -> list[str]:
    """Raw HTML outside code blocks that is not Tiebreak's own."""
    _, outside, _ = read_fences(body)
    text = "\n".join(outside)
    return [
        tag
        for tag in re.findall(r"<[!/A-Za-z][^>\n]*>?", text)
        if tag
        not in (
            "<code>",
            "</code>",
            "<sub>",
            "</sub>",
            "<details>",
            "</details>",
            "<summary>",
            "</summary>",
            "<!-- tiebreak:summary -->",
        )
        and not re.fullmatch(r"<!-- tiebreak:run:[\w.:/#@+-]+ -->", tag)
        and not re.fullmatch(
            r"<!-- tiebreak:finding:[0-9a-f]{16}:[a-z0-9_+]*(?::[A-Za-z0-9_.~/%-]+)? -->", tag
        )
    ]


def table_rows(summary: str) -> list[list[str]]:
    """The cells of each data row of the findings table."""
    rows = [line for line in summary.split("\n") if line.startswith("| ") and "---" not in line]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows[1:]]
