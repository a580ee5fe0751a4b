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
