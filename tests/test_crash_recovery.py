"""A worker killed with SIGKILL mid-debate: another worker finishes the review.

Two `tiebreak worker` processes share a real Redis and talk to a local fake GitHub and a local
fake Messages API. The fake holds the tester's first evaluation until the test has killed the
worker debating the unit; the other worker then picks the review up — from the janitor if the
dead worker was coordinating it too — and resumes the unit from its journal.
"""

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool

from agents.models.llm import Usage
from app.events import PullRequestRef
from app.store.keys import review_job_id
from app.store.live import LiveRuns
from app.store.queue import ReviewQueue
from tests.fakes.github_api import FakeGitHub, new_app_key
from tests.fakes.messages_api import Body, Error, FakeMessagesAPI, QueuedResponder, Reply
from tests.scenarios.debates import (
    LOG_FIX,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    UNDEFINED,
    accept,
    answers,
    concede,
    evaluations,
    git_diff,
    patch,
    reject,
    report,
)

TIEBREAK = Path(sys.executable).with_name("tiebreak")
APP_ID, INSTALLATION, REPO, NUMBER = 42, 9, "octo/shop", 1
HEAD = "1" * 40
REF = PullRequestRef(
    installation_id=INSTALLATION, owner="octo", repo="shop", number=NUMBER, head_sha=HEAD
)
DEADLINE = 60.0
HEARTBEAT = 2.0


class HoldsFirstEvaluation:
    """The model's answers, the tester's first evaluation held until released; the held call
    then fails (its caller is dead by then) without using up the script."""

    def __init__(self) -> None:
        self.script = QueuedResponder(
            report_findings=[report(UNDEFINED)],
            answer_findings=[
                answers(concede("F1", patch(16, "    logger.info(payment.id)"))),
                answers(concede("F1", LOG_FIX)),
            ],
            evaluate_answers=[
                evaluations(reject("F1", "logger is not defined either.")),
                evaluations(accept("F1", "Fixed.")),
            ],
        )
        self.held = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: Body) -> Reply:
        if body["tool_choice"]["name"] == "evaluate_answers" and not self.held.is_set():
            self.held.set()
            self.release.wait(DEADLINE)
            return Error(500, "api_error", "the caller went away")
        return self.script(body)


@pytest.fixture
def fakes() -> Iterator[tuple[FakeGitHub, FakeMessagesAPI, HoldsFirstEvaluation, str]]:
    key = new_app_key()
    model = HoldsFirstEvaluation()
    with (
        FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as github,
        FakeMessagesAPI(model, api_key="sk-crash") as messages,
    ):
        github.add_installation(INSTALLATION, repos=[REPO])
        diff = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)})
        github.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha="b" * 40, diff=diff)
        try:
            yield github, messages, model, key.private_pem
        finally:
            model.release.set()


def start_worker(
    redis_url: str, github: FakeGitHub, messages: FakeMessagesAPI, pem: str, data_dir: Path
) -> "subprocess.Popen[bytes]":
    env = {
        "PATH": os.environ.get("PATH", ""),
        "REDIS_URL": redis_url,
        "GITHUB_APP_ID": str(APP_ID),
        "GITHUB_PRIVATE_KEY": pem,
        "GITHUB_WEBHOOK_SECRET": "a-webhook-secret-unused-here",
        "GITHUB_API_URL": github.base_url,
        "ANTHROPIC_API_KEY": "sk-crash",
        "ANTHROPIC_BASE_URL": messages.base_url,
        "TIEBREAK_HEARTBEAT": str(HEARTBEAT),
        "TIEBREAK_JANITOR_EVERY": "1",
        "TIEBREAK_ENV_FILE": "",  # no .env from the working directory
        "TIEBREAK_DATA_DIR": str(data_dir),  # the snapshots' cache, shared as on one disk
    }
    return subprocess.Popen(
        [str(TIEBREAK), "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


async def until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {DEADLINE} s")
        await asyncio.sleep(0.05)


def billed(messages: FakeMessagesAPI) -> int:
    """The billed tokens of every call the fake answered, priced as Tiebreak prices them."""
    return sum(
        Usage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cache_creation_input_tokens=u.cache_creation_input_tokens,
            cache_read_input_tokens=u.cache_read_input_tokens,
        ).billed
        for u in messages.usages
    )


async def test_a_worker_killed_mid_debate_leaves_the_review_to_another(
    fakes: tuple[FakeGitHub, FakeMessagesAPI, HoldsFirstEvaluation, str],
    redis_url: str,
    tmp_path: Path,
) -> None:
    """Slow (6–13 s): two `tiebreak worker` processes start, each loading the model's SDK and
    warming up, and the review waits for the dead worker's heartbeat to lapse before another
    takes it up."""
    github, messages, model, pem = fakes
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    live = LiveRuns(redis, HEARTBEAT)
    run = review_job_id(REF)
    workers = [start_worker(redis_url, github, messages, pem, tmp_path) for _ in range(2)]
    try:
        await ReviewQueue(redis).enqueue_review(REF)

        async def held() -> bool:
            return model.held.is_set()

        await until(held, "the tester's evaluation")
        # The seed and the coder's answer are answered and journaled; the evaluation is in flight.
        (unit,) = await live.units(run, [0])
        victim = next(w for w in workers if unit.worker.endswith(f":{w.pid}"))
        spent_at_kill = await live.ceiling(run, 0).spent()
        answered_at_kill = billed(messages)
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        model.release.set()

        async def completed() -> bool:
            checks = github.check_runs(REPO)
            return bool(checks) and all(c.status == "completed" for c in checks)

        await until(completed, "the review's completion")
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(20)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        await redis.aclose()

    (review,) = github.reviews(REPO, NUMBER)
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "neutral")
    assert "```suggestion" in review.comments[0].body
    # Nothing answered before the kill was asked again; only the call in flight was.
    asked = [r.tool for r in messages.requests if r.status == 200]
    assert asked.count("report_findings") == 1
    assert asked.count("answer_findings") == 2
    assert asked.count("evaluate_answers") == 2
    # Every answered call billed once, the call killed in flight at its reservation.
    reservation = spent_at_kill - answered_at_kill
    assert reservation > 0
    spend = re.search(r"\*\*Spend\*\*: ([\d,]+) billed tokens", check.output["summary"])
    assert spend is not None
    assert int(spend.group(1).replace(",", "")) == billed(messages) + reservation
