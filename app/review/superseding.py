"""Whether a review's head is still its pull request's: GitHub's to say, not the order
deliveries arrived in.

Redis keeps each pull request's latest head as deliveries are heard (:mod:`app.store.heads`).
A delivery can be heard after a newer one, so when Redis knows another head than a run's,
GitHub is asked: if it still has the run's head, the run goes on and claims the latest head
back, so that the next push continues from it.
"""

import logging

from app.events import PullRequestRef
from app.github.errors import GitHubError
from app.github.protocol import InstallationClient
from app.review.dependencies import ReviewDeps

log = logging.getLogger(__name__)


class Superseding:
    """The head checks of one review run."""

    def __init__(
        self, deps: ReviewDeps, github: InstallationClient, ref: PullRequestRef, run_id: str
    ) -> None:
        self.deps = deps
        self.github = github
        self.ref = ref
        self.run_id = run_id

    async def newer_head(self) -> str | None:
        """The pull request's head, if it moved on from this run's. When Redis knows another
        latest head, GitHub decides: that head's push may have been heard after this one's
        without being newer, and then this run claims the latest head back."""
        heads = self.deps.heads()
        heard = await heads.latest(self.ref)
        if heard is None or heard == self.ref.head_sha:
            return None
        head = (await self.github.pull_request(self.ref)).head_sha
        if head != self.ref.head_sha:
            return head
        # Left as it is if another delivery moved it meanwhile: whichever head that was,
        # GitHub is asked again before this run publishes.
        await heads.claim(self.ref, self.run_id, heard)
        return None

    async def before_start(self) -> bool:
        """Whether a newer head makes the run pointless before it starts."""
        try:
            return await self.newer_head() is not None
        except GitHubError as exc:
            # Started, the run reads the pull request again, and fails clearly (on its check
            # run) if GitHub still cannot answer.
            log.warning("could not ask GitHub for the head of %s: %s", self.ref.key, exc)
            return False

    async def aborted_by_push(self) -> bool:
        """Whether the job was aborted because Redis knows a newer head: only a push from
        this run's head, or a review GitHub confirmed, moves it on (:mod:`app.store.heads`),
        so GitHub need not be asked."""
        return await self.deps.heads().superseded(self.ref)

    async def latest_heard(self) -> str | None:
        """The latest head Redis knows of the pull request."""
        return await self.deps.heads().latest(self.ref)
