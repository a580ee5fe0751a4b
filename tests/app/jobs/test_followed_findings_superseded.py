"""A proven finding followed across two pushes in a row, end to end: the second push arrives
while the first push's run of the finding's test is still out in Actions, and that run ends
last. Only the newest head's outcome is said."""

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping

import pytest
from fastapi.testclient import TestClient

from app.jobs.deps import WorkerDeps
from app.store.keys import review_job_id
from app.store.records import ENDED
from app.verification.workflow import template_text
from app.web.server import create_app
from tests.app.jobs.test_followed_findings import (
    FIXED,
    SECOND,
    SETTINGS,
    STILL_BROKEN,
    THIRD,
    check_of,
    heads_tested,
    proven_and_open,
    replies,
    thread,
)
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.github_api.actions import Result, Trees
from tests.kits.actions import (
    DEADLINE,
    TEST_PATH,
    WORKFLOW,
    Deliveries,
    pushed,
    template_runner,
)
from tests.kits.review import summary
from tests.scenarios.reviews import HEAD, NUMBER, REF, REPO, background_worker, worker_setup
from tests.scenarios.webhooks import signed


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(SETTINGS, redis_url)) as test_client:
        yield test_client


class HeldAt:
    """Tiebreak's workflow, whose runs at one head wait until they are let go."""

    def __init__(self, head: str) -> None:
        self.head = head
        self.go = threading.Event()

    def __call__(self, given: Mapping[str, str], trees: Trees) -> Result:
        if given["head"] == self.head:
            assert self.go.wait(DEADLINE), "the held run was never let go"
        return template_runner(given, trees)


async def until(
    condition: Callable[[], Awaitable[bool]], deliveries: Deliveries, client: TestClient
) -> None:
    """Deliver the fake's webhooks as they come until `condition()` (awaited) holds."""
    deadline = time.monotonic() + DEADLINE
    while not await condition():
        assert time.monotonic() < deadline, "it never happened"
        deliveries.deliver(client)
        await asyncio.sleep(0.05)


async def test_a_superseded_pushs_run_of_a_followed_test_ending_last_says_nothing(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    llm = await proven_and_open(github, key, redis_url, client)
    root = thread(github).id

    # Two pushes in a row: the first leaves the bug, the second fixes it. The first push's
    # run of the test is held until the second push's review has landed.
    held = HeldAt(SECOND)
    github.add_workflow(REPO, WORKFLOW, template_text(), held)
    deliveries = Deliveries()
    github.send_webhooks(deliveries)
    setup = worker_setup(github, key, llm)
    async with background_worker(setup, redis_url) as redis:
        deps = WorkerDeps.started(setup, redis)
        # Each push lands on GitHub only once the one before has dispatched its test.
        for head, before, payments in ((SECOND, HEAD, STILL_BROKEN), (THIRD, SECOND, FIXED)):
            delivery = pushed(github, head, before, payments)
            raw, headers = signed("pull_request", delivery)
            answer = client.post("/api/github/webhooks", content=raw, headers=headers)
            assert answer.json()["outcome"] == "enqueued", answer.text

            async def dispatched(head: str = head) -> bool:
                return head in heads_tested(github, TEST_PATH)

            await until(dispatched, deliveries, client)

        async def newest_landed() -> bool:
            latest = await deps.pulls.latest(REF)
            return latest is not None and latest.ref.head_sha == THIRD

        await until(newest_landed, deliveries, client)
        assert replies(github)[-1].body.startswith(f"Fixed at <code>{THIRD[:7]}</code>")

        # The first push's run ends now, its test still failing there.
        held.go.set()
        older = review_job_id(REF.model_copy(update={"head_sha": SECOND}))

        async def older_settled() -> bool:
            settled = not await deps.workflow_runs().waiting()
            return settled and await deps.live_runs().run_state(older) in ENDED

        await until(older_settled, deliveries, client)

    assert heads_tested(github, TEST_PATH) == [HEAD, SECOND, THIRD]
    assert all(outcome == ["enqueued"] for outcome in deliveries.completed.values())
    assert len(deliveries.completed) == 2  # both pushes' runs of the test ended
    # Only the newest head's outcome is said: fixed, never "still fails" at the older head.
    (fixed,) = replies(github)
    assert fixed.body.startswith(f"Fixed at <code>{THIRD[:7]}</code>: its test passes now")
    assert github.thread_resolved(REPO, NUMBER, root)
    said = summary(github)
    assert "0 still failing · 1 fixed and verified" in said
    assert SECOND[:7] not in said
    assert github.issue_labels(REPO, NUMBER) == []
    assert check_of(github, THIRD).conclusion == "success"
    older_check = check_of(github, SECOND)
    assert older_check.conclusion == "cancelled"
    assert older_check.output["title"] == f"Superseded by a newer push ({THIRD[:7]})"
