"""The check run of one review run (:mod:`app.jobs.review`): opened in progress, with the
deadline past which the janitor completes it, and completed with the config's problems and
the transcript's link beside whatever the run came to — published, not reviewed, stopped by a
person, superseded by a push or failed.

It holds what every completion shows besides its result: the repository's config (the run's
label and choices, read at the start or picked up from the plan), the config's problems, and
the transcript's link once the run has one.
"""

import logging
import time
from dataclasses import dataclass, field

from app.bodies import NewCheckRun
from app.events import PullRequestRef
from app.github.errors import GitHubError
from app.github.protocol import InstallationClient
from app.publishing import check_runs
from app.publishing.publication import CheckRunResult, RunInfo
from app.review.dependencies import ReviewDeps
from app.review.failures import public_reason
from app.review.landing import complete_check_run, now
from app.review.superseding import Superseding
from app.store.pulls import OpenCheck
from policies.config import RepoConfig
from policies.config_file import ConfigProblem

log = logging.getLogger(__name__)


@dataclass
class RunStep:
    """What every step of one review run works with: the worker's deps, the installation's
    client, the pull request's head and the run's id."""

    deps: ReviewDeps
    github: InstallationClient
    ref: PullRequestRef
    run_id: str


@dataclass
class ReviewCheck(RunStep):
    """The check run of one review run, and what its completions show beside the result."""

    heads: Superseding
    config: RepoConfig = field(default_factory=RepoConfig)
    config_problems: list[ConfigProblem] = field(default_factory=list)
    id: int | None = None
    """The check run's id, once it is open."""
    details_url: str | None = None
    """The link to the run's transcript, once there is one."""

    @property
    def run_info(self) -> RunInfo:
        return RunInfo.of(self.config, run_id=self.run_id, head_sha=self.ref.head_sha)

    async def open(self) -> int:
        """Create the run's check run, in progress (the job is running: it was queued only
        until now), which the janitor completes if this job never does."""
        check = NewCheckRun(status="in_progress", started_at=now(), external_id=self.run_id)
        check_id = await self.github.create_check_run(self.ref, check)
        # A review whose tests run in Actions may wait for them up to their timeout.
        waits = self.config.verify.timeout_minutes * 60 if self.config.verify.in_actions else 0
        deadline = time.time() + self.deps.check_deadline + waits
        await self.deps.pulls.open_check(self._open_check(check_id), deadline)
        return check_id

    def _open_check(self, check_id: int) -> OpenCheck:
        return OpenCheck(ref=self.ref, check_run_id=check_id, run_id=self.run_id)

    async def complete(self, check_id: int, result: CheckRunResult) -> None:
        await complete_check_run(
            self.github,
            self.ref,
            check_id,
            check_runs.with_config_problems(result, self.config_problems),
            details_url=self.details_url,
        )
        await self.deps.pulls.close_check(self._open_check(check_id))

    async def cancelled(self, check_id: int) -> bool:
        """Complete the check run of a job arq cancelled, if a person stopped it or a newer
        push superseded it; return whether it did (a shutdown leaves the run to resume)."""
        stopped_by = await self._stopped_by()
        if stopped_by is not None:
            await self.complete(check_id, check_runs.stopped(stopped_by, run=self.run_info))
        elif await self.heads.aborted_by_push():
            await self.complete_superseded(check_id)
        else:
            return False
        return True

    async def report_failure(self, exc: Exception) -> None:
        try:
            if self.id is None:
                self.id = await self.open()
            await self.complete(self.id, check_runs.failed(public_reason(exc), run=self.run_info))
        except GitHubError as report:
            # Without a check run there is nowhere to report; the log is the only trace.
            log.error("could not report the failure on %s: %s", self.ref.key, report)

    async def complete_superseded(self, check_id: int, newer: str | None = None) -> None:
        """Complete the check run as superseded by `newer`, by default the latest head Redis
        knows."""
        if newer is None:
            newer = await self.heads.latest_heard()
        await self.complete(check_id, check_runs.superseded(newer or "", run=self.run_info))

    async def _stopped_by(self) -> str | None:
        return await self.deps.pulls.stopped_by(self.run_id)
