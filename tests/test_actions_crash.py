"""A worker killed with SIGKILL while its review waits for a finding's test in the repository's
Actions: another worker finishes the review, nothing asked twice.

`tiebreak worker` processes share a real Redis and talk to a local fake GitHub, which runs
Tiebreak's workflow template with bash, and a local fake Messages API. The first worker raises
the finding and dispatches its test; once the unit waits and the run has finished, the worker
is killed and a second one started; the run's webhook is then delivered to the real webhook
endpoint, and the second worker (its janitor taking up the dead coordinator) finishes.
"""

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from fastapi.testclient import TestClient

from app.settings import Settings
from app.store.keys import review_job_id
from app.store.live import LiveRuns
from app.store.queue import ReviewQueue
from app.store.records import State
from app.verification.workflow import template_text
from app.web.server import create_app
from tests.fakes.github_api import FakeGitHub, new_app_key
from tests.fakes.messages_api import FakeMessagesAPI, QueuedResponder
from tests.kits.actions import WORKFLOW, Deliveries, completed, template_runner
from tests.scenarios.debates import (
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
    report,
)
from tests.scenarios.reviews import BASE, HEAD, INSTALLATION, NUMBER, REF, REPO
from tests.scenarios.webhooks import SECRET
from tests.test_crash_recovery import until

TIEBREAK = Path(sys.executable).with_name("tiebreak")
APP_ID = 42
HEARTBEAT = 2.0
CONFIG = f"verify:\n  command: python3 {{test}}\n  workflow: {WORKFLOW}\n"
REFUND_TEST = (
    "import importlib.util\n"
    'spec = importlib.util.spec_from_file_location("payments", "app/payments.py")\n'
    "payments = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(payments)\n"
    "class Payment:\n"
    "    balance, id = 10, 7\n"
    "payments.refund(Payment(), 5)\n"
)
PROVEN = {**UNDEFINED, "reproduction": {"path": "test_refund.py", "content": REFUND_TEST}}
PRINT_FIX = patch(16, "    print('refund', payment.id, amount)")


@pytest.fixture
def fakes() -> Iterator[tuple[FakeGitHub, FakeMessagesAPI, str]]:
    key = new_app_key()
    script = QueuedResponder(
        report_findings=[report(PROVEN)],
        answer_findings=[answers(concede("F1", PRINT_FIX))],
        evaluate_answers=[evaluations(accept("F1", "Fixed."))],
    )
    with (
        FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as github,
        FakeMessagesAPI(script, api_key="sk-actions") as messages,
    ):
        github.add_installation(INSTALLATION, repos=[REPO])
        github.add_pull(
            REPO,
            NUMBER,
            head_sha=HEAD,
            base_sha=BASE,
            diff=git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)}),
            base_files={PAYMENTS: PAYMENTS_BEFORE},
            head_files={PAYMENTS: PAYMENTS_AFTER},
        )
        github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)
        github.add_workflow(REPO, WORKFLOW, template_text(), template_runner)
        yield github, messages, key.private_pem


def start_worker(
    redis_url: str, github: FakeGitHub, messages: FakeMessagesAPI, pem: str, *, janitor: int
) -> "subprocess.Popen[bytes]":
    """A `tiebreak worker` whose janitor sweeps every `janitor` seconds."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "REDIS_URL": redis_url,
        "GITHUB_APP_ID": str(APP_ID),
        "GITHUB_PRIVATE_KEY": pem,
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": github.base_url,
        "ANTHROPIC_API_KEY": "sk-actions",
        "ANTHROPIC_BASE_URL": messages.base_url,
        "TIEBREAK_HEARTBEAT": str(HEARTBEAT),
        "TIEBREAK_JANITOR_EVERY": str(janitor),
        "TIEBREAK_ENV_FILE": "",  # no .env from the working directory
        # The test's own directory (set for every test), shared as on one disk.
        "TIEBREAK_DATA_DIR": os.environ["TIEBREAK_DATA_DIR"],
    }
    return subprocess.Popen(
        [str(TIEBREAK), "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


async def test_a_worker_killed_while_its_unit_waits_for_tests_leaves_the_review_to_another(
    fakes: tuple[FakeGitHub, FakeMessagesAPI, str], redis_url: str
) -> None:
    """Slow (6–15 s): two `tiebreak worker` processes start one after the other, each loading
    the model's SDK and warming up, the fake runs the workflow with bash, and the review waits
    for the dead worker's heartbeat to lapse before the janitor takes it up."""
    github, messages, pem = fakes
    deliveries = Deliveries()
    github.send_webhooks(deliveries)
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    live = LiveRuns(redis, HEARTBEAT)
    run = review_job_id(REF)
    # The first worker's janitor sweeps once a minute, the least often it may, so that the
    # run's result is taken up after the worker is killed, not by a sweep of its own just
    # before (which would resume the debate, and the kill could cut the coder's call short,
    # to be asked again, rightly).
    workers = [start_worker(redis_url, github, messages, pem, janitor=60)]
    try:
        with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as client:
            await ReviewQueue(redis).enqueue_review(REF)

            async def waiting_for_a_finished_run() -> bool:
                units = await live.units(run, [0])
                finished = [r for r in github.workflow_runs(REPO) if r.status == "completed"]
                return bool(units) and units[0].state is State.TESTING and bool(finished)

            await until(waiting_for_a_finished_run, "the unit's wait for its finished test")
            workers[0].send_signal(signal.SIGKILL)
            workers[0].wait(10)
            workers.append(start_worker(redis_url, github, messages, pem, janitor=1))

            async def reviewed() -> bool:
                deliveries.deliver(client)
                return completed(github)

            await until(reviewed, "the review's completion")
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(20)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        await redis.aclose()

    (review,) = github.reviews(REPO, NUMBER)
    body = review.comments[0].body
    assert "fails at the head and passes" in body
    assert "**Fix verified**" in body
    # The finding was raised once, its test dispatched once, then its fix checked once.
    asked = [r.tool for r in messages.requests if r.status == 200]
    assert asked.count("report_findings") == 1
    assert len(github.workflow_runs(REPO)) == 2
