"""The check run of a review that did not publish a review, or whose outcome a person changed.

A review that crashed, was superseded, stopped, timed out, or found Tiebreak turned off or the
day's tokens spent still completes its check run, with a title and summary that say why. Any
check run says when the repository's config was ignored, and what the config left out.
"""

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from app.bodies import LIMIT, Annotation, AnnotationLevel, Conclusion
from app.publishing import check_run_text
from app.publishing import markdown as md
from app.publishing.markers import SUMMARY_MARKER
from app.publishing.publication import (
    ANNOTATIONS_PER_REQUEST,
    CheckRunResult,
    Publication,
    RunInfo,
)
from policies.config import CONFIG_PATH
from policies.config_file import ConfigProblem


def failed(reason: str, *, run: RunInfo) -> CheckRunResult:
    """The check run of a review that crashed or could not start."""
    details = str(run.details_url) if run.details_url else None
    return CheckRunResult(
        conclusion=Conclusion.FAILURE,
        title="Tiebreak could not finish this review",
        summary=check_run_text.failure(
            reason, run_id=run.run_id, sha=run.head_sha, details_url=details
        ),
    )


def superseded(newer_sha: str, *, run: RunInfo) -> CheckRunResult:
    """The check run of a review stopped because a newer commit was pushed.

    `newer_sha` may be unknown (empty): the run still completes, without naming it.
    """
    newer = newer_sha[:7] if re.fullmatch(r"[0-9a-fA-F]{7,64}", newer_sha) else None
    return CheckRunResult(
        conclusion=Conclusion.CANCELLED,
        title=f"Superseded by a newer push ({newer})" if newer else "Superseded by a newer push",
        summary=check_run_text.superseded(run_id=run.run_id, sha=run.head_sha, newer=newer),
    )


def stopped(login: str, *, run: RunInfo) -> CheckRunResult:
    """The check run of a review someone stopped with `/tiebreak stop`."""
    return CheckRunResult(
        conclusion=Conclusion.CANCELLED,
        title=f"Stopped by @{login}"[:255],
        summary=check_run_text.stopped(login, run_id=run.run_id, sha=run.head_sha),
    )


def timed_out(minutes: int, *, run_id: str, head_sha: str) -> CheckRunResult:
    """The check run of a review that never finished: the janitor completes it."""
    return CheckRunResult(
        conclusion=Conclusion.TIMED_OUT,
        title="The review did not finish",
        summary=check_run_text.timed_out(minutes, run_id=run_id, sha=head_sha),
    )


def resolved(login: str, summary: str) -> CheckRunResult:
    """A finished run whose open findings a person accepted with `/tiebreak resolve`."""
    return CheckRunResult(
        conclusion=Conclusion.SUCCESS,
        title=f"Resolved by @{login}"[:255],
        summary=check_run_text.resolved(login, summary)[:LIMIT],
    )


def resolved_summary(login: str, publication: Publication) -> str:
    """The summary comment of a finished run whose open findings a person accepted."""
    _, body = publication.summary.split("\n", 1)
    return f"{SUMMARY_MARKER}\n{check_run_text.resolved(login, body)}"[:LIMIT]


def disabled(*, run: RunInfo) -> CheckRunResult:
    """The check run of a pull request in a repository whose config turns Tiebreak off."""
    return CheckRunResult(
        conclusion=Conclusion.SKIPPED,
        title="Tiebreak is turned off for this repository",
        summary=check_run_text.disabled(run_id=run.run_id),
    )


def daily_budget_reached(
    *, spent: int, cap: int, resets_at: datetime, run: RunInfo
) -> CheckRunResult:
    """The check run of a review that did not start: its installation's daily allowance of
    tokens is spent."""
    return CheckRunResult(
        conclusion=Conclusion.NEUTRAL,
        title="Daily budget reached",
        summary=check_run_text.daily_budget_reached(
            spent=spent, cap=cap, resets_at=resets_at, run_id=run.run_id, sha=run.head_sha
        ),
    )


def scope_notes(
    *, excluded: int, hidden: int, min_severity: str, head_not_read: str | None = None
) -> tuple[str, ...]:
    """Lines for the summary saying what the config kept out of the review: files outside its
    `paths`, findings below its `min_severity`; and why the repository at the head was not
    read whole (`head_not_read`), when it was not."""
    notes = []
    if head_not_read:
        notes.append(
            f"_The repository at the head was not read ({md.inline(head_not_read, 300)}): "
            "the agents read the changed files alone._"
        )
    if excluded:
        files = "file is" if excluded == 1 else "files are"
        was = "was" if excluded == 1 else "were"
        notes.append(
            f"_{excluded:,} changed {files} outside the config's `paths` and {was} not reviewed._"
        )
    if hidden:
        findings = "finding" if hidden == 1 else "findings"
        notes.append(
            f"_{hidden:,} {findings} below the config's `min_severity` ({min_severity}) not shown._"
        )
    return tuple(notes)


def with_config_problems(
    result: CheckRunResult, problems: Sequence[ConfigProblem]
) -> CheckRunResult:
    """`result`, saying why the config was ignored (or what it warns of, when only warnings),
    with an annotation on each problem's line of the config file."""
    if not problems:
        return result
    sources = dict.fromkeys(p.source for p in problems)
    notes = [_config_notes(s, [p for p in problems if p.source == s]) for s in sources]
    summary = "\n\n".join([result.summary, *notes])
    own = [p for p in problems if p.source is None]
    ignored = any(not p.warning for p in own)
    title = "Tiebreak ignored this config file" if ignored else "Tiebreak warns about this line"
    annotations = [
        Annotation(
            path=CONFIG_PATH,
            start_line=p.line,
            end_line=p.line,
            annotation_level=AnnotationLevel.WARNING,
            title=title,
            message=md.clip(p.message, md.PROSE_LIMIT),
        )
        for p in own
        if p.line is not None
    ][:ANNOTATIONS_PER_REQUEST]
    batches = result.annotation_batches
    return result.model_copy(
        update={
            "summary": summary[:LIMIT],
            "annotation_batches": [annotations, *batches] if annotations else batches,
        }
    )


def _config_notes(source: str | None, problems: Sequence[ConfigProblem]) -> str:
    """What is wrong with one config file: the repository's own (`source` None), or its
    organisation's defaults."""
    name = source or CONFIG_PATH
    if not any(not p.warning for p in problems):
        heading = f"**{name} was read, with warnings**"
    elif source is None:
        heading = f"**{name} was ignored** (defaults used)"
    else:
        heading = f"**{name} was ignored** (the organisation's defaults left out)"
    notes = "\n".join(f"- {md.inline(str(replace(p, source=None)), 500)}" for p in problems)
    return f"{heading}:\n{notes}"
