"""Findings' tests run in the repository's own GitHub Actions, end to end: the pull request's
webhook and the workflow runs' webhooks at the real endpoint, a real worker, the fake GitHub
running Tiebreak's workflow template with bash on its snapshots of the base and the head, and
a scripted model."""

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agents.models.llm import Role
from agents.models.scripted import ScriptedLLM, by_role
from agents.protocol import ToolName
from app.jobs.deps import WorkerDeps
from app.jobs.janitor import resume_orphans
from app.jobs.workflow_results import sweep_workflow_runs
from app.settings import Settings
from app.snapshots.cache import SnapshotCache
from app.store.keys import review_job_id
from app.store.live import LiveRuns
from app.store.queue import ReviewQueue
from app.store.records import State
from app.verification.workflow import not_run, template_text
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.github_api.actions import RunDetails
from tests.kits.actions import (
    CONFIG,
    DEADLINE,
    PASSING,
    PRINT_FIX,
    PROVEN,
    WORKFLOW,
    Deliveries,
    comment,
    completed,
    fixed_by_agreement,
    never_finishes,
    older_copy_runner,
    review_in_actions,
    template_runner,
)
from tests.kits.artifacts import UNREADABLE
from tests.kits.hearing import untrusted
from tests.kits.review import run_review, summary
from tests.kits.workflow import OLDER_COPY
from tests.scenarios.debates import (
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    UNDEFINED,
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    finding,
    git_diff,
    patch,
    report,
)
from tests.scenarios.polyglot import GO_COMMAND, needs_go
from tests.scenarios.reviews import (
    BASE,
    DIFF,
    HEAD,
    INSTALLATION,
    NUMBER,
    REF,
    REPO,
    background_worker,
    worker_setup,
)
from tests.scenarios.webhooks import SECRET

NOT_RUN = "Findings' tests were not run"
FORK = REF.model_copy(update={"number": 3, "head_sha": "f" * 40})


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


@pytest.mark.parametrize("details", [RunDetails.RETURNED, RunDetails.IGNORED])
async def test_without_its_webhook_a_run_is_found_by_the_janitors_poll(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient, details: RunDetails
) -> None:
    """Found by the id GitHub answered the dispatch with, or where it answered none, among
    the workflow's latest runs."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG.replace("minutes: 1", "minutes: 60"))
    github.serve_run_details(details)
    minutes = iter(range(1, 60))

    async def janitor(deps: WorkerDeps) -> object:
        if not all(run.status == "completed" for run in github.workflow_runs(REPO)):
            return 0
        # Its next sweep, a minute later, well within the runs' deadline.
        return await sweep_workflow_runs(deps, now=time.time() + 60 * next(minutes))

    sent = await review_in_actions(
        github,
        key,
        redis_url,
        fixed_by_agreement(PROVEN),
        client,
        meanwhile=janitor,
        webhooks=False,
    )

    assert sent.sent == []
    body = comment(github).body
    assert "fails at the head and passes" in body
    assert "**Fix verified**" in body


async def test_a_unit_whose_results_are_in_but_never_taken_up_is_taken_up_by_its_review(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """The job that settled the run died before it queued the unit: the coordinator's scan
    finds the unit waiting for nothing and queues it."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)

    async def settled_by_a_job_that_died(deps: WorkerDeps) -> object:
        if not await _testing(deps.live_runs(), review_job_id(REF)):
            return None  # the unit has yet to leave itself waiting
        runs = deps.workflow_runs()
        for token in await runs.waiting():
            pending = await runs.get(token)
            if pending is not None:
                await runs.settle(token, not_run(pending.test, pending.fix, "lost"))
        return None

    await review_in_actions(
        github,
        key,
        redis_url,
        fixed_by_agreement(PROVEN),
        client,
        meanwhile=settled_by_a_job_that_died,
        webhooks=False,
        heartbeat=1.0,
    )

    assert "**Test not run**: <code>test&#95;refund.py</code> (lost)" in comment(github).body


async def test_a_reproduced_finding_is_posted_with_its_proof_and_its_verified_fix(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)

    llm = fixed_by_agreement(PROVEN)
    sent = await review_in_actions(github, key, redis_url, llm, client)

    body = comment(github).body
    assert "**Reproduced**: <code>test&#95;refund.py</code> fails at the head and passes" in body
    assert "NameError: name 'log' is not defined" in body
    assert "**Fix verified**: the finding's test passes with this patch." in body
    # Two runs of the workflow: the test at the base and the head, then with the fix.
    runs = github.workflow_runs(REPO)
    assert [bool(r.inputs["patches"]) for r in sorted(runs, key=lambda r: r.id)] == [False, True]
    assert sent.sent.count(("completed", "enqueued")) == 2
    assert NOT_RUN not in summary(github)
    # The unit waited for each run and went on where it stopped: the model was asked the
    # report, the answer and the evaluation once each, however often the debate resumed.
    assert [r.tool.name for r in llm.requests] == [
        ToolName.REPORT_FINDINGS,
        ToolName.ANSWER_FINDINGS,
        ToolName.EVALUATE_ANSWERS,
    ]


WITH_FEE = (
    PAYMENTS_BEFORE
    + '''

def fee(amount):
    """The card's fee: 3% of the amount, rounded down."""
    return amount * 3 // 10
'''
)
FEE_TEST = """\
import importlib.util

spec = importlib.util.spec_from_file_location("payments", "app/payments.py")
payments = importlib.util.module_from_spec(spec)
spec.loader.exec_module(payments)

assert payments.fee(1000) == 30, payments.fee(1000)
"""
NEW_FEE = {
    **finding(16, "fee() divides by 10: the fee is ten times too large."),
    "reproduction": {"path": "test_fee.py", "content": FEE_TEST},
}


async def test_a_bug_in_an_added_function_is_posted_proven_in_new_code_with_its_verified_fix(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """At the base the test cannot even find the function: that is no bug older than the
    change, and the finding binds the debate as a reproduced one does."""
    github.add_pull(
        REPO,
        NUMBER,
        head_sha=HEAD,
        base_sha=BASE,
        diff=git_diff({PAYMENTS: (PAYMENTS_BEFORE, WITH_FEE)}),
        head_ref="feature",
        base_files={PAYMENTS: PAYMENTS_BEFORE},
        head_files={PAYMENTS: WITH_FEE},
    )
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    llm = ScriptedLLM(
        by_role(
            tester=[report(NEW_FEE), evaluations(accept("F1", "Fixed."))],
            coder=[
                answers(dispute("F1", "The base fails too: not this change's bug.")),
                answers(concede("F1", patch(16, "    return amount * 3 // 100"))),
            ],
        )
    )

    await review_in_actions(github, key, redis_url, llm, client)

    assert "| fix suggested · proven in new code, fix verified |" in summary(github)
    body = comment(github).body
    assert (
        "**Proven in new code**: <code>test&#95;fee.py</code> fails at the head; the base does "
        "not have this code (the base has no name 'fee' in payments, which the change adds)."
        in body
    )
    assert "AssertionError: 300" in body
    # How it failed at the base is shown too: the function was not there.
    assert "AttributeError: module 'payments' has no attribute 'fee'" in body
    assert "Not a regression" not in body
    assert "**Fix verified**: the finding's test passes with this patch." in body


async def test_where_the_projects_environment_cannot_run_tests_the_review_goes_on_unverified(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """The workflow's environment lacks the test runner: the run says so, and nothing of it
    binds the debate (the fix the tester and the coder agree on stands)."""
    unfit = CONFIG.replace("python3 {test}", "python3 -m tiebreak_absent_runner {test}")
    github.set_file(REPO, BASE, ".github/tiebreak.yml", unfit)

    await review_in_actions(github, key, redis_url, fixed_by_agreement(PROVEN), client)

    why = "No module named tiebreak_absent_runner"
    body = comment(github).body
    assert "**Test did not run**: <code>test&#95;refund.py</code>" in body
    assert why in body
    assert "Fix not verified" not in body
    assert github.issue_labels(REPO, NUMBER) == []
    said = summary(github)
    assert f"{NOT_RUN}: the project's environment cannot run its tests" in said
    assert why in said
    (check,) = github.check_runs(REPO)
    assert why in check.output["summary"]
    # The test's one run checked the environment; a finding it did not prove has no patch
    # checked against its test.
    (run,) = github.workflow_runs(REPO)
    assert run.inputs["environment_check"]
    assert not run.inputs["patches"]


GO_CONFIG = CONFIG.replace("python3 {test}", GO_COMMAND)
GO_TEST = "app/payments_test.go"
GO_PROVEN = {
    **UNDEFINED,
    "reproduction": {
        "path": GO_TEST,
        "content": 'package app\n\nimport "testing"\n\nfunc TestRefund(t *testing.T) {}\n',
    },
}
NO_GO_MOD = "go.mod file not found"


@needs_go
async def test_where_a_go_projects_environment_cannot_run_go_test_the_review_goes_on_unverified(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """No go.mod: Go's trivial test, in a package of its own the workflow makes, does not
    pass, and the run says why; the finding's test is not run, and nothing of it binds."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", GO_CONFIG)

    await review_in_actions(github, key, redis_url, fixed_by_agreement(GO_PROVEN), client)

    body = comment(github).body
    assert "**Test did not run**: <code>app/payments&#95;test.go</code>" in body
    assert NO_GO_MOD in body
    said = summary(github)
    assert f"{NOT_RUN}: the project's environment cannot run its tests" in said
    assert NO_GO_MOD in said
    (check,) = github.check_runs(REPO)
    assert NO_GO_MOD in check.output["summary"]
    (run,) = github.workflow_runs(REPO)
    assert run.inputs["environment_folder"] == "tiebreakenvironment"


@needs_go
async def test_an_older_copy_of_the_workflow_runs_a_go_projects_test_without_the_check(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """A repository's copy of the workflow older than `environment_folder` refuses it: the
    test is dispatched again without the pre-flight, and runs there as it did before it."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", GO_CONFIG)

    await review_in_actions(
        github,
        key,
        redis_url,
        fixed_by_agreement(GO_PROVEN),
        client,
        runner=older_copy_runner,
        workflow=OLDER_COPY.read_text(),
    )

    (run,) = github.workflow_runs(REPO)
    assert run.inputs["environment_check"] == ""
    assert "environment_folder" not in run.inputs
    # The test ran at the head, and what go test printed there is read.
    assert "(at the head go test found no go.mod)" in comment(github).body
    assert "the project's environment cannot run its tests" not in summary(github)


@pytest.mark.parametrize("details", [RunDetails.RETURNED, RunDetails.IGNORED])
async def test_the_workflow_runs_from_the_default_branch_not_the_pull_requests_base(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient, details: RunDetails
) -> None:
    """The config names the workflow on the default branch; the pull request's base branch
    may hold another copy of it."""
    github.add_repo(REPO, default_branch="trunk")
    github.set_file(REPO, "trunk", ".github/tiebreak.yml", CONFIG)
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    github.serve_run_details(details)

    await review_in_actions(github, key, redis_url, fixed_by_agreement(PROVEN), client)

    assert [run.branch for run in github.workflow_runs(REPO)] == ["trunk", "trunk"]
    body = comment(github).body
    assert "fails at the head and passes" in body
    assert "**Fix verified**" in body


async def test_a_finding_whose_test_passes_at_the_head_is_withdrawn(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    llm = ScriptedLLM(by_role(tester=[report(PASSING)]))

    await review_in_actions(github, key, redis_url, llm, client)

    said = summary(github)
    assert "| withdrawn · not reproduced |" in said
    assert "its test <code>test&#95;refund.py</code>: it passes at the head" in said
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")


async def test_a_run_that_never_finishes_is_not_run_after_its_deadline(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)

    async def janitor_past_the_deadline(deps: WorkerDeps) -> object:
        return await sweep_workflow_runs(deps, now=time.time() + 61)

    await review_in_actions(
        github,
        key,
        redis_url,
        fixed_by_agreement(PROVEN),
        client,
        runner=never_finishes,
        meanwhile=janitor_past_the_deadline,
    )

    body = comment(github).body
    assert "**Test not run**: <code>test&#95;refund.py</code> (the workflow did not" in body
    assert "finish in 1 minute)" in body
    assert "Fix verified" not in body


@pytest.mark.parametrize("unreadable", UNREADABLE.values(), ids=UNREADABLE.keys())
async def test_an_artifact_that_cannot_be_unpacked_is_said_unreadable_at_once(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    client: TestClient,
    unreadable: Callable[[str], bytes],
) -> None:
    """No janitor sweeps here: the review completes on the run's webhook alone."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)

    def uploads_an_unreadable_zip(
        given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]
    ) -> bytes:
        return unreadable(given["token"])

    await review_in_actions(
        github, key, redis_url, fixed_by_agreement(PROVEN), client, runner=uploads_an_unreadable_zip
    )

    body = comment(github).body
    assert "**Test not run**: <code>test&#95;refund.py</code> (the workflow's result could" in body
    assert "not be read: the artifact is not a readable zip" in body
    assert "Fix verified" not in body


OVERWRITING = {
    "the code under test": (
        PAYMENTS,
        "app/payments.py exists already at the head: a reproduction is a new file",
    ),
    "a symlinked directory at the base": (
        "linked/test_refund.py",
        "linked/test_refund.py goes through linked, which is not a directory at the base",
    ),
}


@pytest.mark.parametrize(("path", "why"), OVERWRITING.values(), ids=OVERWRITING.keys())
async def test_a_test_that_would_be_written_over_the_checkout_is_not_dispatched(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient, path: str, why: str
) -> None:
    """Written over the file it tests, a test passes at the head and the base: the finding
    would be withdrawn as not reproduced."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    github.set_file(REPO, BASE, "linked", "app", mode="120000")
    overwriting = {**UNDEFINED, "reproduction": {"path": path, "content": "assert True\n"}}

    await review_in_actions(github, key, redis_url, fixed_by_agreement(overwriting), client)

    assert "withdrawn · not reproduced" not in summary(github)
    shown = path.replace("_", "&#95;")
    body = comment(github).body
    assert f"**Test not run**: <code>{shown}</code> ({why})" in body
    assert github.workflow_runs(REPO) == []


@pytest.mark.parametrize(
    ("deny", "why"),
    [
        (True, "the App may not run workflows in this repository"),
        (False, f"the workflow .github/workflows/{WORKFLOW} is not in the repository"),
    ],
)
async def test_without_the_permission_or_the_workflow_the_review_goes_on_unverified(
    github: FakeGitHub, key: AppKey, redis_url: str, deny: bool, why: str
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    if deny:
        github.add_workflow(REPO, WORKFLOW, "on: {workflow_dispatch: {}}\n", never_finishes)
        github.deny_actions(INSTALLATION)

    llm = fixed_by_agreement(UNDEFINED)

    await run_review(github, key, redis_url, llm)

    said = summary(github)
    assert said.count(NOT_RUN) == 1
    assert why in said
    assert github.workflow_runs(REPO) == []
    assert comment(github).path == PAYMENTS
    # No test runs: the tester is told nothing of how the repository's tests are written.
    assert all("test_conventions" not in str(call.blocks) for call in llm.calls(Role.TESTER))


async def test_a_pull_request_from_a_fork_is_not_verified_by_default(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.add_workflow(REPO, WORKFLOW, "on: {workflow_dispatch: {}}\n", never_finishes)
    github.add_pull(
        REPO,
        FORK.number,
        head_sha=FORK.head_sha,
        base_sha=BASE,
        diff=DIFF,
        head_ref="feature",
        head_repo="stranger/Hello-World",
        base_files={PAYMENTS: PAYMENTS_BEFORE},
        head_files={PAYMENTS: PAYMENTS_AFTER},
    )
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)

    await run_review(github, key, redis_url, fixed_by_agreement(UNDEFINED), FORK)

    said = summary(github, FORK.number)
    assert said.count(NOT_RUN) == 1
    assert "comes from a fork" in said
    assert github.workflow_runs(REPO) == []


async def test_a_worker_stopped_while_its_unit_waits_for_tests_loses_nothing(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """The first worker raises the finding, dispatches its test and is stopped while the
    workflow runs; a second worker, whose model knows only what comes next, takes the result
    from the webhook and finishes the review."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    deliveries = Deliveries()
    github.add_workflow(REPO, WORKFLOW, template_text(), template_runner)
    github.send_webhooks(deliveries)
    run = review_job_id(REF)
    first = ScriptedLLM(by_role(tester=[report(PROVEN)]))
    async with background_worker(
        worker_setup(github, key, first, heartbeat=1.0), redis_url
    ) as redis:
        await ReviewQueue(redis).enqueue_review(REF)
        live = LiveRuns(redis, 1.0)
        await until(lambda: _testing(live, run))
    # Its model is asked nothing the first worker was answered: its script would not fit.
    second = ScriptedLLM(
        by_role(
            tester=[evaluations(accept("F1", "Fixed."))],
            coder=[answers(concede("F1", PRINT_FIX))],
        )
    )
    setup = worker_setup(github, key, second, heartbeat=1.0)
    async with background_worker(setup, redis_url) as redis:
        deps = WorkerDeps.started(setup, redis)
        deadline = time.monotonic() + DEADLINE
        while not completed(github):
            assert time.monotonic() < deadline, "the review did not complete"
            deliveries.deliver(client)
            await resume_orphans(deps, now=time.time())  # the janitor
            await asyncio.sleep(0.05)

    body = comment(github).body
    assert "fails at the head and passes" in body
    assert "**Fix verified**" in body
    assert len(github.workflow_runs(REPO)) == 2  # the test was not dispatched again


async def _testing(live: LiveRuns, run: str) -> bool:
    units = await live.units(run, [0])
    return bool(units) and units[0].state is State.TESTING


async def until(condition: Callable[[], Awaitable[bool]]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not await condition():
        assert time.monotonic() < deadline, "it never happened"
        await asyncio.sleep(0.05)


async def test_the_tester_is_told_the_repository_s_tests_as_the_head_has_them(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient, tmp_path: Path
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
    for path in ("tests/test_payments.py", "tests/test_refunds.py", "tests/helpers.py"):
        github.set_file(REPO, HEAD, path, "def test_it():\n    pass\n")
    llm = fixed_by_agreement(PROVEN)

    snapshots = SnapshotCache(tmp_path / "snapshots")

    await review_in_actions(github, key, redis_url, llm, client, snapshots=snapshots)

    tester = llm.calls(Role.TESTER)[0]
    assert json.loads(untrusted(tester, "test_conventions")) == {
        "runner": "python",
        "language": "python",
        "ways": ["tests/test_*.py (2 files)"],
        "examples": ["tests/test_payments.py", "tests/test_refunds.py"],
    }
