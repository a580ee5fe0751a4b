"""Whether a review's head is still its pull request's: GitHub's to say, not the order
deliveries arrived in.

Redis keeps each pull request's latest head as deliveries are heard (:mod:`app.store.heads`).
A delivery can be heard after a newer one, so when Redis knows another head than a run's,
GitHub is asked: if it still has the run's head, the run goes on and claims the latest head
back, so that the next push continues from it.
"""

import logging

from app.github.errors import GitHubError
from app.review.run_context import RunStart

log = logging.getLogger(__name__)


async def newer_head(run: RunStart) -> str | None:
    """The pull request's head, if it moved on from `run`'s. When Redis knows another latest
    head, GitHub decides: that head's push may have been heard after this one's without being
    newer, and then the run claims the latest head back."""
    heads = run.deps.heads()
    heard = await heads.latest(run.ref)
    if heard is None or heard == run.ref.head_sha:
        return None
    head = (await run.github.pull_request(run.ref)).head_sha
    if head != run.ref.head_sha:
        return head
    # Left as it is if another delivery moved it meanwhile: whichever head that was, GitHub is
    # asked again before the run publishes.
    await heads.claim(run.ref, run.run_id, heard)
    return None


async def before_start(run: RunStart) -> bool:
    """Whether a newer head makes `run` pointless before it starts."""
    try:
        return await newer_head(run) is not None
    except GitHubError as exc:
        # Started, the run reads the pull request again, and fails clearly (on its check run)
        # if GitHub still cannot answer.
        log.warning("could not ask GitHub for the head of %s: %s", run.ref.key, exc)
        return False


async def aborted_by_push(run: RunStart) -> bool:
    """Whether `run`'s job was aborted because Redis knows a newer head: only a push from the
    run's head, or a review GitHub confirmed, moves it on (:mod:`app.store.heads`), so GitHub
    need not be asked."""
    return await run.deps.heads().superseded(run.ref)


async def latest_heard(run: RunStart) -> str | None:
    """The latest head Redis knows of `run`'s pull request."""
    return await run.deps.heads().latest(run.ref)
