"""What starts a unit's findings' tests in the repository's workflow, on a real Redis: what
it dispatches, what it refuses to (a test whose path is not free at the head or the base among
them), and how often."""

from dataclasses import dataclass, field

import pytest
from arq.connections import ArqRedis

from agents.debate.needs import Trial, TrialResult
from agents.debate.recorded_tests import run_digest
from agents.protocol import Patch, Reproduction
from agents.verification import Evidence, FixCheck, Verification
from app.github.errors import GitHubError
from app.github.models import Dispatch, FileAt, WorkflowRun
from app.review.actions_trials import ActionsTrials
from app.store.plans import ActionsTesting, UnitPlan
from app.store.workflow_runs import WorkflowRuns
from app.verification.workflow import MAX_INPUT_CHARS
from policies.config import Models
from policies.debate import DebatePolicy
from tests.fakes.installation import FakeInstallation
from tests.scenarios.reviews import BASE, REF

TEST = Reproduction(path="tests/test_bug.py", content="assert False\n")


@dataclass
class Dispatches:
    """GitHub Actions that keeps what it was asked to dispatch, or refuses with `status`."""

    status: int | None = None
    inputs: list[dict[str, str]] = field(default_factory=list)

    async def check_workflow(self, ref: object, workflow: str) -> None: ...

    async def dispatch(
        self, ref: object, workflow: str, branch: str, inputs: dict[str, str]
    ) -> int | None:
        if self.status is not None:
            raise GitHubError("refused", status=self.status)
        self.inputs.append(inputs)
        return None

    async def find_run(
        self, ref: object, dispatch: Dispatch, run_id: int | None = None
    ) -> WorkflowRun | None:
        raise AssertionError("not asked")

    async def artifact(self, ref: object, run_id: int, name: str, cap: int) -> bytes | None:
        return None


def actions_trials(
    redis: ArqRedis,
    actions: Dispatches,
    max_runs: int = 5,
    github: FakeInstallation | None = None,
    *,
    follow: bool = False,
) -> ActionsTrials:
    tests = ActionsTesting(
        workflow="tiebreak-verify.yml",
        branch="main",
        base_sha=BASE,
        command="python -m pytest {test}",
        max_attempts=2,
        max_runs=max_runs,
        timeout_minutes=20,
    )
    plan = UnitPlan(
        run_id="run-verifier",
        ref=REF,
        number=0,
        unit_id="u0",
        diff="",
        policy=DebatePolicy(),
        models=Models(),
        tests=tests,
    )
    github = github or FakeInstallation()
    github.actions = actions
    return ActionsTrials(github, WorkflowRuns(redis), plan, attempt=1, follow=follow)


async def started(trials: ActionsTrials, test: Reproduction, *patches: Patch) -> TrialResult | None:
    """What starting a run in Actions answered: None once it is under way."""
    run = Trial(test, patches)
    return await trials.start(run, run_digest(trials.command, test, patches))


async def shows(trials: ActionsTrials, test: Reproduction) -> Verification:
    shown = await started(trials, test)
    assert isinstance(shown, Verification)
    return shown


async def test_a_test_is_dispatched_once_and_waited_for_again(redis: ArqRedis) -> None:
    actions = Dispatches()
    shown = actions_trials(redis, actions)

    first = await started(shown, TEST)
    again = await started(actions_trials(redis, actions), TEST)  # a later attempt, on any worker

    assert (first, again) == (None, None)  # both wait for the one run
    (inputs,) = actions.inputs
    assert inputs["test_content"] == TEST.content
    assert inputs["command"] == "python -m pytest tests/test_bug.py"
    assert (inputs["base"], inputs["head"], inputs["patches"]) == (BASE, REF.head_sha, "")


async def test_tests_past_the_reviews_max_runs_are_not_run(redis: ArqRedis) -> None:
    actions = Dispatches()
    shown = actions_trials(redis, actions, max_runs=1)

    assert await started(shown, TEST) is None
    second = await shows(shown, Reproduction(path="tests/test_other.py", content="x = 1\n"))

    assert second.verdict is Evidence.NOT_RUN
    assert second.reason == "the review's 1 test runs are spent"
    assert len(actions.inputs) == 1


async def test_a_fix_too_large_for_a_workflows_inputs_is_not_run(redis: ArqRedis) -> None:
    actions = Dispatches()
    big = Reproduction(path="tests/test_bug.py", content="#" * 39_000 + "\n")
    fix = Patch(path="app/payments.py", start_line=1, end_line=1, replacement="x" * 30_000)

    checked = await started(actions_trials(redis, actions), big, fix)
    assert isinstance(checked, FixCheck)

    assert checked.verified is None
    assert "too large for a workflow's inputs" in checked.reason
    assert str(MAX_INPUT_CHARS) in checked.reason
    assert actions.inputs == []


@pytest.mark.parametrize(
    ("status", "said"),
    [(403, "it needs actions: write"), (404, "is not on the repository's main branch")],
)
async def test_a_dispatch_github_refuses_is_not_run_and_not_counted(
    redis: ArqRedis, status: int, said: str
) -> None:
    refusing = actions_trials(redis, Dispatches(status=status), max_runs=1)

    shown = await shows(refusing, TEST)

    assert shown.verdict is Evidence.NOT_RUN
    assert said in shown.reason
    assert await WorkflowRuns(redis).waiting() == []
    # The refused run did not use up the review's one.
    assert await started(actions_trials(redis, Dispatches(), max_runs=1), TEST) is None


@pytest.mark.parametrize(
    ("at", "path", "said"),
    [
        (REF.head_sha, "tests/test_bug.py", "tests/test_bug.py exists already at the head"),
        (BASE, "tests/test_bug.py", "tests/test_bug.py exists already at the base"),
        (
            BASE,
            "tests",
            "tests/test_bug.py goes through tests, which is not a directory at the base",
        ),
        (REF.head_sha, "tests/test_bug.py/x", "tests/test_bug.py exists already at the head"),
    ],
)
async def test_a_test_whose_path_is_not_free_is_not_run_nor_counted(
    redis: ArqRedis, at: str, path: str, said: str
) -> None:
    github = FakeInstallation()
    github.files[FileAt(at, path)] = "def keep(): ...\n"
    actions = Dispatches()

    shown = await shows(actions_trials(redis, actions, max_runs=1, github=github), TEST)

    assert shown.verdict is Evidence.NOT_RUN
    assert shown.reason.startswith(said)
    assert actions.inputs == []
    # The refused test did not use up the review's one run.
    assert await started(actions_trials(redis, Dispatches(), max_runs=1), TEST) is None


@pytest.mark.parametrize(
    "committed", [TEST.content, "assert False\r\n", "assert False", "assert False\n\n"]
)
async def test_a_followed_test_the_pull_request_committed_as_it_is_runs_there_as_it_is(
    redis: ArqRedis, committed: str
) -> None:
    """The author committed the finding's test the review showed, at its path (byte for byte,
    or with other line endings): at a later push, the test runs at the head as it is there."""
    github = FakeInstallation()
    github.files[FileAt(REF.head_sha, TEST.path)] = committed
    actions = Dispatches()

    following = actions_trials(redis, actions, github=github, follow=True)

    assert await started(following, TEST) is None  # dispatched: its result is waited for
    (inputs,) = actions.inputs
    assert inputs["own_test"] == "true"  # nothing written over the pull request's file
    assert (inputs["test_path"], inputs["head"]) == (TEST.path, REF.head_sha)
    assert inputs["command"] == "python -m pytest tests/test_bug.py"


async def test_a_followed_test_whose_path_holds_another_file_at_the_head_is_not_run(
    redis: ArqRedis,
) -> None:
    github = FakeInstallation()
    github.files[FileAt(REF.head_sha, TEST.path)] = "assert 1 + 1 == 2\n"
    actions = Dispatches()

    shown = await shows(actions_trials(redis, actions, github=github, follow=True), TEST)

    assert shown.verdict is Evidence.NOT_RUN
    assert shown.reason == (
        "tests/test_bug.py at the head is the pull request's own file now, and differs from "
        "the finding's test: the finding's test is not run over it"
    )
    assert actions.inputs == []


async def test_a_first_run_is_refused_a_path_the_head_holds_even_with_the_test_itself(
    redis: ArqRedis,
) -> None:
    github = FakeInstallation()
    github.files[FileAt(REF.head_sha, TEST.path)] = TEST.content
    actions = Dispatches()

    shown = await shows(actions_trials(redis, actions, github=github), TEST)

    assert (
        shown.reason == "tests/test_bug.py exists already at the head: a reproduction is a new file"
    )
    assert actions.inputs == []


async def test_a_test_whose_path_github_says_nothing_of_is_not_run(redis: ArqRedis) -> None:
    github = FakeInstallation()
    github.unanswered.add(FileAt(BASE, "tests"))
    actions = Dispatches()

    shown = await shows(actions_trials(redis, actions, github=github), TEST)

    assert shown.reason == "GitHub did not say whether tests/test_bug.py is free at the base"
    assert actions.inputs == []
