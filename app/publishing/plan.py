"""What Tiebreak sends to GitHub for a review: pure functions, no client, no I/O.

:func:`plan` turns a finished :class:`Review` into a :class:`Publication`: the pull request
review with this run's new inline comments, the one summary comment the pull request keeps
(edited in place on every run), the replies on threads whose findings are gone, the notes and
replies on the threads of the proven findings whose tests ran again (and the threads of those
fixed, to resolve), the check run's conclusion and output, and what to do with the
`Unresolved` label. GitHub rejects a
whole review (422) if a single comment is off the diff, so every inline comment is checked
against the pull request's full diff first, and a finding that cannot be posted inline is
written into the summary instead.
The check run of a review that did not run to the end is :mod:`app.publishing.check_runs`'.
"""

from collections.abc import Mapping, Sequence
from dataclasses import replace

from agents.diff import Diff
from agents.outcome import FindingOutcome, Resolution
from agents.protocol import Severity
from agents.review import Review
from agents.verification import Retest
from agents.walkthrough import walkthrough
from app.bodies import (
    LIMIT,
    Annotation,
    AnnotationLevel,
    Conclusion,
    ReviewComment,
    ReviewDraft,
    ReviewEvent,
)
from app.publishing import finding_text, follow_text, text
from app.publishing import markdown as md
from app.publishing.comment_text import comment_body
from app.publishing.fingerprints import Fingerprint
from app.publishing.intent_text import behaviour_changes
from app.publishing.markers import SUMMARY_MARKER
from app.publishing.publication import (
    ANNOTATIONS_PER_REQUEST,
    CheckRunResult,
    Conversation,
    LabelAction,
    Publication,
    RunInfo,
    ThreadNote,
    ThreadReply,
    finding_key,
)
from app.publishing.walkthrough_text import walkthrough_section


def plan(
    review: Review,
    diff: Diff,
    *,
    run: RunInfo,
    conversation: Conversation | None = None,
) -> Publication:
    """What to send to GitHub for `review` of the pull request whose full diff is `diff`,
    given what the pull request already shows (`conversation`; none: post everything)."""
    conversation = conversation or Conversation()
    entries = _cap_inline(_entries(review, diff, conversation.threads), run.max_inline_comments)
    unresolved = any(e.result.resolution is Resolution.OPEN for e in entries)
    title = _title(review, entries, follow_text.headline(conversation.followed))
    details = str(run.details_url) if run.details_url else None
    pull_url = str(run.pull_url) if run.pull_url else None
    note = text.truncation_note(details)
    overview = _overview(
        review, entries, conversation, run, title=title, details_url=details, pull_url=pull_url
    )
    inline = [e for e in entries if e.inline]
    annotations = [_annotation(e) for e in inline]
    check = CheckRunResult(
        conclusion=_conclusion(review, entries),
        title=title,
        summary=md.fit(overview, LIMIT, note),
        text=md.fit(text.every_finding(entries), LIMIT, note),
        annotation_batches=[
            annotations[i : i + ANNOTATIONS_PER_REQUEST]
            for i in range(0, len(annotations), ANNOTATIONS_PER_REQUEST)
        ],
    )
    summary = [
        SUMMARY_MARKER + "\n",
        *overview,
        *text.not_inline(entries, run.max_inline_comments),
        *follow_text.section(conversation.followed, pull_url, sha=run.head_sha),
        *text.gone(conversation.gone, pull_url),
    ]
    replies, notes, resolve = _on_threads(conversation, run.head_sha)
    return Publication(
        review=_draft(inline, diff, run, unresolved=unresolved),
        summary=md.fit(summary, LIMIT, note),
        replies=replies,
        notes=notes,
        resolve=resolve,
        check=check,
        label=LabelAction.ADD if unresolved else LabelAction.REMOVE,
        label_name=run.label,
    )


def _on_threads(
    conversation: Conversation, sha: str
) -> tuple[list[ThreadReply], list[ThreadNote], list[int]]:
    """What the run says on earlier findings' threads: a reply on each gone finding's (once);
    on each followed finding's, a note on its test's run at `sha` while it fails or could not
    run, or once it passes a reply that it is fixed; and the threads to resolve, those of the
    findings whose tests pass."""
    replies = [
        ThreadReply(thread=g.thread, body=text.answered(g.result, sha=sha))
        for g in conversation.gone
        if g.answer and g.thread is not None
    ]
    notes: list[ThreadNote] = []
    resolve: list[int] = []
    for each in conversation.followed:
        if each.thread is None or each.ended:
            continue
        if each.follow.retest is Retest.PASSES:
            resolve.append(each.thread)
            if each.answer:
                body = follow_text.fixed(each.follow, sha=sha)
                replies.append(ThreadReply(thread=each.thread, body=body))
        else:
            body = follow_text.note(each.follow, sha=sha)
            notes.append(ThreadNote(thread=each.thread, note=each.note, body=body))
    return replies, notes, resolve


def _draft(
    inline: Sequence[text.FindingEntry], diff: Diff, run: RunInfo, *, unresolved: bool
) -> ReviewDraft | None:
    """The review of the findings posted inline (none without any)."""
    if not inline:
        return None
    return ReviewDraft(
        commit_id=run.head_sha,
        body=text.review_intro(len(inline), run_id=run.run_id, sha=run.head_sha),
        event=run.event_on_unresolved if unresolved else ReviewEvent.COMMENT,
        comments=[_comment(e, diff, run) for e in sorted(inline, key=_by_anchor)],
    )


def _entries(review: Review, diff: Diff, threads: Mapping[str, int]) -> list[text.FindingEntry]:
    several = len(review.units) > 1
    entries = []
    for unit in review.units:
        for result in unit.findings:
            fid = result.finding.id
            # A suggestion replaces the lines it is posted on: a fix sits on its patch's lines.
            span = result.patch or result.finding
            anchor = (span.path, span.start_line, span.end_line)
            outside = None
            posted_in = threads.get(finding_key(unit.unit_id, fid))
            if result.resolution is not Resolution.WITHDRAWN and posted_in is None:
                outside = _outside(diff, *anchor)
            entries.append(
                text.FindingEntry(
                    # Ids are the engine's own, but a review can be loaded from a transcript.
                    label=md.inline(finding_key(unit.unit_id, fid) if several else fid, 100),
                    result=result,
                    thread=tuple(unit.transcript.thread(result.finding.id)),
                    anchor=anchor,
                    inline=(
                        result.resolution is not Resolution.WITHDRAWN
                        and outside is None
                        and posted_in is None
                    ),
                    outside=outside,
                    posted_in=posted_in,
                )
            )
    # Stable: findings at one place keep their units' and the debate's order.
    return sorted(entries, key=lambda e: (e.result.finding.severity.rank, *_where(e.result)))


def _cap_inline(entries: list[text.FindingEntry], limit: int) -> list[text.FindingEntry]:
    """At most `limit` inline comments, the most severe first; the rest move to the body."""
    inline = [e for e in entries if e.inline]
    over = {id(e) for e in sorted(inline, key=_by_anchor)[limit:]}
    return [replace(e, inline=False, overflow=True) if id(e) in over else e for e in entries]


def _by_anchor(entry: text.FindingEntry) -> tuple[int, str, int, int]:
    return (entry.result.finding.severity.rank, *entry.anchor)


def _where(result: FindingOutcome) -> tuple[str, int, int]:
    finding = result.finding
    return finding.path, finding.start_line, finding.end_line


def _outside(diff: Diff, path: str, start: int, end: int) -> str | None:
    """Why a comment on start..end of `path` would be rejected, or None if GitHub takes it."""
    diff_file = diff.file(path)
    if diff_file is None:
        return "is not part of this pull request's diff"
    if diff_file.deleted:
        return "is in a file this pull request deletes"
    if diff_file.binary:
        return "is in a binary file"
    if not diff_file.right_lines():
        return "is in a file the diff shows no lines of"
    if diff.hunk_covering(path, start, end) is None:
        return "is not within one hunk of the diff"
    return None


def _comment(entry: text.FindingEntry, diff: Diff, run: RunInfo) -> ReviewComment:
    """An inline comment, ending with its finding's fingerprint for later runs to find (on
    a fix's file, naming the finding's own)."""
    path, start, end = entry.anchor
    multiline = start < end
    fingerprint = Fingerprint.of(entry.result.finding, diff)
    details = str(run.details_url) if run.details_url else None
    return ReviewComment(
        path=path,
        line=end,
        start_line=start if multiline else None,
        start_side="RIGHT" if multiline else None,
        body=comment_body(entry, ending=fingerprint.marker(path), details_url=details),
    )


def _annotation(entry: text.FindingEntry) -> Annotation:
    result, finding = entry.result, entry.result.finding
    path, start, end = entry.anchor
    serious = finding.severity in (Severity.BLOCKER, Severity.MAJOR)
    if result.resolution is Resolution.OPEN:
        level = AnnotationLevel.FAILURE
    elif serious and result.resolution in (Resolution.FIXED, Resolution.WARNING):
        level = AnnotationLevel.WARNING
    else:
        level = AnnotationLevel.NOTICE
    extra = {
        Resolution.FIXED: "A fix is suggested in the review.",
        Resolution.WARNING: f"Accepted with a warning: {result.warning}",
        Resolution.OPEN: f"Unresolved: {result.note or 'no agreement was reached'}",
        Resolution.INTENDED: "A behaviour change the pull request means to make: not a defect.",
    }.get(result.resolution, "")
    if finding_text.stands(result):
        extra = "Stands: a majority of the testers keeps it against the coder."
    if result.votes:
        extra = f"{extra}\n\n{finding_text.vote(result)}".strip()
    return Annotation(
        path=path,
        start_line=start,
        end_line=end,
        annotation_level=level,
        title=md.one_line(
            f"{entry.label} · {finding.severity} · {finding_text.resolution(result)}: "
            f"{finding.claim}",
            255,
        ),
        message=md.clip(finding.claim, md.PROSE_LIMIT)
        + (f"\n\n{md.clip(extra, md.PROSE_LIMIT)}" if extra else ""),
    )


def _overview(
    review: Review,
    entries: list[text.FindingEntry],
    conversation: Conversation,
    run: RunInfo,
    *,
    title: str,
    details_url: str | None,
    pull_url: str | None,
) -> list[str]:
    """The summary's and the check run's opening: the title, the walkthrough and the
    behaviour changes, the findings' table, what this run covered, the proven findings
    followed, the spend and the run's notes."""
    overview = text.overview(
        review,
        entries,
        title=title,
        run_id=run.run_id,
        details_url=details_url,
        pull_url=pull_url,
        opening=[
            *walkthrough_section(walkthrough(review)),
            *behaviour_changes(review.findings),
        ],
    )
    overview += text.scope(conversation, run.head_sha)
    overview += follow_text.counts(conversation.followed, sha=run.head_sha)
    if run.spend is not None:
        overview.append(text.spend(**run.spend.model_dump()))
    overview += [f"{note}\n\n" for note in run.notes]
    return overview


def _conclusion(review: Review, entries: list[text.FindingEntry]) -> Conclusion:
    resolutions = {e.result.resolution for e in entries}
    if Resolution.OPEN in resolutions or review.failed_units:
        return Conclusion.ACTION_REQUIRED
    if resolutions & {Resolution.FIXED, Resolution.WARNING}:
        return Conclusion.NEUTRAL
    return Conclusion.SUCCESS


def _title(review: Review, entries: list[text.FindingEntry], followed: list[str]) -> str:
    """What the check run is titled, and the summary headed: the findings by how they ended,
    then the proven findings followed (`followed`: their parts)."""

    def count(resolution: Resolution) -> int:
        return sum(e.result.resolution is resolution for e in entries)

    standing = sum(finding_text.stands(e.result) for e in entries)
    parts = [
        _plural(count(Resolution.OPEN) - standing, "unresolved finding", "unresolved findings"),
        _plural(standing, "finding stands by majority", "findings stand by majority"),
        _plural(len(review.failed_units), "unit not reviewed", "units not reviewed"),
        _plural(count(Resolution.FIXED), "fix suggested", "fixes suggested"),
        _plural(count(Resolution.WARNING), "warning", "warnings"),
        _plural(count(Resolution.INTENDED), "behaviour change", "behaviour changes"),
    ]
    shown = [p for p in parts if p]
    if not shown:
        withdrawn = count(Resolution.WITHDRAWN)
        if withdrawn:
            shown = [f"No open findings ({withdrawn} withdrawn)"]
        else:
            shown = ["No open findings" if followed else "No findings"]
    return " · ".join([*shown, *followed])


def _plural(n: int, one: str, many: str) -> str:
    if not n:
        return ""
    return f"1 {one}" if n == 1 else f"{n} {many}"
