"""Publishing a review: what a user sees on GitHub, and that GitHub would accept all of it.

GitHub rejects a whole review (422) if one inline comment is off the diff, so the comments
are checked here by an independent reading of the raw diff text, never by the code under
test. The Markdown checks read bodies the way GitHub's renderer would: where code fences
open and close, what text is left outside code, what raw HTML survives.
"""

import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from pydantic import ValidationError

from agents.models.llm import Role, Usage
from agents.models.scripted import ScriptedLLM, by_role
from agents.outcome import (
    Consensus,
    FindingOutcome,
    MessageKind,
    Outcome,
    Resolution,
    StopReason,
    Transcript,
)
from agents.protocol import Patch, Severity
from agents.review import review_diff
from app.bodies import (
    AnnotationLevel,
    CheckRunOutput,
    Conclusion,
    ReviewComment,
    ReviewDraft,
    ReviewEvent,
)
from app.publishing import check_runs, markdown
from app.publishing.markers import run_id_of
from app.publishing.plan import plan
from app.publishing.publication import (
    ANNOTATIONS_PER_REQUEST,
    CheckRunResult,
    LabelAction,
    Publication,
    RunInfo,
)
from policies.arbitration import ArbitrationTrigger
from tests.kits.plan import (
    ADDED,
    BIG,
    CORPUS,
    DIFF,
    GONE,
    HEAD,
    HELPERS,
    LOGO,
    NEW,
    NOTES,
    OLD,
    RUN,
    draft,
    publish,
    raw_html_tags,
    read_fences,
    result,
    says,
    table_rows,
    the_comment,
    unit,
    visible_text,
)
from tests.scenarios.debates import accept, answers, concede, dispute, evaluations, report
from tests.scenarios.debates import finding as raw_finding
from tests.scenarios.debates import patch as raw_patch

# -- builders ---------------------------------------------------------------------------------


def broken_unit(
    unit_id: str = "u2", error: str = "the tester could not report findings"
) -> Outcome:
    return Outcome(
        unit_id=unit_id,
        stop=StopReason.SEED_FAILED,
        findings=[],
        rounds=0,
        calls=3,
        failed_turns=3,
        dropped_findings=0,
        usage_by_role={Role.TESTER: Usage(input_tokens=500)},
        budget_history={},
        transcript=Transcript(),
        error=error,
    )


# -- an independent reading of the diff and of Markdown --------------------------------------


def right_side_hunks(diff_text: str) -> dict[str, list[set[int]]]:
    """Each path's hunks as sets of RIGHT-side (new-file) line numbers, read from raw text."""
    files: dict[str, list[set[int]]] = {}
    path = ""
    old_left = new_left = right = 0
    hunk: set[int] = set()
    for line in diff_text.split("\n"):
        if old_left or new_left:
            tag = line[:1]
            if tag == "\\":
                continue
            if tag in (" ", "-"):
                old_left -= 1
            if tag in (" ", "+"):
                new_left -= 1
                hunk.add(right)
                right += 1
            continue
        if header := re.match(r"diff --git a/(\S+) b/(\S+)$", line):
            path = header[2]
            files[path] = []
        elif at := re.match(r"@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line):
            old_left = int(at[1] or 1)
            right, new_left = int(at[2]), int(at[3] or 1)
            hunk = set()
            files[path].append(hunk)
    return {p: [h for h in hunks if h] for p, hunks in files.items()}


HUNKS = right_side_hunks(CORPUS)


def comment_problems(comment: ReviewComment, hunks: dict[str, list[set[int]]]) -> list[str]:
    """Why GitHub would answer 422 to a review holding this comment: [] if it would not.
    (What the model itself refuses, such as a `start_side` without a `start_line`, it cannot
    hold; that it is sent as GitHub takes it is the gateway's tests'.)"""
    problems = []
    if comment.side != "RIGHT":
        problems.append("side is not RIGHT")
    if not comment.body.strip():
        problems.append("blank body")
    line, start = comment.line, comment.start_line
    hunk = next((h for h in hunks.get(comment.path, []) if line in h), None)
    if hunk is None:
        problems.append("line must be part of the diff")
    elif start is not None:
        if comment.start_side != "RIGHT":
            problems.append("start_side is not RIGHT")
        if not start < line:
            problems.append("start_line must precede line")
        if not all(n in hunk for n in range(start, line + 1)):
            problems.append("start line must be part of the same hunk as the line")
    return problems


def git_lines(replacement: str) -> list[str]:
    return replacement.removesuffix("\n").split("\n") if replacement else []


def everything(publication: Publication) -> list[str]:
    """Every piece of Markdown the publication shows a user."""
    texts = [publication.check.summary, publication.check.text, publication.summary]
    if publication.review is not None:
        texts += [publication.review.body, *(c.body for c in publication.review.comments)]
    return texts


# -- conclusion, label, event -----------------------------------------------------------------

FIXED = result("F1", resolution=Resolution.FIXED)
WARNED = result("F2", BIG, 30, resolution=Resolution.WARNING)
WITHDRAWN = result("F3", BIG, 31, resolution=Resolution.WITHDRAWN)
OPEN = result("F4", BIG, 32, resolution=Resolution.OPEN)


@pytest.mark.parametrize(
    ("units", "conclusion", "label", "event", "title"),
    [
        pytest.param([unit()], Conclusion.SUCCESS, LabelAction.REMOVE, None, "No findings"),
        pytest.param(
            [unit(WITHDRAWN)],
            Conclusion.SUCCESS,
            LabelAction.REMOVE,
            None,  # nothing to say inline: the summary lists it
            "No open findings (1 withdrawn)",
            id="all-withdrawn",
        ),
        pytest.param(
            [unit(FIXED, WITHDRAWN)],
            Conclusion.NEUTRAL,
            LabelAction.REMOVE,
            ReviewEvent.COMMENT,
            "1 fix suggested",
            id="fix",
        ),
        pytest.param(
            [unit(WARNED)],
            Conclusion.NEUTRAL,
            LabelAction.REMOVE,
            ReviewEvent.COMMENT,
            "1 warning",
            id="warning",
        ),
        pytest.param(
            [unit(FIXED, WARNED, OPEN)],
            Conclusion.ACTION_REQUIRED,
            LabelAction.ADD,
            ReviewEvent.REQUEST_CHANGES,
            "1 unresolved finding · 1 fix suggested · 1 warning",
            id="unresolved",
        ),
        pytest.param(
            [broken_unit()],
            Conclusion.ACTION_REQUIRED,
            LabelAction.REMOVE,
            None,
            "1 unit not reviewed",
            id="failed-unit",
        ),
        pytest.param(
            [unit(FIXED), broken_unit("u2"), broken_unit("u3")],
            Conclusion.ACTION_REQUIRED,
            LabelAction.REMOVE,
            ReviewEvent.COMMENT,
            "2 units not reviewed · 1 fix suggested",
            id="fix-and-failed-units",
        ),
    ],
)
def test_the_conclusion_label_and_event_follow_the_outcome(
    units: list[Outcome],
    conclusion: Conclusion,
    label: LabelAction,
    event: ReviewEvent | None,
    title: str,
) -> None:
    run = RUN.model_copy(update={"event_on_unresolved": ReviewEvent.REQUEST_CHANGES})

    publication = publish(*units, run=run)

    assert publication.check.conclusion is conclusion
    assert publication.check.title == title
    assert publication.label is label
    assert publication.label_name == "Unresolved"
    assert (publication.review.event if publication.review else None) is event
    assert title in publication.check.summary


@pytest.mark.parametrize("setting", list(ReviewEvent))
def test_the_event_is_a_comment_unless_something_is_unresolved(setting: ReviewEvent) -> None:
    run = RUN.model_copy(update={"event_on_unresolved": setting, "label": "needs-human"})

    assert draft(publish(unit(FIXED, WARNED, WITHDRAWN), run=run)).event is ReviewEvent.COMMENT
    unresolved = publish(unit(OPEN), run=run)
    assert draft(unresolved).event is setting
    assert unresolved.label_name == "needs-human"


def test_tiebreak_can_never_approve() -> None:
    assert "APPROVE" not in {e.value for e in ReviewEvent}
    with pytest.raises(ValidationError):
        RunInfo(run_id="r", head_sha=HEAD, event_on_unresolved="APPROVE")
    with pytest.raises(ValidationError):
        ReviewDraft(commit_id=HEAD, body="x", event="APPROVE", comments=[])
    assert draft(publish(unit(FIXED))).event is ReviewEvent.COMMENT


# -- inline comments --------------------------------------------------------------------------


def test_a_one_line_comment_has_no_start_and_a_ranged_one_starts_on_the_right() -> None:
    single = result("F1", BIG, 5, resolution=Resolution.OPEN, severity=Severity.BLOCKER)
    ranged = result("F2", BIG, 5, 7, resolution=Resolution.OPEN)

    review = draft(publish(unit(single, ranged)))

    assert review.commit_id == HEAD
    first, second = review.comments
    assert (first.path, first.line, first.side, first.start_line, first.start_side) == (
        BIG,
        5,
        "RIGHT",
        None,
        None,
    )
    assert (second.path, second.line, second.side, second.start_line, second.start_side) == (
        BIG,
        7,
        "RIGHT",
        5,
        "RIGHT",
    )


@pytest.mark.parametrize(
    "replacement",
    [
        pytest.param("line 5 fixed\n", id="one-line"),
        pytest.param("a\nb", id="no-trailing-newline"),
        pytest.param("\n", id="one-blank-line"),
        pytest.param("  indented\n\ttabbed\n", id="whitespace"),
        pytest.param('"""\n```python\nexample()\n```\n"""\n', id="triple-backticks"),
        pytest.param("FENCE = '``````'\n", id="six-backticks"),
        pytest.param("`tick`\n~~~\n", id="single-backticks-and-tildes"),
        pytest.param("@octocat <details> <!-- x\n", id="mention-and-html-kept-verbatim"),
    ],
)
def test_the_suggestion_commits_exactly_the_patch(replacement: str) -> None:
    fix = Patch(path=BIG, start_line=5, end_line=7, replacement=replacement)

    comment = the_comment(publish(unit(result("F1", BIG, 5, 7, fix=fix))))

    blocks, _, unclosed = read_fences(comment.body)
    assert not unclosed
    (block,) = [b for b in blocks if b.info == "suggestion"]
    assert block.lines == git_lines(replacement)
    longest = max((len(r) for r in re.findall(r"`+", replacement)), default=0)
    assert len(block.fence) == max(3, longest + 1)


def test_an_empty_replacement_is_an_empty_suggestion_that_deletes_the_lines() -> None:
    fix = Patch(path=BIG, start_line=6, end_line=7, replacement="")

    comment = the_comment(publish(unit(result("F1", BIG, 6, 7, fix=fix))))

    assert "```suggestion\n```" in comment.body
    blocks, _, _ = read_fences(comment.body)
    assert [b.lines for b in blocks if b.info == "suggestion"] == [[]]
    assert (comment.start_line, comment.line) == (6, 7)


def test_a_fix_is_anchored_on_the_lines_its_patch_replaces_not_the_finding() -> None:
    # Raised on an unchanged line outside the hunks; fixed on lines of the second hunk.
    fix = Patch(path=BIG, start_line=30, end_line=32, replacement="x = 1\n")
    moved = result("F1", BIG, 20, resolution=Resolution.FIXED, fix=fix)

    publication = publish(unit(moved))

    comment = the_comment(publication)
    assert (comment.path, comment.start_line, comment.line) == (BIG, 30, 32)
    assert "Raised on <code>src/big.py:20</code>" in comment.body
    assert "Findings on lines outside the diff" not in publication.summary
    (annotation,) = publication.check.annotation_batches[0]
    assert (annotation.start_line, annotation.end_line) == (30, 32)


def test_a_fix_whose_patch_is_outside_the_diff_is_written_into_the_body() -> None:
    # The finding's own line could take a comment, but a suggestion there would replace
    # the wrong lines: the fix is shown in the body, not offered for commit.
    fix = Patch(path=BIG, start_line=20, end_line=21, replacement="x = 1\n")
    publication = publish(unit(result("F1", BIG, 5, fix=fix, claim="The drifted fix.")))

    body = publication.summary
    assert publication.review is None
    assert "The drifted fix." in body
    assert "<code>src/big.py:20-21</code> is not within one hunk of the diff" in body
    blocks, _, _ = read_fences(body)
    assert [b.lines for b in blocks] == [["x = 1"]]
    assert all(b.info != "suggestion" for b in blocks)


def test_a_warning_shows_the_ruling_and_the_tester_s_losing_argument() -> None:
    warned = result(
        "F1",
        BIG,
        5,
        7,
        resolution=Resolution.WARNING,
        trigger=ArbitrationTrigger.EXCHANGE_LIMIT,
        warning="Retries can double-charge if the gateway times out.",
    )
    thread = [
        says("F1", MessageKind.DISPUTE, "Retries are idempotent.", round=1),
        says("F1", MessageKind.REJECT, "Only with an idempotency key.", round=1),
        says("F1", MessageKind.DISPUTE, "The gateway dedups within a minute.", round=2),
        says("F1", MessageKind.REJECT, "Timeouts can exceed a minute.", round=2),
        says("F1", MessageKind.RULING, "The risk is real but rare.", round=2),
    ]

    comment = the_comment(publish(unit(warned, messages=thread)))

    assert (comment.start_line, comment.line) == (5, 7)
    body = comment.body
    assert "accepted with a warning" in body
    assert "the arbiter ruled (too many exchanges on this finding)" in body
    assert "Retries can double-charge if the gateway times out." in body
    assert "The risk is real but rare." in body
    assert "Overruled: the tester's position**\nTimeouts can exceed a minute." in body
    assert "Only with an idempotency key." not in body  # the last word, not the first
    assert "The gateway dedups within a minute." in body
    assert read_fences(body)[0] == []  # nothing to commit


def test_a_warning_without_a_rejection_names_the_claim_as_the_losing_side() -> None:
    warned = result("F1", BIG, 5, resolution=Resolution.WARNING)

    body = the_comment(publish(unit(warned))).body

    assert "Overruled: the tester's position**\nThe claim above." in body


def test_an_unresolved_finding_shows_both_positions_and_why() -> None:
    stuck = result(
        "F1",
        BIG,
        30,
        resolution=Resolution.OPEN,
        severity=Severity.BLOCKER,
        trigger=ArbitrationTrigger.LOOP,
        note="the arbiter's budget is spent",
    )
    last_patch = Patch(path=BIG, start_line=30, end_line=30, replacement="line = 30\n")
    thread = [
        says("F1", MessageKind.DISPUTE, "The value is validated upstream."),
        says("F1", MessageKind.REJECT, "Upstream validation was removed in this diff."),
        says("F1", MessageKind.CONCEDE, "Then this patch covers it.", patch=last_patch, round=2),
        says("F1", MessageKind.REJECT, "The patch misses negative values.", round=2),
    ]

    publication = publish(unit(stuck, messages=thread))

    body = the_comment(publication).body
    assert "unresolved · no agreement (the debate went in circles)" in body
    assert "The tester's position**\nThe patch misses negative values." in body
    assert "The coder's position**\nThen this patch covers it." in body
    assert "Why it is unresolved**\nthe arbiter's budget is spent" in body
    blocks, _, _ = read_fences(body)
    assert [(b.info, b.lines) for b in blocks] == [("", ["line = 30"])]  # shown, not committable
    assert publication.label is LabelAction.ADD


def test_a_finding_the_coder_never_answered_says_so() -> None:
    body = the_comment(publish(unit(result("F1", resolution=Resolution.OPEN)))).body

    assert "The coder's position**\nThe coder did not answer." in body


def test_comments_are_ordered_by_severity_then_path_and_line() -> None:
    findings = [
        result("F1", NOTES, 2, severity=Severity.NIT, resolution=Resolution.OPEN),
        result("F2", BIG, 30, severity=Severity.BLOCKER, resolution=Resolution.OPEN),
        result("F3", NEW, 11, severity=Severity.MAJOR, resolution=Resolution.OPEN),
        result("F4", BIG, 5, severity=Severity.BLOCKER, resolution=Resolution.OPEN),
        result("F5", BIG, 8, severity=Severity.MAJOR, resolution=Resolution.OPEN),
    ]

    comments = draft(publish(unit(*findings))).comments

    assert [(c.path, c.line) for c in comments] == [
        (BIG, 5),
        (BIG, 30),
        (BIG, 8),
        (NEW, 11),
        (NOTES, 2),
    ]


def test_finding_ids_are_qualified_by_unit_when_there_are_several() -> None:
    first = unit(result("F1", BIG, 5), unit_id="u1")
    second = unit(result("F1", NEW, 11), unit_id="u2")

    publication = publish(first, second)

    assert [row[0] for row in table_rows(publication.check.summary)] == ["u1/F1", "u2/F1"]
    assert {c.path: "Tiebreak · u1/F1" in c.body for c in draft(publication).comments} == {
        BIG: True,
        NEW: False,
    }
    assert [r[0] for r in table_rows(publish(first).check.summary)] == ["F1"]


# -- model text cannot act on the page --------------------------------------------------------


def test_mentions_in_model_text_ping_nobody() -> None:
    hostile = "cc @octocat and @github/security, mail ops@example.com"
    fixed = result("F1", BIG, 5, claim=hostile, evidence=hostile)
    warned = result("F2", BIG, 30, resolution=Resolution.WARNING, warning=hostile)
    stuck = result("F3", BIG, 12, resolution=Resolution.OPEN, claim=hostile, note=hostile)
    thread = [
        says("F2", MessageKind.RULING, hostile),
        says("F3", MessageKind.DISPUTE, hostile),
        says("F3", MessageKind.REJECT, hostile),
    ]

    publication = publish(unit(fixed, warned, stuck, messages=thread), broken_unit(error=hostile))

    for text in everything(publication):
        assert re.findall(r"@[A-Za-z0-9]", visible_text(text)) == []
    # The words are all still there for a reader.
    assert "cc @\u200doctocat and @\u200dgithub/security" in draft(publication).comments[0].body


LURES = (
    "Pixel: ![t](https://evil.example/t.png) and ![](//evil.example/p.gif). "
    'Phish: [click](https://evil.example/login "sign in"), [ref][1], <https://evil.example/a>, '
    "https://evil.example/b?x=1, www.evil.example/c and HTTP://EVIL.EXAMPLE/D.\n\n"
    "[1]: https://evil.example/ref"
)
"""Every way Markdown and GitHub turn text into a link or an image."""


def test_model_text_can_neither_embed_an_image_nor_link_anywhere() -> None:
    fixed = result("F1", BIG, 5, claim=LURES, evidence=LURES)
    warned = result("F2", BIG, 30, resolution=Resolution.WARNING, warning=LURES)
    stuck = result("F3", BIG, 12, resolution=Resolution.OPEN, claim=LURES, note=LURES)
    thread = [says("F2", MessageKind.RULING, LURES), says("F3", MessageKind.DISPUTE, LURES)]

    publication = publish(unit(fixed, warned, stuck, messages=thread), broken_unit(error=LURES))

    for text in everything(publication):
        rendered = MarkdownIt("commonmark").render(text)
        hrefs = re.findall(r"<a href=\"([^\"]*)\"", rendered)
        assert [h for h in hrefs if "evil" in h.lower()] == []
        assert "<img" not in rendered
        # GitHub also links a bare address by itself (a scheme's or `www.`), never in code.
        words = re.sub(r"<[^>]*>", "", re.sub(r"<code>.*?</code>", "", rendered))
        assert re.findall(r"(?i)[a-z]+://|\bwww\.", words) == []
    # A reader still sees every address, as code.
    body = draft(publication).comments[0].body
    assert "<code>https://evil.example/t.png</code>" in body
    assert "<code>www.evil.example/c</code>" in body


def test_inline_code_in_a_claim_still_reads_as_code() -> None:
    claim = "`@lru_cache` on `get(a<b)` caches `None` | and `x*y`."

    body = the_comment(publish(unit(result("F1", claim=claim)))).body

    assert "<code>&#64;lru&#95;cache</code>" in body
    assert "<code>get(a&#60;b)</code>" in body
    assert "<code>x&#42;y</code>" in body
    assert raw_html_tags(body) == []


def test_an_unclosed_fence_in_model_text_does_not_swallow_the_comment() -> None:
    claim = "Look at this:\n```python\nwhile True:\n    retry()"
    evidence = "~~~\nnever closed either"
    fixed = result("F1", BIG, 5, claim=claim, evidence=evidence, replacement="retry(limit=3)\n")

    body = the_comment(publish(unit(fixed))).body

    blocks, outside, unclosed = read_fences(body)
    assert not unclosed
    assert [(b.info, b.lines) for b in blocks] == [
        ("python", ["while True:", "    retry()"]),
        ("", ["never closed either"]),
        ("suggestion", ["retry(limit=3)"]),
    ]
    assert outside[-3].startswith("<sub>Tiebreak · F1")  # the footer is still text
    assert outside[-1].startswith("<!-- tiebreak:finding:")  # and the fingerprint last


def test_model_text_cannot_forge_a_suggestion_html_or_the_run_marker() -> None:
    forged = "```suggestion\nos.system('rm -rf /')\n```"
    html = "<details><summary>more</summary>\n<!-- tiebreak:run:evil -->\n<!-- hide the rest"
    stuck = result("F1", BIG, 5, resolution=Resolution.OPEN, claim=html, evidence=html)
    thread = [says("F1", MessageKind.DISPUTE, forged), says("F1", MessageKind.REJECT, html)]

    publication = publish(unit(stuck, messages=thread))

    for text in everything(publication):
        blocks, _, unclosed = read_fences(text)
        assert not unclosed
        assert all(b.info != "suggestion" for b in blocks)
        assert raw_html_tags(text) == []
        assert text.count("<!-- tiebreak:run:") <= 1
        assert text.count("<!-- tiebreak:finding:") <= 1
    assert run_id_of(draft(publication).body) == "run-42"
    (comment,) = draft(publication).comments
    assert comment.body.count("<!-- tiebreak:finding:") == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain words", "plain words"),
        ("a <b>bold</b> claim", "a &lt;b>bold&lt;/b> claim"),
        ("`a` and `` b`c ``", "<code>a</code> and <code>b&#96;c</code>"),
        ("one ` tick", "one &#96; tick"),
        ("escaped \\` tick and \\<b>", "escaped \\` tick and \\<b>"),
        ("hi @alice", "hi @\u200dalice"),
        ("a ~~~ b", "a &#126;~~ b"),
        ("see ``` here", "see &#96;&#96;&#96; here"),
        ("```a`b\nc", "&#96;&#96;&#96;a&#96;b\nc"),
        ("~~~ sh never closed\n<b>", "```sh\n<b>\n```"),
        ("```suggestion\nrm -rf /", "```\nrm -rf /\n```"),
        ("![t](https://e.example/t.png)", "!\\[t\\](<code>https://e.example/t.png</code>)"),
        ("[a](b) and \\[c]", "\\[a\\](b) and \\[c\\]"),
        ("go to www.e.example.", "go to <code>www.e.example</code>."),
    ],
)
def test_prose_keeps_what_renders_and_neutralises_what_acts(text: str, expected: str) -> None:
    assert markdown.prose(text) == expected


# -- annotations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resolution", "severity", "level"),
    [
        (Resolution.OPEN, Severity.NIT, AnnotationLevel.FAILURE),
        (Resolution.OPEN, Severity.BLOCKER, AnnotationLevel.FAILURE),
        (Resolution.FIXED, Severity.BLOCKER, AnnotationLevel.WARNING),
        (Resolution.FIXED, Severity.MAJOR, AnnotationLevel.WARNING),
        (Resolution.FIXED, Severity.MINOR, AnnotationLevel.NOTICE),
        (Resolution.FIXED, Severity.NIT, AnnotationLevel.NOTICE),
        (Resolution.WARNING, Severity.MAJOR, AnnotationLevel.WARNING),
        (Resolution.WARNING, Severity.MINOR, AnnotationLevel.NOTICE),
    ],
)
def test_annotation_levels(
    resolution: Resolution, severity: Severity, level: AnnotationLevel
) -> None:
    found = result("F1", BIG, 5, resolution=resolution, severity=severity, claim="x" * 600)

    ((annotation,),) = publish(unit(found)).check.annotation_batches

    assert annotation.annotation_level is level
    assert (annotation.path, annotation.start_line, annotation.end_line) == (BIG, 5, 5)
    assert len(annotation.title) <= 255
    assert annotation.message.startswith("x" * 600)


def test_withdrawn_and_off_diff_findings_get_no_annotation() -> None:
    publication = publish(unit(WITHDRAWN, result("F9", BIG, 12, resolution=Resolution.OPEN)))

    assert publication.check.annotation_batches == []
    (output,) = publication.check.outputs()
    assert output.text == publication.check.text
    assert output.annotations is None


def test_120_findings_are_annotated_in_batches_of_50() -> None:
    lines = sorted(set[int]().union(*HUNKS[BIG]))
    findings = [
        result(f"F{i}", BIG, lines[i % len(lines)], resolution=Resolution.OPEN)
        for i in range(1, 121)
    ]

    publication = publish(unit(*findings), run=RUN.model_copy(update={"max_inline_comments": 120}))

    batches = publication.check.annotation_batches
    assert [len(b) for b in batches] == [50, 50, 20]
    outputs = publication.check.outputs()
    assert [len(o.annotations or []) for o in outputs] == [50, 50, 20]
    assert all(o.title == publication.check.title for o in outputs)
    assert len(draft(publication).comments) == 120
    assert ANNOTATIONS_PER_REQUEST == 50
    with pytest.raises(ValidationError):
        CheckRunResult(
            conclusion=Conclusion.NEUTRAL,
            title="t",
            summary="s",
            annotation_batches=[batches[0] + batches[2][:1]],
        )


# -- the summary ------------------------------------------------------------------------------


def test_the_summary_tables_every_finding_with_its_consensus_rounds_and_tokens() -> None:
    ruled = result(
        "F1",
        BIG,
        5,
        resolution=Resolution.FIXED,
        consensus=Consensus.ARBITER,
        trigger=ArbitrationTrigger.LOOP,
        severity=Severity.BLOCKER,
        rounds=3,
        tokens=12_345,
    )
    stuck = result(
        "F2", GONE, 1, resolution=Resolution.OPEN, trigger=ArbitrationTrigger.ROUND_LIMIT
    )
    usage = {
        Role.TESTER: Usage(input_tokens=10_000, output_tokens=1_000),
        Role.CODER: Usage(input_tokens=8_000, cache_read_input_tokens=10_000),
        Role.ARBITER: Usage(input_tokens=3_000),
    }

    publication = publish(unit(ruled, WITHDRAWN, stuck, usage=usage, dropped=2))

    summary = publication.check.summary
    big5, big31, gone1 = (f"<code>src/{p}</code>" for p in ("big.py:5", "big.py:31", "gone.py:1"))
    assert table_rows(summary) == [
        ["F1", "🔴 Blocker", big5, "fix suggested", "arbiter · loop", "3", "12,345", "inline"],
        ["F3", "🟠 Major", big31, "withdrawn", "unanimous", "1", "100", "below"],
        ["F2", "🟠 Major", gone1, "unresolved", "unresolved · round limit", "1", "100", "below"],
    ]
    assert "**3 findings** (1 with a suggested fix, 1 withdrawn, 1 unresolved)" in summary
    assert "23,000 billed tokens (tester 11,000 · coder 9,000 · arbiter 3,000)" in summary
    assert "2 findings over the proposal budget dropped" in summary
    assert "[The debate, message by message](https://tiebreak.example/runs/run-42)" in summary
    assert table_rows(publication.summary) == table_rows(summary)


@pytest.mark.parametrize(
    ("failed", "partial", "said"),
    [
        (1, 0, "(1 failed)"),
        (0, 2, "(0 failed, 2 partly refused)"),
        (1, 1, "(1 failed, 1 partly refused)"),
    ],
)
def test_the_summary_counts_failed_turns_and_turns_refused_in_part(
    failed: int, partial: int, said: str
) -> None:
    counted = unit(FIXED).model_copy(update={"failed_turns": failed, "partial_turns": partial})

    publication = publish(counted)

    assert f"3 calls {said} · " in publication.check.summary


def test_failed_units_are_listed_with_their_error() -> None:
    publication = publish(unit(FIXED), broken_unit("u2", "the tester's output was malformed"))

    for text in (publication.check.summary, publication.summary):
        assert "#### Not reviewed" in text
        assert "- Unit <code>u2</code>: the tester's output was malformed" in text
        assert "/tiebreak review" in text


def test_a_review_with_nothing_to_say_posts_no_review_but_a_green_check() -> None:
    publication = publish(unit())

    assert publication.review is None
    assert publication.check.conclusion is Conclusion.SUCCESS
    assert publication.check.text == ""
    assert publication.check.outputs() == [
        CheckRunOutput(title="No findings", summary=publication.check.summary)
    ]


def test_withdrawn_findings_are_one_line_in_the_body() -> None:
    thread = [says("F3", MessageKind.DISPUTE, "The cache is\nrebuilt on start.")]

    publication = publish(unit(FIXED, WITHDRAWN, messages=thread))

    body = publication.summary
    line = next(x for x in body.split("\n") if x.startswith("- **F3**"))
    assert WITHDRAWN.finding.claim in line
    assert "the coder: The cache is rebuilt on start." in line
    assert [c.path for c in draft(publication).comments] == [BIG]


def test_the_hidden_marker_opens_the_body_and_the_summary() -> None:
    publication = publish(unit(FIXED))

    for text in (draft(publication).body, publication.check.summary):
        assert text.split("\n")[0] == "<!-- tiebreak:run:run-42 -->"
        assert run_id_of(text) == "run-42"
    # The summary comment is found by its own marker; the run's is on its second line.
    assert publication.summary.split("\n")[:2] == [
        "<!-- tiebreak:summary -->",
        "<!-- tiebreak:run:run-42 -->",
    ]
    assert run_id_of("Some review\n<!-- tiebreak:run:run-42 -->") is None
    with pytest.raises(ValidationError):
        RunInfo(run_id="x --> <b>", head_sha=HEAD)


def test_a_huge_review_is_cut_cleanly_to_github_s_limit() -> None:
    deep = "src/" + "very_long_directory_name/" * 8
    findings = [
        result(f"F{i}", f"{deep}module_{i}.py", 3, resolution=Resolution.OPEN, claim="y" * 1_500)
        for i in range(1, 401)
    ]

    publication = publish(unit(*findings))

    summary, text, body = publication.check.summary, publication.check.text, publication.summary
    assert summary.startswith("<!-- tiebreak:run:run-42 -->")
    assert body.startswith("<!-- tiebreak:summary -->\n<!-- tiebreak:run:run-42 -->")
    for field in (summary, text, body):
        assert len(field) <= 65_535
        note = re.search(r"_Truncated: ([\d,]+) characters were cut to fit GitHub's limit", field)
        assert note is not None
        assert int(note[1].replace(",", "")) > 0
        assert "[the transcript](https://tiebreak.example/runs/run-42)" in field
        assert not read_fences(field)[2]
    kept = table_rows(summary)
    assert 0 < len(kept) < 400
    by_path = sorted(range(1, 401), key=lambda i: f"{deep}module_{i}.py")
    assert [row[0] for row in kept] == [f"F{i}" for i in by_path[: len(kept)]]
    assert all(len(row) == 8 for row in kept)  # no row cut in half


def test_fit_says_exactly_how_much_it_cut() -> None:
    pieces = ["a" * 10 + "\n"] * 10

    fitted = markdown.fit(pieces, 60, lambda cut: f"[{cut} cut]")

    assert fitted == "a" * 10 + "\n" + "a" * 10 + "\n" + "a" * 10 + "\n" + "a" * 10 + "\n[66 cut]"
    assert markdown.fit(pieces, 110, lambda cut: "never") == "".join(pieces)


def test_the_longest_possible_comment_still_fits() -> None:
    claim, evidence = "c" * 2_000, "e" * 8_000
    fixed = result(
        "F1",
        BIG,
        5,
        consensus=Consensus.ARBITER,
        replacement="r" * 40_000,
        claim=claim,
        evidence=evidence,
    )
    stuck = result(
        "F2", BIG, 30, resolution=Resolution.OPEN, note="n" * 8_000, claim=claim, evidence=evidence
    )
    warned = result(
        "F3",
        BIG,
        31,
        resolution=Resolution.WARNING,
        warning="w" * 8_000,
        claim=claim,
        evidence=evidence,
    )
    last_patch = Patch(path=BIG, start_line=30, end_line=30, replacement="p" * 40_000)
    thread = [
        says("F1", MessageKind.RULING, "a" * 8_000),
        says("F2", MessageKind.CONCEDE, "d" * 8_000, patch=last_patch),
        says("F2", MessageKind.REJECT, "t" * 8_000),
        says("F3", MessageKind.DISPUTE, "d" * 8_000),
        says("F3", MessageKind.REJECT, "t" * 8_000),
        says("F3", MessageKind.RULING, "a" * 8_000),
    ]

    comments = draft(publish(unit(fixed, stuck, warned, messages=thread))).comments

    assert len(comments) == 3
    assert all(len(c.body) <= 65_535 for c in comments)
    suggestion = read_fences(comments[0].body)[0][-1]
    assert suggestion.lines == ["r" * 40_000]  # the suggestion is never cut


# -- runs that did not finish -----------------------------------------------------------------


def test_a_crashed_run_fails_the_check_and_says_how_to_retry() -> None:
    check = check_runs.failed("GitHub answered 502 while fetching the diff @octocat\n```", run=RUN)

    assert check.conclusion is Conclusion.FAILURE
    assert check.title == "Tiebreak could not finish this review"
    assert "Tiebreak could not finish its review of <code>0123456</code>." in check.summary
    assert "GitHub answered 502 while fetching the diff" in check.summary
    assert "comment `/tiebreak review` on this pull request" in check.summary
    assert "https://tiebreak.example/runs/run-42" in check.summary
    assert re.findall(r"@[A-Za-z0-9]", visible_text(check.summary)) == []
    assert run_id_of(check.summary) == "run-42"
    assert check.outputs() == [CheckRunOutput(title=check.title, summary=check.summary)]


def test_a_superseded_run_is_cancelled_and_names_the_newer_push() -> None:
    newer = "fedcba9876543210fedcba9876543210fedcba98"

    check = check_runs.superseded(newer, run=RUN)

    assert check.conclusion is Conclusion.CANCELLED
    assert check.title == "Superseded by a newer push (fedcba9)"
    assert "<code>fedcba9</code>" in check.summary
    assert "<code>0123456</code>" in check.summary


@pytest.mark.parametrize("unknown", ["", "main; rm -rf / @octocat"])
def test_a_run_superseded_by_an_unknown_push_still_completes(unknown: str) -> None:
    check = check_runs.superseded(unknown, run=RUN)

    assert check.conclusion is Conclusion.CANCELLED
    assert check.title == "Superseded by a newer push"
    assert "A newer commit was pushed while Tiebreak was reviewing" in check.summary
    assert "rm -rf" not in check.summary


def test_a_repository_that_turned_tiebreak_off_gets_a_skipped_check() -> None:
    check = check_runs.disabled(run=RUN)

    assert check.conclusion is Conclusion.SKIPPED
    assert check.title == "Tiebreak is turned off for this repository"
    assert "`enabled: false`" in check.summary
    assert run_id_of(check.summary) == "run-42"


# -- the diff corpus --------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    unit: str
    result: FindingOutcome
    inline: bool


def case(
    unit_id: str,
    fid: str,
    name: str,
    span: tuple[str, int, int],
    resolution: Resolution,
    *,
    fix: tuple[str, int, int] | None = None,
    inline: bool,
) -> Case:
    path, start, end = span
    patch = None
    if resolution is Resolution.FIXED:
        fpath, fstart, fend = fix or span
        patch = Patch(path=fpath, start_line=fstart, end_line=fend, replacement=f"{name} = 1\n")
    found = result(
        fid,
        path,
        start,
        end,
        resolution=resolution,
        fix=patch,
        claim=f"The {name} case is wrong.",
        severity=list(Severity)[int(fid[1:]) % 4],
    )
    return Case(unit_id, found, inline)


R = Resolution
CASES = [
    case("u1", "F1", "single", (BIG, 5, 5), R.FIXED, inline=True),
    case("u1", "F2", "multiline", (BIG, 5, 7), R.OPEN, inline=True),
    case("u1", "F3", "betweenhunks", (BIG, 12, 12), R.WARNING, inline=False),
    case("u1", "F4", "spanning", (BIG, 9, 30), R.FIXED, inline=False),
    case("u1", "F5", "leftonly", (BIG, 27, 27), R.OPEN, inline=False),
    case("u1", "F6", "nonewline", (NOTES, 4, 4), R.FIXED, inline=True),
    case("u1", "F7", "pastend", (NOTES, 3, 5), R.WARNING, inline=False),
    case("u1", "F8", "withdrawn", (ADDED, 1, 2), R.WITHDRAWN, inline=False),
    case("u1", "F9", "patchanchor", (BIG, 20, 20), R.FIXED, fix=(BIG, 30, 32), inline=True),
    case("u1", "F10", "patchoutside", (BIG, 6, 6), R.FIXED, fix=(BIG, 40, 40), inline=False),
    case("u1", "F11", "straddle", (BIG, 10, 28), R.OPEN, inline=False),
    case("u1", "F12", "hunkend", (BIG, 38, 38), R.OPEN, inline=True),
    case("u1", "F13", "pastfile", (BIG, 39, 39), R.OPEN, inline=False),
    case("u1", "F14", "newfile", (ADDED, 1, 2), R.FIXED, inline=True),
    case("u2", "F1", "renamed", (NEW, 11, 11), R.FIXED, inline=True),
    case("u2", "F2", "deletedfile", (GONE, 1, 2), R.OPEN, inline=False),
    case("u2", "F3", "binaryfile", (LOGO, 1, 1), R.WARNING, inline=False),
    case("u2", "F4", "unknownpath", ("src/nowhere.py", 3, 3), R.OPEN, inline=False),
    case("u2", "F5", "purerename", (HELPERS, 1, 1), R.FIXED, inline=False),
    case("u2", "F6", "oldpath", (OLD, 10, 10), R.OPEN, inline=False),
    case("u2", "F7", "wholehunk", (NEW, 8, 14), R.FIXED, inline=True),
]


def test_the_independent_reading_of_the_corpus_matches_git() -> None:
    assert {
        LOGO: [],
        NOTES: [set(range(1, 5))],
        ADDED: [{1, 2}],
        BIG: [set(range(2, 11)), set(range(28, 39))],
        GONE: [],
        HELPERS: [],
        NEW: [set(range(8, 15))],
    } == HUNKS


def test_over_the_corpus_every_comment_is_valid_and_every_finding_appears_once() -> None:
    units = [
        unit(*(c.result for c in CASES if c.unit == unit_id), unit_id=unit_id)
        for unit_id in ("u1", "u2")
    ]

    publication = publish(*units)

    review = draft(publication)
    comments = review.comments
    assert {str(i): comment_problems(c, HUNKS) for i, c in enumerate(comments)} == {
        str(i): [] for i in range(len(comments))
    }
    for c in CASES:
        claim = c.result.finding.claim
        in_comments = sum(claim in x.body for x in comments)
        in_summary = claim in publication.summary
        assert (in_comments, in_summary) == ((1, False) if c.inline else (0, True)), claim
    for comment in review.comments:
        case_ = next(c for c in CASES if c.result.finding.claim in comment.body)
        suggestions = [b for b in read_fences(comment.body)[0] if b.info == "suggestion"]
        if case_.result.patch is None:
            assert suggestions == []
        else:
            assert [s.lines for s in suggestions] == [git_lines(case_.result.patch.replacement)]
            assert (comment.path, comment.line) == (
                case_.result.patch.path,
                case_.result.patch.end_line,
            )
    annotations = [a for batch in publication.check.annotation_batches for a in batch]
    assert len(annotations) == len(comments) == sum(c.inline for c in CASES)
    assert "### Findings on lines outside the diff" in publication.summary
    for reason in (
        "<code>src/gone.py:1-2</code> is in a file this pull request deletes",
        "<code>assets/logo.png:1</code> is in a binary file",
        "<code>src/nowhere.py:3</code> is not part of this pull request's diff",
        "<code>src/helpers.py:1</code> is in a file the diff shows no lines of",
        "<code>src/big.py:40</code> is not within one hunk of the diff",
        "<code>src/big.py:10-28</code> is not within one hunk of the diff",
    ):
        assert f"Not posted inline: {reason}." in publication.summary
    assert review.event is ReviewEvent.COMMENT
    assert publication.check.conclusion is Conclusion.ACTION_REQUIRED


PATHS = [BIG, NOTES, ADDED, NEW, GONE, LOGO, HELPERS, OLD, "src/nowhere.py"]


@st.composite
def outcomes(draw: st.DrawFn, fid: str) -> FindingOutcome:
    def span() -> tuple[str, int, int]:
        start = draw(st.integers(1, 45))
        return draw(st.sampled_from(PATHS)), start, start + draw(st.integers(0, 4))

    path, start, end = span()
    resolution = draw(st.sampled_from(list(Resolution)))
    fpath, fstart, fend = span() if draw(st.booleans()) else (path, start, end)
    replacement = draw(st.sampled_from(["", "\n", "x = 1\n", "```\nq\n```", "a\nb\nc"]))
    return result(
        fid,
        path,
        start,
        end,
        resolution=resolution,
        fix=Patch(path=fpath, start_line=fstart, end_line=fend, replacement=replacement),
        claim=f"The case{fid}x claim.",
        severity=draw(st.sampled_from(list(Severity))),
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), count=st.integers(0, 12))
def test_no_review_is_ever_rejected_whatever_the_findings(data: st.DataObject, count: int) -> None:
    findings = [data.draw(outcomes(f"F{i}")) for i in range(1, count + 1)]

    publication = publish(unit(*findings))

    comments = publication.review.comments if publication.review else []
    for comment in comments:
        assert comment_problems(comment, HUNKS) == []
        assert not read_fences(comment.body)[2]
    for found in findings:
        claim = found.finding.claim
        places = sum(claim in c.body for c in comments) + (claim in publication.summary)
        assert places == 1
    assert publication.review is None or publication.review.event.value != "APPROVE"
    assert (publication.review is None) == (not comments)


# -- a real debate, published -----------------------------------------------------------------


async def test_a_debate_run_by_the_engine_publishes_cleanly() -> None:
    fix = raw_patch(5, "line 5 fixed", path=BIG)
    llm = ScriptedLLM(
        by_role(
            tester=[
                report(
                    raw_finding(5, "Line 5 lost its meaning.", "blocker", path=BIG),
                    raw_finding(2, "BETA should be lower case, @octocat.", "nit", path=NOTES),
                ),
                evaluations(accept("F1"), accept("F2", "Fair enough.")),
            ],
            coder=[answers(concede("F1", fix), dispute("F2", "BETA is the new spelling."))],
        )
    )
    review = await review_diff(DIFF, llm)

    publication = plan(review, DIFF, run=RUN)

    comment = the_comment(publication)
    assert comment_problems(comment, HUNKS) == []
    assert (comment.path, comment.line, comment.start_line) == (BIG, 5, None)
    suggestions = [b for b in read_fences(comment.body)[0] if b.info == "suggestion"]
    assert [s.lines for s in suggestions] == [["line 5 fixed"]]
    body = publication.summary
    assert "the coder: BETA is the new spelling." in body
    assert publication.check.conclusion is Conclusion.NEUTRAL
    assert publication.label is LabelAction.REMOVE
    rows = table_rows(publication.check.summary)
    assert [(r[0], r[3], r[4]) for r in rows] == [
        ("F1", "fix suggested", "unanimous"),
        ("F2", "withdrawn", "unanimous"),
    ]
    assert all(int(r[6].replace(",", "")) > 0 for r in rows)
    assert f"{review.usage.billed:,} billed tokens" in publication.check.summary
