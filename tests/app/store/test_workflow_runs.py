"""Findings' test runs dispatched to a workflow, on a real Redis: each is settled once,
whoever settles it, and the settling that leaves its unit waiting for nothing more says so."""

from arq.connections import ArqRedis

from agents.debate.recorded_tests import RecordedRun
from agents.verification import Verification
from app.store.workflow_runs import PendingRun, UnitTestRuns, WorkflowRuns
from tests.scenarios.reviews import REF

RUN = "run-actions"


def pending(token: str, digest: str, deadline: float = 100.0) -> PendingRun:
    return PendingRun(
        token=token,
        run_id=RUN,
        unit=0,
        attempt=1,
        digest=digest,
        ref=REF,
        workflow="tiebreak-verify.yml",
        test="tests/test_bug.py",
        command="pytest",
        dispatched_at=0.0,
        deadline=deadline,
        minutes=20,
    )


def shown(reason: str) -> RecordedRun:
    return RecordedRun(verification=Verification.not_run("tests/test_bug.py", reason))


async def test_a_run_is_settled_once_and_the_last_one_says_so(redis: ArqRedis) -> None:
    runs = WorkflowRuns(redis)
    await runs.wait_for(pending("t1", "d1"))
    await runs.wait_for(pending("t2", "d2", deadline=50.0))
    assert (await runs.dispatched(RUN, 0, "d1")) == pending("t1", "d1")

    first = await runs.settle("t1", shown("from the webhook"))
    again = await runs.settle("t1", shown("from the deadline"))
    assert await runs.due(60.0) == ["t2"]
    last = await runs.settle("t2", shown("from the deadline"))

    assert first is not None
    assert not first.last
    assert again is None
    assert last is not None
    assert last.last
    tests = UnitTestRuns(redis, RUN, 0)
    assert await tests.all_recorded(["d1", "d2"])
    recorded = await tests.recorded("d1")
    assert recorded is not None
    assert recorded.verification is not None
    assert recorded.verification.reason == "from the webhook"
    assert await runs.waiting() == []
    assert await runs.dispatched(RUN, 0, "d1") is None


async def test_the_run_github_started_is_kept_with_its_record_and_never_revives_it(
    redis: ArqRedis,
) -> None:
    runs = WorkflowRuns(redis)
    await runs.wait_for(pending("t3", "d3"))
    await runs.wait_for(pending("t4", "d4"))

    await runs.pin("t3", 1001)
    await runs.settle("t4", shown("from the webhook"))
    await runs.pin("t4", 1002)  # GitHub's answer came after the run was settled

    pinned = await runs.get("t3")
    assert pinned is not None
    assert pinned.github_run == 1001
    assert pinned.model_copy(update={"github_run": None}) == pending("t3", "d3")
    assert await runs.get("t4") is None
    assert await runs.waiting() == ["t3"]
