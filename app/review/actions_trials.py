"""The test runs of a unit whose findings' tests run in the repository's GitHub Actions,
started there (:class:`agents.debate.recorded_tests.TrialsElsewhere`): no verifier runs them.

Asked to start a run, it dispatches the repository's workflow (`verify.workflow`, from the
default branch): the unit's debate waits for it (:class:`agents.debate.driver.Waiting`), and
is taken up again once the result is recorded (:mod:`app.jobs.workflow_results`). The
debate's :class:`agents.debate.recorded_tests.RecordedTrials` answers a run already recorded
without asking it; a run dispatched by an earlier attempt and not yet settled is waited for
again, never dispatched twice. The pending run is recorded before the
dispatch, so a result can never arrive before the record of who waits for it, and the id of
the run GitHub says the dispatch started is added to it once GitHub says it.

Nothing runs on the App's workers: a run GitHub refuses (no permission, no workflow), one
too large for a workflow's inputs, or one past the review's `max_runs` is `not_run`, with the
reason. So is a test whose path is not free at the head or the base, as GitHub shows them: a
test written over a file of the checkout (the very code it tests) or through a symlink would
test something else, and a repository's copy of the workflow may predate the template's own
refusal of such a path. The diff alone would not tell: it names the changed files, not the
others or the symlinks on the way to them; one GraphQL request per test does.

A proven finding's test a later review follows (`follow`) may find its path taken at the
new head by the pull request itself: its author committed the test the review showed, where
it showed it. When the file there is the test, line by line whatever its line endings, it is
run there as it is, as the pull request's own test is (`own_test`: nothing written, no base
checked out; the head alone decides a followed finding), and its result is the finding's
test's. When it is another text (the author changed the test, or another file took the
path), the file is the pull request's own, and the run is `not_run`, saying so: the
finding's test is never written over it, and written beside it under another name it could
clash with it (a Go package's names declared twice) or go unfound by a runner that finds
tests by their names, and tell nothing of the finding. A finding's first run is never
written over a file: its path must be free.

A test of the pull request's own that the coder cites as evidence of intent
(:class:`agents.debate.needs.OwnTest`) is dispatched with `own_test`: the workflow runs it at
the head as it is there, writing nothing and checking out no base. It must be a file at the
head. A repository's copy of the workflow older than that input refuses the dispatch, and
the run is `not_run`, with GitHub's reason. A copy older than the pre-flight's inputs
(Go's `environment_folder`) refuses them too: the run is dispatched again without them, and
its test runs there unchecked, as it did before the pre-flight.
"""

import logging
import secrets
import time
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Protocol

from agents.debate.needs import OwnTest, Run, TrialResult
from agents.debate.recorded_tests import RecordedRun
from agents.protocol import Patch, Reproduction
from app.events import PullRequestRef
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.github.models import FileAt, PathKind
from app.store.plans import ActionsTesting
from app.store.workflow_runs import PendingRun, WorkflowRuns
from app.verification.workflow import RUN_TITLE, dispatch_inputs, not_run, without_preflight
from policies.safety import is_safe_relative
from policies.verify import reproduction_problem

log = logging.getLogger(__name__)

OWN_TEST_CONTENT = "(the pull request's own test: run as it is at the head, not written)"
"""What a run of the pull request's own test sends as the test's content, which is not
written."""
DIFFERS = (
    "{path} at the head is the pull request's own file now, and differs from the finding's "
    "test: the finding's test is not run over it"
)
"""Why a followed test is not run at a head where another text holds its path."""
REFUSED = {
    403: "the App may not run workflows in this repository (it needs actions: write)",
    404: "the workflow {workflow} is not on the repository's {branch} branch",
}


class TrialsOf(Protocol):
    """Whose tests are dispatched: a unit's (:class:`app.store.plans.UnitPlan`), or the
    proven findings a review follows (:mod:`app.review.following`), under a number past its
    last unit."""

    @property
    def run_id(self) -> str: ...

    @property
    def ref(self) -> PullRequestRef: ...

    @property
    def number(self) -> int: ...

    @property
    def tests(self) -> ActionsTesting | None: ...


class ActionsTrials:
    """Starts one unit's findings' tests in the repository's workflow, by dispatching it
    (:class:`agents.debate.recorded_tests.TrialsElsewhere`); with `follow`, the review's
    proven findings' tests again at its head, for the coordinator to wait for."""

    def __init__(
        self,
        github: InstallationClient,
        runs: WorkflowRuns,
        plan: TrialsOf,
        attempt: int,
        *,
        follow: bool = False,
    ) -> None:
        assert plan.tests is not None
        self.github = github
        self.actions = github.actions
        self.runs = runs
        self.plan = plan
        self.tests: ActionsTesting = plan.tests
        self.attempt = attempt
        self.follow = follow

    @property
    def command(self) -> str:
        return self.tests.command

    async def start(self, run: Run, digest: str) -> TrialResult | None:
        """Dispatch `run`; None once it is under way (by this attempt or an earlier one), or
        what it shows without running (not run, and why)."""
        shown = await self._dispatch(_Asked.of(run), digest)
        return None if shown is None else shown.result(run)

    async def _dispatch(self, asked: "_Asked", digest: str) -> RecordedRun | None:
        reproduction, patches = asked.reproduction, asked.patches
        plan, tests, fix = self.plan, self.tests, asked.fix
        if await self.runs.dispatched(plan.run_id, plan.number, digest) is not None:
            return None
        if self.follow and (there := await self._text_at_head(reproduction.path)) is not None:
            if not _same_test(there, reproduction.content):
                return asked.not_run(DIFFERS.format(path=reproduction.path))
            asked = replace(asked, committed=True)
        elif problem := await self._problem(asked):
            return asked.not_run(problem)
        token = secrets.token_hex(16)
        inputs = dispatch_inputs(
            token,
            base=tests.base_sha,
            head=plan.ref.head_sha,
            reproduction=reproduction,
            command=tests.command,
            setup=tests.setup,
            patches=patches,
            own_test=asked.own or asked.committed,
        )
        if isinstance(inputs, str):
            return asked.not_run(inputs)
        if not await self.runs.count_dispatch(plan.run_id, tests.max_runs):
            return asked.not_run(f"the review's {tests.max_runs} test runs are spent")
        pending = self._pending(token, digest, reproduction.path, fix, own=asked.own)
        await self.runs.wait_for(pending)
        try:
            started = await self._dispatched(inputs)
        except GitHubError as exc:
            await self.runs.forget(pending)
            await self.runs.uncount_dispatch(plan.run_id)
            reason = REFUSED.get(exc.status or 0, f"GitHub refused the workflow's dispatch: {exc}")
            log.warning("the workflow %s was not dispatched: %s", tests.workflow, exc)
            return asked.not_run(reason.format(workflow=tests.workflow, branch=tests.branch))
        if started is not None:
            await self.runs.pin(token, started)
        log.info("dispatched %s for %s", RUN_TITLE.format(token=token), reproduction.path)
        return None

    async def _dispatched(self, inputs: dict[str, str]) -> int | None:
        """Dispatch the workflow with `inputs`, the id of the run it started if GitHub says
        it; to a repository's copy of the workflow older than the pre-flight's inputs, again
        without them: the test runs as that copy runs it, unchecked."""
        plan, tests = self.plan, self.tests
        try:
            return await self.actions.dispatch(plan.ref, tests.workflow, tests.branch, inputs)
        except GitHubError as exc:
            older = without_preflight(inputs, exc.body) if exc.status == 422 else None
            if older is None:
                raise
        log.info("the workflow %s predates the pre-flight's inputs: sent without", tests.workflow)
        return await self.actions.dispatch(plan.ref, tests.workflow, tests.branch, older)

    async def _problem(self, asked: "_Asked") -> str | None:
        """Why `asked` may not run: a reviewer's test whose path is not free, the pull
        request's own test that is not a file at the head."""
        path = asked.reproduction.path
        if not asked.own:
            return reproduction_problem(path) or await self._occupied(path)
        if not is_safe_relative(path):
            return f"{path!r} is not a path inside the repository"
        head = FileAt(self.plan.ref.head_sha, path)
        kinds = await self.github.kinds(self.plan.ref, [head])
        return None if kinds.get(head) is PathKind.FILE else f"{path} is not a file at the head"

    async def _text_at_head(self, path: str) -> str | None:
        """The text of the file at `path` at the head, if a test may be written there and a
        text is there (a file's, not binary nor too large for GitHub to give)."""
        if reproduction_problem(path):
            return None
        head = FileAt(self.plan.ref.head_sha, path)
        return (await self.github.texts(self.plan.ref, [head])).get(head)

    async def _occupied(self, path: str) -> str | None:
        """Why the test may not be written at `path` in the workflow's checkouts of the head
        and the base (something is there already, or a parent is a file or a symlink), or
        None."""
        parts = PurePosixPath(path).parts
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        sides = {"head": self.plan.ref.head_sha, "base": self.tests.base_sha}
        asked = [FileAt(commit, prefix) for commit in sides.values() for prefix in prefixes]
        kinds = await self.github.kinds(self.plan.ref, asked)
        for side, commit in sides.items():
            for prefix in prefixes:
                kind = kinds.get(FileAt(commit, prefix))
                if kind is None:
                    return f"GitHub did not say whether {path} is free at the {side}"
                if prefix == path and kind is not PathKind.NOTHING:
                    return f"{path} exists already at the {side}: a reproduction is a new file"
                if prefix != path and kind is PathKind.FILE:
                    return f"{path} goes through {prefix}, which is not a directory at the {side}"
        return None

    def _pending(
        self, token: str, digest: str, test: str, fix: bool, *, own: bool = False
    ) -> PendingRun:
        """The record of run `token`, about to be dispatched."""
        plan, tests, now = self.plan, self.tests, time.time()
        return PendingRun(
            token=token,
            run_id=plan.run_id,
            unit=plan.number,
            attempt=self.attempt,
            digest=digest,
            ref=plan.ref,
            workflow=tests.workflow,
            branch=tests.branch,
            test=test,
            command=tests.command,
            fix=fix,
            own=own,
            follow=self.follow,
            dispatched_at=now,
            deadline=now + tests.timeout_minutes * 60,
            minutes=tests.timeout_minutes,
        )


def _same_test(there: str, test: str) -> bool:
    """Whether the text `there` is the test `test`, line by line: whatever their line endings
    (CRLF, CR or LF) and however many line ends close them."""

    def lines(text: str) -> str:
        return text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")

    return lines(there) == lines(test)


@dataclass(frozen=True)
class _Asked:
    """What one dispatch runs: a reviewer's test (with a fix's patches), or the pull
    request's own test at the head (`own`)."""

    reproduction: Reproduction
    patches: tuple[Patch, ...] = ()
    own: bool = False
    committed: bool = False
    """A followed test the pull request committed as it is, where it is: run at the head as
    the file there is (as its own test is), its result the finding's test's."""

    @classmethod
    def of(cls, run: Run) -> "_Asked":
        if isinstance(run, OwnTest):
            return cls(Reproduction(path=run.test, content=OWN_TEST_CONTENT), own=True)
        return cls(run.reproduction, run.patches)

    @property
    def fix(self) -> bool:
        return bool(self.patches)

    def not_run(self, reason: str) -> RecordedRun:
        return not_run(self.reproduction.path, self.fix, reason, own=self.own)
