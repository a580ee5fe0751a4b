"""Pushes heard out of order, on a real worker and a real Redis, against the fake GitHub.

GitHub does not promise to deliver webhooks in the order their events happened, and the
deliveries a web server handles at the same moment may reach Redis in either order. Whatever
the order, the pull request's current head is reviewed once, and an older head never stops
its review; a head pushed again, once its review is forgotten, is reviewed again.
"""

import asyncio
import itertools
import json
import uuid
from collections import defaultdict
from dataclasses import dataclass

import pytest
from arq.connections import ArqRedis
from arq.jobs import Job, JobStatus

from app.store import keys
from app.store.deliveries import Installations
from app.store.keys import review_job_id
from app.store.queue import ReviewQueue
from app.web.dispatch import Delivery
from app.web.handlers.pull_request import on_pull_request_changed
from tests.fakes.github_api import AppKey, CheckRun, FakeGitHub
from tests.kits.review import HeldModel, agreed, run_worker
from tests.scenarios.reviews import (
    BASE,
    DIFF,
    HEAD,
    NUMBER,
    REF,
    REPO,
    background_worker,
    worker_setup,
)
from tests.scenarios.webhooks import payload

OLDER, NEWER = "c" * 40, "d" * 40
"""Two pushes after the pull request's first head, `HEAD`: HEAD → OLDER → NEWER."""


def push_twice(github: FakeGitHub) -> None:
    """On GitHub, the pull request's head moves from `HEAD` to `OLDER`, then to `NEWER`."""
    for head in (OLDER, NEWER):
        github.add_pull(REPO, NUMBER, head_sha=head, base_sha=BASE, diff=DIFF)


@dataclass(frozen=True)
class _Deps:
    queue: ReviewQueue
    installations: Installations


def pushed(head: str, before: str | None = None) -> Delivery:
    """GitHub's delivery of the pull request at `head`: opened, or a push from `before`."""
    body = payload("pull_request/synchronize" if before else "pull_request/opened")
    body["pull_request"]["head"]["sha"] = head
    if before:
        body["before"], body["after"] = before, head
    action = "synchronize" if before else "opened"
    return Delivery(str(uuid.uuid4()), "pull_request", action, json.dumps(body).encode())


async def deliver(queue: ReviewQueue, *deliveries: Delivery) -> None:
    """Handle `deliveries`, in that order, as the webhook endpoint does."""
    deps = _Deps(queue, Installations(queue.redis))
    for delivery in deliveries:
        await on_pull_request_changed(delivery, deps)


def check_runs_by_head(github: FakeGitHub) -> dict[str, list[CheckRun]]:
    runs = defaultdict(list)
    for run in github.check_runs(REPO):
        runs[run.head_sha].append(run)
    return runs


def assert_reviewed_once(github: FakeGitHub, current: str) -> None:
    """The current head has one check run, which completed with a review; any other head
    has at most one, completed as superseded."""
    runs = check_runs_by_head(github)
    assert [run.states[-1] for run in runs.pop(current, [])] == [("completed", "neutral")]
    for head, older in runs.items():
        assert [run.states[-1] for run in older] in ([], [("completed", "cancelled")]), head
    (review,) = github.reviews(REPO, NUMBER)
    assert review.commit_id == current


ORDERS = list(itertools.permutations(["opened", "older", "newer"]))


@pytest.mark.parametrize("order", ORDERS, ids=["-".join(order) for order in ORDERS])
async def test_whatever_order_pushes_are_heard_in_the_current_head_is_reviewed_once(
    github: FakeGitHub, key: AppKey, redis_url: str, order: tuple[str, ...]
) -> None:
    push_twice(github)
    deliveries = {
        "opened": pushed(HEAD),
        "older": pushed(OLDER, before=HEAD),
        "newer": pushed(NEWER, before=OLDER),
    }

    await run_worker(
        github, key, redis_url, agreed(), lambda q: deliver(q, *(deliveries[o] for o in order))
    )

    assert_reviewed_once(github, NEWER)


async def ended(redis: ArqRedis, *heads: str) -> None:
    """Return once the review job of each head has ended, however it ended."""
    for head in heads:
        job = Job(review_job_id(REF.model_copy(update={"head_sha": head})), redis)
        for _ in range(400):
            if await job.status() is JobStatus.complete:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"the review of {head[:7]} never ended")


async def test_an_older_push_heard_during_the_review_of_a_newer_one_does_not_stop_it(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    push_twice(github)
    model = HeldModel(agreed())
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        queue = ReviewQueue(redis)
        await deliver(queue, pushed(NEWER, before=OLDER))
        await asyncio.wait_for(model.first_call.wait(), 20)

        await deliver(queue, pushed(OLDER, before=HEAD))
        model.release()

        await ended(redis, NEWER, OLDER)

    assert_reviewed_once(github, NEWER)


async def test_after_pushes_heard_out_of_order_the_next_push_still_stops_the_review(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    newest = "e" * 40
    push_twice(github)
    model = HeldModel(agreed())
    async with background_worker(worker_setup(github, key, model), redis_url) as redis:
        queue = ReviewQueue(redis)
        await deliver(queue, pushed(HEAD), pushed(NEWER, before=OLDER), pushed(OLDER, before=HEAD))
        await asyncio.wait_for(model.first_call.wait(), 20)  # the review of NEWER

        github.add_pull(REPO, NUMBER, head_sha=newest, base_sha=BASE, diff=DIFF)
        await deliver(queue, pushed(newest, before=NEWER))

        await ended(redis, NEWER, newest)

    (stopped,) = check_runs_by_head(github)[NEWER]
    assert stopped.states[-1] == ("completed", "cancelled")
    assert stopped.output["title"] == "Superseded by a newer push (eeeeeee)"
    assert_reviewed_once(github, newest)


async def test_a_review_whose_head_github_cannot_confirm_at_first_goes_on(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_worker(github, key, redis_url, agreed(), lambda q: deliver(q, pushed(HEAD)))
    push_twice(github)
    # The push to OLDER is never heard; Redis still knows HEAD as the latest head.
    github.fail_next("GET", rf"/repos/{REPO}/pulls/{NUMBER}", 502)

    await run_worker(
        github, key, redis_url, agreed(), lambda q: deliver(q, pushed(NEWER, before=OLDER))
    )

    (newest,) = check_runs_by_head(github)[NEWER]
    assert newest.states[-1] == ("completed", "neutral")


async def test_a_head_pushed_again_once_its_review_is_forgotten_is_reviewed_again(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    await run_worker(github, key, redis_url, agreed(), lambda q: deliver(q, pushed(HEAD)))
    github.add_pull(REPO, NUMBER, head_sha=OLDER, base_sha=BASE, diff=DIFF)
    await run_worker(github, key, redis_url, agreed(), lambda q: deliver(q, pushed(OLDER, HEAD)))
    github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF)

    async def force_pushed_back(queue: ReviewQueue) -> None:
        # An hour on, arq no longer keeps the results of the first review's jobs (nor Redis
        # its run's keys, kept minutes once it ended): the head's job id is free again.
        first = review_job_id(REF)
        results = [keys.result(first), keys.result(keys.unit_job_id(first, 0, 1))]
        run_keys = [*keys.run_keys(first, units=1), keys.run_heartbeat(first)]
        await queue.redis.delete(*results, *run_keys)
        await deliver(queue, pushed(HEAD, before=OLDER))
        # Neither push asked arq to abort a review that had ended.
        assert await queue.redis.zcard(keys.ABORTED) == 0

    results = await run_worker(github, key, redis_url, agreed(), force_pushed_back)

    assert results[review_job_id(REF)] == "neutral"
    reviewed = check_runs_by_head(github)
    assert [run.states[-1] for run in reviewed[HEAD]] == [("completed", "neutral")] * 2
    assert [run.states[-1] for run in reviewed[OLDER]] == [("completed", "neutral")]
