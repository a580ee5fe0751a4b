"""What Tiebreak sends to GitHub for a review: pure functions, no client, no I/O.

:func:`plan` turns a finished :class:`Review` into a :class:`Publication`: the pull request
review with this run's new inline comments, the one summary comment the pull request keeps
(edited in place on every run), the replies on threads whose findings are gone, the check
run's conclusion and output, and what to do with the `Unresolved` label. GitHub rejects a
whole review (422) if a single comment is off the diff, so every inline comment is checked
against the pull request's full diff first, and a finding that cannot be posted inline is
written into the summary instead.
:func:`failed`, :func:`superseded` and :func:`disabled` give the check run of a review that
did not run to the end.
"""

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    StringConstraints,
    model_validator,
)

from agents.diff import Diff
from agents.outcome import FindingOutcome, Resolution
from agents.protocol import Severity
from agents.review import Review
from app.publishing import finding_text, text
from app.publishing import markdown as md
from app.publishing.fingerprints import Fingerprint
from policies.config import RepoConfig

ANNOTATIONS_PER_REQUEST = 50
"""GitHub's limit on annotations per check run request; further requests append."""

_RUN_ID = r"[A-Za-z0-9_.:/#@+-]{1,400}"
_MARKER = re.compile(rf"<!-- tiebreak:run:({_RUN_ID}) -->")

Text = Annotated[str, StringConstraints(min_length=1, max_length=md.LIMIT)]


class ReviewEvent(StrEnum):
    """How the review is submitted. There is no APPROVE: Tiebreak never approves."""

    COMMENT = "COMMENT"
    REQUEST_CHANGES = "REQUEST_CHANGES"


class Conclusion(StrEnum):
    SUCCESS = "success"
    NEUTRAL = "neutral"
    ACTION_REQUIRED = "action_required"
    FAILURE = "failure"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"
    TIMED_OUT = "timed_out"


class AnnotationLevel(StrEnum):
    NOTICE = "notice"
    WARNING = "warning"
    FAILURE = "failure"


class LabelAction(StrEnum):
    ADD = "add"
    REMOVE = "remove"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def payload(self) -> dict[str, Any]:
        """The model as the JSON GitHub's endpoint takes."""
        return self.model_dump(mode="json", exclude_none=True)


class Spend(_Frozen):
    """What a run spent, and what its installation has left today."""

    spent: int
    """Billed tokens this run spent."""
    ceiling: int
    daily_remaining: int
    daily_cap: int


class RunInfo(_Frozen):
    """The run being published, and the repository's choices for it."""

    run_id: Annotated[str, StringConstraints(pattern=rf"^{_RUN_ID}$")]
    head_sha: Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{7,64}$")]
    details_url: AnyHttpUrl | None = None
    """Where the debate's transcript is (`/runs/{id}`); linked from the summary."""
    pull_url: AnyHttpUrl | None = None
    """The pull request's page, for links to its threads."""
    label: Annotated[str, StringConstraints(min_length=1, max_length=50)] = "Unresolved"
    event_on_unresolved: ReviewEvent = ReviewEvent.COMMENT
    max_inline_comments: Annotated[int, Field(ge=0)] = 10
    """New inline comments beyond this many (least severe first) are listed in the summary."""
    spend: Spend | None = None
    notes: tuple[str, ...] = ()
    """Lines of Tiebreak's own Markdown for the summary: what the config left out."""

    @classmethod
    def of(cls, config: RepoConfig, *, run_id: str, head_sha: str, **more: Any) -> Self:
        """A run under a repository's config."""
        return cls(
            run_id=run_id,
            head_sha=head_sha,
            label=config.label,
            event_on_unresolved=ReviewEvent(config.review_event_on_unresolved),
            max_inline_comments=config.max_inline_comments,
            **more,
        )


class GoneFinding(_Frozen):
    """An earlier unresolved finding a run no longer finds: the code it was about changed."""

    result: FindingOutcome
    thread: int | None = None
    """The first comment of its review thread, if it was posted inline."""
    answer: bool = False
    """Whether its thread gets a reply now (not yet answered, not dismissed)."""


class Conversation(_Frozen):
    """What the pull request already shows of earlier runs, as this run reconciled it."""

    threads: dict[str, int] = {}
    """`unit/finding` → the first comment of the thread the pull request has for it."""
    gone: list[GoneFinding] = []
    since: str | None = None
    """The earlier head whose changes since this run reviewed; None for a full review."""
    why_full: str = ""
    """Why every file was reviewed, when that is news (a force-push, a changed config)."""
    reviewed_files: int = 0
    carried: int = 0
    """Earlier findings that stand unchanged."""
    dismissed: int = 0
    """Findings not raised again because a person resolved their thread or marked it 👎."""


class ThreadReply(_Frozen):
    """A reply in a review thread: `POST .../pulls/{n}/comments/{thread}/replies`."""

    thread: int
    body: Text


class ReviewComment(_Frozen):
    """One inline comment of a review, on RIGHT-side lines start_line..line of `path`."""

    path: Annotated[str, StringConstraints(min_length=1)]
    line: PositiveInt
    side: Literal["RIGHT"] = "RIGHT"
    start_line: PositiveInt | None = None
    start_side: Literal["RIGHT"] | None = None
    body: Text

    @model_validator(mode="after")
    def _range(self) -> Self:
        if (self.start_line is None) != (self.start_side is None):
            raise ValueError("start_line and start_side go together")
        if self.start_line is not None and self.start_line >= self.line:
            raise ValueError("start_line must be before line; a one-line comment has none")
        return self


class ReviewDraft(_Frozen):
    """The body of `POST /repos/{owner}/{repo}/pulls/{number}/reviews`."""

    commit_id: str
    body: Text
    event: ReviewEvent
    comments: list[ReviewComment]


class Annotation(_Frozen):
    path: Annotated[str, StringConstraints(min_length=1)]
    start_line: PositiveInt
    end_line: PositiveInt
    annotation_level: AnnotationLevel
    message: Annotated[str, StringConstraints(min_length=1, max_length=md.LIMIT)]
    title: Annotated[str, StringConstraints(max_length=255)]


class CheckRunResult(_Frozen):
    """A completed check run: its conclusion and output, annotations in request-sized batches."""

    conclusion: Conclusion
    title: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    summary: Text
    text: Annotated[str, StringConstraints(max_length=md.LIMIT)] = ""
    annotation_batches: list[
        Annotated[list[Annotation], Field(min_length=1, max_length=ANNOTATIONS_PER_REQUEST)]
    ] = []

    def outputs(self) -> list[dict[str, Any]]:
        """The `output` of each request, in order: the first completes the run, the others
        append their annotations (GitHub keeps the annotations of earlier requests)."""
        base: dict[str, Any] = {"title": self.title, "summary": self.summary}
        if self.text:
            base["text"] = self.text
        batches = self.annotation_batches or [[]]
        return [base | ({"annotations": [a.payload() for a in b]} if b else {}) for b in batches]


class Publication(_Frozen):
    """Everything one finished review sends to GitHub."""

    review: ReviewDraft | None
    """None when there is nothing new to say inline."""
    summary: Text
    """The pull request's summary comment, which this run edits (or writes the first time)."""
    replies: list[ThreadReply] = []
    check: CheckRunResult
    label: LabelAction
    label_name: str


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
    title = _title(review, entries)
    details = str(run.details_url) if run.details_url else None
    pull_url = str(run.pull_url) if run.pull_url else None
    note = text.truncation_note(details)
    overview = text.overview(
        review, entries, title=title, run_id=run.run_id, details_url=details, pull_url=pull_url
    )
    overview += text.scope(conversation, run.head_sha)
    if run.spend is not None:
        overview.append(text.spend(**run.spend.model_dump()))
    overview += [f"{note}\n\n" for note in run.notes]
    inline = [e for e in entries if e.inline]
    annotations = [_annotation(e) for e in inline]
    check = CheckRunResult(
        conclusion=_conclusion(review, entries),
        title=title,
        summary=md.fit(overview, md.LIMIT, note),
        text=md.fit(text.every_finding(entries), md.LIMIT, note),
        annotation_batches=[
            annotations[i : i + ANNOTATIONS_PER_REQUEST]
            for i in range(0, len(annotations), ANNOTATIONS_PER_REQUEST)
        ],
    )
    draft = None
    if inline:
        draft = ReviewDraft(
            commit_id=run.head_sha,
            body=text.review_intro(len(inline), run_id=run.run_id, sha=run.head_sha),
            event=run.event_on_unresolved if unresolved else ReviewEvent.COMMENT,
            comments=[_comment(e, diff) for e in sorted(inline, key=_by_anchor)],
        )
    summary = [
        text.SUMMARY_MARKER + "\n",
        *overview,
        *text.not_inline(entries, run.max_inline_comments),
        *text.gone(conversation.gone, pull_url),
    ]
    return Publication(
        review=draft,
        summary=md.fit(summary, md.LIMIT, note),
        replies=[
            ThreadReply(thread=g.thread, body=text.answered(g.result, sha=run.head_sha))
            for g in conversation.gone
            if g.answer and g.thread is not None
        ],
        check=check,
        label=LabelAction.ADD if unresolved else LabelAction.REMOVE,
        label_name=run.label,
    )


def failed(reason: str, *, run: RunInfo) -> CheckRunResult:
    """The check run of a review that crashed or could not start."""
    details = str(run.details_url) if run.details_url else None
    return CheckRunResult(
        conclusion=Conclusion.FAILURE,
        title="Tiebreak could not finish this review",
        summary=text.failure(reason, run_id=run.run_id, sha=run.head_sha, details_url=details),
    )


def superseded(newer_sha: str, *, run: RunInfo) -> CheckRunResult:
    """The check run of a review stopped because a newer commit was pushed.

    `newer_sha` may be unknown (empty): the run still completes, without naming it.
    """
    newer = newer_sha[:7] if re.fullmatch(r"[0-9a-fA-F]{7,64}", newer_sha) else None
    return CheckRunResult(
        conclusion=Conclusion.CANCELLED,
        title=f"Superseded by a newer push ({newer})" if newer else "Superseded by a newer push",
        summary=text.superseded(run_id=run.run_id, sha=run.head_sha, newer=newer),
    )


def stopped(login: str, *, run: RunInfo) -> CheckRunResult:
    """The check run of a review someone stopped with `/tiebreak stop`."""
    return CheckRunResult(
        conclusion=Conclusion.CANCELLED,
        title=f"Stopped by @{login}"[:255],
        summary=text.stopped(login, run_id=run.run_id, sha=run.head_sha),
    )


def timed_out(minutes: int, *, run_id: str, head_sha: str) -> CheckRunResult:
    """The check run of a review that never finished: the janitor completes it."""
    return CheckRunResult(
        conclusion=Conclusion.TIMED_OUT,
        title="The review did not finish",
        summary=text.timed_out(minutes, run_id=run_id, sha=head_sha),
    )


def resolved(login: str, summary: str) -> CheckRunResult:
    """A finished run whose open findings a person accepted with `/tiebreak resolve`."""
    return CheckRunResult(
        conclusion=Conclusion.SUCCESS,
        title=f"Resolved by @{login}"[:255],
        summary=text.resolved(login, summary)[: md.LIMIT],
    )


def resolved_summary(login: str, publication: Publication) -> str:
    """The summary comment of a finished run whose open findings a person accepted."""
    _, body = publication.summary.split("\n", 1)
    return f"{text.SUMMARY_MARKER}\n{text.resolved(login, body)}"[: md.LIMIT]


def disabled(*, run: RunInfo) -> CheckRunResult:
    """The check run of a pull request in a repository whose config turns Tiebreak off."""
    return CheckRunResult(
        conclusion=Conclusion.SKIPPED,
        title="Tiebreak is turned off for this repository",
        summary=text.disabled(run_id=run.run_id),
    )


def daily_budget_reached(
    *, spent: int, cap: int, resets_at: datetime, run: RunInfo
) -> CheckRunResult:
    """The check run of a review that did not start: its installation's daily allowance of
    tokens is spent."""
    return CheckRunResult(
        conclusion=Conclusion.NEUTRAL,
        title="Daily budget reached",
        summary=text.daily_budget_reached(
            spent=spent, cap=cap, resets_at=resets_at, run_id=run.run_id, sha=run.head_sha
        ),
    )


def run_id_of(body: str) -> str | None:
    """The run a review body or check summary was published by, from its first line.

    Only the first line counts: model text further down could quote a marker.
    """
    match = _MARKER.fullmatch(body.split("\n", 1)[0])
    return match[1] if match else None


def _entries(review: Review, diff: Diff, threads: Mapping[str, int]) -> list[text.Entry]:
    several = len(review.units) > 1
    entries = []
    for unit in review.units:
        for result in unit.findings:
            fid = result.finding.id
            # A suggestion replaces the lines it is posted on: a fix sits on its patch's lines.
            span = result.patch or result.finding
            anchor = (span.path, span.start_line, span.end_line)
            outside = None
            posted_in = threads.get(f"{unit.unit_id}/{fid}")
            if result.resolution is not Resolution.WITHDRAWN and posted_in is None:
                outside = _outside(diff, *anchor)
            entries.append(
                text.Entry(
                    # Ids are the engine's own, but a review can be loaded from a transcript.
                    label=md.inline(f"{unit.unit_id}/{fid}" if several else fid, 100),
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


def _cap_inline(entries: list[text.Entry], limit: int) -> list[text.Entry]:
    """At most `limit` inline comments, the most severe first; the rest move to the body."""
    inline = [e for e in entries if e.inline]
    over = {id(e) for e in sorted(inline, key=_by_anchor)[limit:]}
    return [replace(e, inline=False, overflow=True) if id(e) in over else e for e in entries]


def _by_anchor(entry: text.Entry) -> tuple[int, str, int, int]:
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


def _comment(entry: text.Entry, diff: Diff) -> ReviewComment:
    """An inline comment, ending with its finding's fingerprint for later runs to find."""
    path, start, end = entry.anchor
    multiline = start < end
    fingerprint = Fingerprint.of(entry.result.finding, diff)
    return ReviewComment(
        path=path,
        line=end,
        start_line=start if multiline else None,
        start_side="RIGHT" if multiline else None,
        body=f"{text.comment_body(entry)}\n\n{fingerprint.marker()}",
    )


def _annotation(entry: text.Entry) -> Annotation:
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


def _conclusion(review: Review, entries: list[text.Entry]) -> Conclusion:
    resolutions = {e.result.resolution for e in entries}
    if Resolution.OPEN in resolutions or review.failed_units:
        return Conclusion.ACTION_REQUIRED
    if resolutions & {Resolution.FIXED, Resolution.WARNING}:
        return Conclusion.NEUTRAL
    return Conclusion.SUCCESS


def _title(review: Review, entries: list[text.Entry]) -> str:
    def count(resolution: Resolution) -> int:
        return sum(e.result.resolution is resolution for e in entries)

    standing = sum(finding_text.stands(e.result) for e in entries)
    parts = [
        _plural(count(Resolution.OPEN) - standing, "unresolved finding", "unresolved findings"),
        _plural(standing, "finding stands by majority", "findings stand by majority"),
        _plural(len(review.failed_units), "unit not reviewed", "units not reviewed"),
        _plural(count(Resolution.FIXED), "fix suggested", "fixes suggested"),
        _plural(count(Resolution.WARNING), "warning", "warnings"),
    ]
    title = " · ".join(p for p in parts if p)
    if title:
        return title
    withdrawn = count(Resolution.WITHDRAWN)
    return f"No open findings ({withdrawn} withdrawn)" if withdrawn else "No findings"


def _plural(n: int, one: str, many: str) -> str:
    if not n:
        return ""
    return f"1 {one}" if n == 1 else f"{n} {many}"
