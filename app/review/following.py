"""A later review's runs of the proven findings' tests it follows, in the repository's Actions.

The pull request's latest run names the findings a review follows
(:func:`app.publishing.following.followed`). As the review is planned, the coordinator
dispatches each one's test at the review's head, the way a unit dispatches its own
(:class:`app.review.actions_trials.ActionsTrials`, recorded under a number past the run's
last unit, :class:`app.store.workflow_runs.UnitTestRuns`): once per push per test, however
often the coordinator is picked up again, and no model is asked. Once the units are debated,
it waits for their results (a settled run wakes it, and it looks every half heartbeat
anyway); a run past its deadline is settled not run by the janitor, as any other.

The findings a person ended since (a writer resolved the thread, or marked the finding 👎)
are not run: the pull request's threads are read first, as publishing reads them.

A newer push supersedes the review, and with it its runs: their results are recorded under
the superseded run and read by nobody.

A writer's `/tiebreak resolve` ends every open finding of the pull request's latest run, and
so the following of each proven one (:func:`unfollow`): Tiebreak says so in its thread and
resolves it, as at `/tiebreak resolve <reason>` there, and later reviews no longer run its
test.
"""

from dataclasses import dataclass

from agents.debate.driver import Waiting
from agents.debate.needs import Trial
from agents.debate.recorded_tests import RecordedTrials
from agents.verification import Verification
from app.events import PullKey, PullRequestRef
from app.github.installation_client import InstallationClient
from app.publishing import follow_text
from app.publishing.following import Followed, ended, followed, thread_of
from app.publishing.publication import FollowUp, RunRecord
from app.publishing.rereview import ThreadState
from app.review.actions_trials import ActionsTrials
from app.review.finishing import read_threads
from app.review.posted import posted_threads, reply, resolve
from app.review.run_context import RunContext
from app.store.live import LiveRuns
from app.store.plans import ActionsTesting, RunPlan
from app.store.workflow_runs import UnitTestRuns, WorkflowRuns


async def unfollow(
    github: InstallationClient, pull: PullKey, latest: RunRecord, login: str, *, but: int | None
) -> None:
    """End the following of every proven finding `latest` (the pull request's latest run)
    follows, as `login`'s `/tiebreak resolve` ends every open finding: a reply in its thread,
    then the thread resolved, which later reviews read as a writer's ending. The thread
    starting with comment `but` (the command's own, answered there) and threads Tiebreak
    resolved already are left as they are."""
    tests = followed(latest.review)
    if not tests:
        return
    threads = await posted_threads(github, pull)
    for each in tests:
        thread = thread_of(each, latest, threads)
        if thread is None or thread.comment_id == but or thread.state is ThreadState.BY_TIEBREAK:
            continue
        said = follow_text.resolved(login, each.test.path)
        if await reply(github, pull, thread.comment_id, said):
            await resolve(github, pull, [thread.comment_id])


@dataclass(frozen=True)
class _FollowedTests:
    """Where the followed tests' runs are recorded (:class:`ActionsTrials`' `plan`): the
    run's, under the number past its last unit."""

    run_id: str
    ref: PullRequestRef
    number: int
    tests: ActionsTesting | None


class Following:
    """The followed findings' tests of one review run, dispatched and waited for."""

    def __init__(
        self, context: RunContext, live: LiveRuns, plan: RunPlan, earlier: RunRecord | None
    ) -> None:
        self.context = context
        self.live = live
        self.plan = plan
        self.earlier = earlier
        self.tests = followed(earlier.review if earlier is not None else None)
        if plan.tests is None:  # the review runs no tests: nothing is followed
            self.tests = []
        self.ended: list[Followed] = []
        """The followed findings a person ended, whose tests are not run."""
        place = _FollowedTests(plan.run_id, plan.ref, plan.units, plan.tests)
        self.trials: RecordedTrials | None = None
        if self.tests:
            runs = WorkflowRuns(live.redis)
            self.trials = RecordedTrials(
                ActionsTrials(context.github, runs, place, attempt=1, follow=True),
                UnitTestRuns(live.redis, plan.run_id, plan.units),
            )

    async def start(self) -> None:
        """Dispatch every followed test not yet dispatched for this run, but those of the
        findings a person ended."""
        if self.trials is None or self.earlier is None:
            return
        gone = ended(self.tests, self.earlier, await read_threads(self.context))
        self.ended = [f for f in self.tests if f.key in gone]
        self.tests = [f for f in self.tests if f.key not in gone]
        if self.tests:
            await self.trials.run(self._asked())

    async def follow_ups(self) -> list[FollowUp]:
        """What each followed test showed at the head, once every run is in."""
        ended = [FollowUp.unrun(f.key, f.result, f.test.path) for f in self.ended]
        if self.trials is None or not self.tests:
            return ended
        while True:
            ran = await self.trials.run(self._asked())
            if not isinstance(ran, Waiting):
                break
            await self.live.wait(self.plan.run_id, self.live.heartbeat / 2)
        shown = [r for r in ran if isinstance(r, Verification)]
        tested = zip(self.tests, shown, strict=True)
        return [FollowUp.of(f.key, f.result, v) for f, v in tested] + ended

    def _asked(self) -> tuple[Trial, ...]:
        return tuple(Trial(f.test) for f in self.tests)
