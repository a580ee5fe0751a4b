"""Landing a result on a pull request: the review, the summary, the check run, the label.

Shared by the review job, the hearings and the commands that change a finished review
(resolve, arbitrate). A check run that asks for action offers the buttons that take it.
"""

import asyncio
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property

from agents.diff import Diff
from agents.rebase import FindingKey
from agents.review import Review
from app.bodies import CheckRunAction, CheckRunUpdate, Conclusion, ReviewDraft
from app.events import PullKey, PullRequestRef
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.github.models import IssueComment
from app.publishing.markers import run_id_of
from app.publishing.plan import plan
from app.publishing.publication import (
    CheckRunResult,
    Conversation,
    LabelAction,
    Publication,
    RunInfo,
    RunRecord,
)
from app.review.posted import answer, note, resolve, write_summary
from app.review.together import together

log = logging.getLogger(__name__)

LABEL_COLOR = "d93f0b"
LABEL_ABOUT = "Tiebreak's tester and coder could not agree on a finding"

BUTTONS = [
    CheckRunAction(
        label="Arbitrate", description="Send open findings to the arbiter", identifier="arbitrate"
    ),
    CheckRunAction(
        label="Accept", description="Accept the open findings as they are", identifier="accept"
    ),
]


PUBLISH_ATTEMPTS = 3
"""Tries at posting one review when GitHub answers 5xx (each after checking it is not there),
1 s and then 4 s apart, as githubkit spaces its own retries."""


@dataclass(frozen=True)
class RunResult:
    """What a run lands: its review of `diff`, as `run` shows it, reconciled with what the
    pull request already shows (`conversation`; None: nothing to reconcile with)."""

    review: Review
    diff: Diff
    run: RunInfo
    conversation: Conversation | None = None
    unposted: bool = False
    """No earlier attempt of the run can have posted its review (it is not resuming a dead
    coordinator's): GitHub is not asked first whether the pull request has it."""

    @cached_property
    def planned(self) -> Publication:
        """What landing it sends GitHub, planned before anything is posted: its label and its
        check run's conclusion stand whatever GitHub answers the review."""
        return plan(self.review, self.diff, run=self.run, conversation=self.conversation)


async def publish_review(
    github: InstallationClient,
    ref: PullRequestRef,
    result: RunResult,
    comments: Sequence[IssueComment],
) -> Publication:
    """Land `result` on the pull request once, whatever GitHub answers, and return what was
    landed: the run's new inline comments as one review and, beside it, the summary comment
    edited (or written); then replies on the threads of findings that are gone, and on those of
    the proven findings whose tests ran again a note (edited in place) or, their tests
    passing, a reply and the thread resolved. `comments`: Tiebreak's comments in the
    conversation, read under the landing lock (the summary is among them; posting a review
    adds none).

    Idempotent: a run whose review the pull request already has (its hidden marker) is not
    posted again, and a 5xx answer (which may hide a review that was posted) is followed by
    that check before the next try. A 422 — a comment GitHub would not take, which planning
    is meant to rule out — falls back to no inline comments, every finding in the summary, so
    the outcome is never lost: the summary, written beside the review, is written again. The
    summary is edited only if it changed; a reply already given is known from its marker
    before the run plans replies.
    """
    planned = result.planned
    publication, _ = await together(
        post_inline(github, ref, result), write_summary(github, ref, planned.summary, comments)
    )
    if publication.summary != planned.summary:  # refused: every finding in the summary
        await write_summary(github, ref, publication.summary)
    await answer(github, ref, publication.replies)
    await note(github, ref, publication.notes)
    await resolve(github, ref, publication.resolve)
    return publication


async def post_inline(
    github: InstallationClient, ref: PullRequestRef, result: RunResult
) -> Publication:
    """Post the run's review of new inline comments, once; return what was planned (with
    every finding in the summary instead if GitHub refused the comments)."""
    review, diff, conversation = result.review, result.diff, result.conversation
    publication = result.planned
    if publication.review is not None and not await _post(
        github, ref, publication.review, unposted=result.unposted
    ):
        log.error("GitHub refused the review of %s; every finding goes in the summary", ref.key)
        inline_off = result.run.model_copy(update={"max_inline_comments": 0})
        publication = plan(review, diff, run=inline_off, conversation=conversation)
    return publication


async def _post(
    github: InstallationClient, ref: PullRequestRef, draft: ReviewDraft, *, unposted: bool = False
) -> bool:
    """Post `draft` unless the pull request has it (a review of the App's with its run's
    marker: a review anyone else wrote may carry it too); False if GitHub refused it with
    422. `unposted`: no earlier attempt can have posted it, so GitHub is not asked first."""
    run_id = run_id_of(draft.body)

    async def posted() -> bool:
        return run_id in {run_id_of(body) for body in await github.own_review_bodies(ref)}

    if not unposted and await posted():
        return True
    attempt = 1
    while True:
        try:
            await github.create_review(ref, draft)
            return True
        except GitHubError as exc:
            status = exc.status or 0
            if status == 422:
                log.error("GitHub refused the review of %s: %s", ref.key, exc)
                return False
            if status < 500 or attempt == PUBLISH_ATTEMPTS:
                raise
        # A 5xx may hide a review that was posted: looked for before the next try.
        await asyncio.sleep(attempt**2 * github.retry_backoff)
        attempt += 1
        if await posted():
            return True


async def complete_check_run(
    github: InstallationClient,
    ref: PullRequestRef,
    check_id: int,
    result: CheckRunResult,
    *,
    details_url: str | None = None,
) -> None:
    """Complete the check run with `result`, annotations in as many updates as they need;
    its "Details" link goes to `details_url` (the run's transcript) when there is one."""
    first, *more = result.outputs()
    completion = CheckRunUpdate(
        status="completed",
        conclusion=result.conclusion,
        completed_at=now(),
        output=first,
        actions=BUTTONS if result.conclusion is Conclusion.ACTION_REQUIRED else [],
        details_url=details_url,
    )
    await github.update_check_run(ref, check_id, completion)
    # GitHub appends the annotations of each further update to those already there.
    for output in more:
        await github.update_check_run(ref, check_id, CheckRunUpdate(output=output))


async def set_label(
    github: InstallationClient, pull: PullKey, action: LabelAction, name: str
) -> None:
    """Add or remove the label `name` (the config's choice) that marks unresolved findings."""
    if action is LabelAction.ADD:
        await github.ensure_label(pull, name, LABEL_COLOR, LABEL_ABOUT)
        await github.add_label(pull, name)
    else:
        await github.remove_label(pull, name)


async def land_rulings(
    github: InstallationClient,
    record: RunRecord,
    review: Review,
    ruled: Collection[FindingKey],
    whole: Publication,
    command: str,
) -> None:
    """Comment on the findings `ruled` as `review` ends them, in one review of the command
    `command` (its marker names the run and the command), then bring the summary, check run
    and label of `record`'s pull request to `whole`."""
    settled = Review(
        units=[
            u.model_copy(
                update={"findings": [f for f in u.findings if (u.unit_id, f.finding.id) in ruled]}
            )
            for u in review.units
        ]
    )
    run = record.run_info()
    ruling = run.model_copy(update={"run_id": f"{run.run_id}:ruling-{command}"})
    diff = Diff.parse(record.diff, allow_empty=True)
    await post_inline(github, record.ref, RunResult(settled, diff, ruling))
    await restate(github, record, whole)


async def restate(github: InstallationClient, record: RunRecord, publication: Publication) -> None:
    """Bring the summary comment, the check run and the label of `record`'s pull request to
    `publication`, after a command or a reply changed the run's findings."""
    await write_summary(github, record.ref, publication.summary)
    await complete_check_run(
        github,
        record.ref,
        record.check_run_id,
        publication.check,
        details_url=record.details_url,
    )
    await set_label(github, record.ref, publication.label, publication.label_name)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
