"""Findings' tests run in the fake GitHub's Actions, for the app tests: a review run by a real
worker in the background while the `workflow_run` webhooks the fake sends are delivered to
the real webhook endpoint, the workflow being Tiebreak's own template run with bash; the
config that asks for it, and a finding whose test reproduces it and whose fix is agreed."""

import asyncio
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from agents.models.llm import LLMClient
from agents.models.scripted import ScriptedLLM, by_role
from app.jobs.deps import WorkerDeps
from app.store.keys import review_job_id
from app.store.records import ENDED
from app.verification.workflow import template_text
from tests.fakes.github_api import AppKey, FakeGitHub, ReviewComment
from tests.fakes.github_api.actions import RUN_FAILED, Result, Runner
from tests.kits.workflow import OLDER_COPY, run_template
from tests.scenarios.debates import (
    PAYMENTS,
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
from tests.scenarios.reviews import (
    BASE,
    HEAD,
    NUMBER,
    REF,
    REPO,
    background_worker,
    worker_setup,
)
from tests.scenarios.webhooks import payload, signed

WORKFLOW = "tiebreak-verify.yml"
DEADLINE = 60.0

CONFIG = (
    "verify:\n"
    "  command: python3 {test}\n"
    f"  workflow: {WORKFLOW}\n"
    "  timeout_minutes: 1\n"
    "  max_attempts: 1\n"
)
TEST_PATH = "test_refund.py"
REFUND_TEST = """\
import importlib.util

spec = importlib.util.spec_from_file_location("payments", "app/payments.py")
payments = importlib.util.module_from_spec(spec)
spec.loader.exec_module(payments)


class Payment:
    balance, id = 10, 7


payments.refund(Payment(), 5)
"""
PROVEN = {**UNDEFINED, "reproduction": {"path": TEST_PATH, "content": REFUND_TEST}}
PRINT_FIX = patch(16, "    print('refund', payment.id, amount)")
PASSING = {**UNDEFINED, "reproduction": {"path": TEST_PATH, "content": "assert True\n"}}


def fixed_by_agreement(finding: dict[str, Any]) -> ScriptedLLM:
    return ScriptedLLM(
        by_role(
            tester=[report(finding), evaluations(accept("F1", "Fixed."))],
            coder=[answers(concede("F1", PRINT_FIX))],
        )
    )


def comment(github: FakeGitHub) -> ReviewComment:
    (review,) = github.reviews(REPO, NUMBER)
    (posted,) = review.comments
    return posted


def template_runner(given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]) -> Result:
    """A run of the template, as a runner would run it: it fails, uploading nothing, if a
    step fails."""
    with tempfile.TemporaryDirectory(prefix="tiebreak-run-") as workspace:
        result = run_template(Path(workspace) / "work", given, trees)
    return RUN_FAILED if result is None else result


def older_copy_runner(given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]) -> Result:
    """A run of a repository's copy of the template older than `environment_folder`."""
    with tempfile.TemporaryDirectory(prefix="tiebreak-run-") as workspace:
        result = run_template(Path(workspace) / "work", given, trees, OLDER_COPY.read_text())
    return RUN_FAILED if result is None else result


def never_finishes(
    given: Mapping[str, str], trees: Mapping[str, Mapping[str, str]]
) -> dict[str, Any] | None:
    return None


class Deliveries:
    """The webhooks the fake sends (from its own threads), kept until delivered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: list[tuple[str, dict[str, Any]]] = []
        self.sent: list[tuple[str, str]] = []
        """(action, outcome) of each delivered."""
        self.completed: dict[int, list[str]] = {}
        """The outcomes of each run's `completed` deliveries, by the run's id."""

    def __call__(self, event: str, payload: dict[str, Any]) -> None:
        with self._lock:
            self._waiting.append((event, payload))

    def deliver(self, client: TestClient) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for event, body in waiting:
            raw, headers = signed(event, body)
            answer = client.post("/api/github/webhooks", content=raw, headers=headers)
            assert answer.status_code in (200, 202), answer.text
            outcome = answer.json()["outcome"]
            self.sent.append((body["action"], outcome))
            if body["action"] == "completed":
                self.completed.setdefault(body["workflow_run"]["id"], []).append(outcome)


def completed(github: FakeGitHub, head: str | None = None) -> bool:
    """Whether every check run (of `head`, if given) is completed, and there is one."""
    runs = [r for r in github.check_runs(REPO) if head is None or r.head_sha == head]
    return bool(runs) and all(run.status == "completed" for run in runs)


async def review_in_actions(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    llm: LLMClient,
    client: TestClient,
    *,
    runner: Runner = template_runner,
    workflow: str | None = None,
    meanwhile: Callable[[WorkerDeps], Awaitable[object]] | None = None,
    webhooks: bool = True,
    deliveries: Deliveries | None = None,
    delivery: dict[str, Any] | None = None,
    **deps_fields: Any,
) -> Deliveries:
    """Review the scenarios' pull request with the repository's workflow in place, a real
    worker running everything and the fake's webhooks delivered as they come (unless
    `webhooks` is False: they are lost) through `deliveries` (new ones by default); the
    repository's copy of the workflow is `workflow`'s text (the shipped template's by default);
    `meanwhile`, called whenever a test run is pending, plays the part of what else happens
    (the janitor). The review is of the pull request as it opened, or of the head `delivery`
    (the pull request's webhook: a push's) names."""
    deliveries = deliveries or Deliveries()
    delivery = delivery or opened()
    head = delivery["pull_request"]["head"]["sha"]
    github.add_workflow(REPO, WORKFLOW, workflow or template_text(), runner)
    github.send_webhooks(deliveries)
    setup = worker_setup(github, key, llm, **deps_fields)
    async with background_worker(setup, redis_url) as redis:
        deps = WorkerDeps.started(setup, redis)
        # The review starts as GitHub starts it: the pull request's webhook, at the endpoint.
        raw, headers = signed("pull_request", delivery)
        answer = client.post("/api/github/webhooks", content=raw, headers=headers)
        assert answer.json()["outcome"] == "enqueued", answer.text
        deadline = time.monotonic() + DEADLINE
        run = review_job_id(REF.model_copy(update={"head_sha": head}))
        # Until the run has ended and is remembered as the pull request's latest, not only
        # its check run completed: a later review or command finds it ended and kept, not
        # left by a worker stopped as it finished.
        while not (
            completed(github, head)
            and await deps.live_runs().run_state(run) in ENDED
            and await _remembered(deps, head)
        ):
            assert time.monotonic() < deadline, "the review did not complete"
            if webhooks:
                deliveries.deliver(client)
            if meanwhile is not None and await _waiting_for_tests(deps):
                await meanwhile(deps)
            await asyncio.sleep(0.05)
    return deliveries


def pushed(
    github: FakeGitHub,
    head: str,
    before: str,
    payments: str,
    added: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The author pushes `payments` as the pull request's `app/payments.py` at `head`, on top
    of `before`, and adds the files `added` (path → text); GitHub's delivery for it."""
    new = dict(added or {})
    github.add_pull(
        REPO,
        NUMBER,
        head_sha=head,
        base_sha=BASE,
        head_ref="feature",
        diff=git_diff(
            {PAYMENTS: (PAYMENTS_BEFORE, payments), **{p: (None, t) for p, t in new.items()}}
        ),
        head_files={PAYMENTS: payments, **new},
    )
    delivery = payload("pull_request/synchronize")
    delivery["number"] = delivery["pull_request"]["number"] = NUMBER
    delivery["pull_request"]["head"]["sha"] = head
    delivery["pull_request"]["base"]["sha"] = BASE
    delivery["before"] = before
    return delivery


def opened() -> dict[str, Any]:
    """GitHub's delivery of the scenarios' pull request opened, at its head and base."""
    delivery = payload("pull_request/opened")
    delivery["pull_request"]["head"]["sha"] = HEAD
    delivery["pull_request"]["base"]["sha"] = BASE
    return delivery


async def _remembered(deps: WorkerDeps, head: str) -> bool:
    """Whether the review is remembered as the pull request's latest, which it is once its
    check run has completed: what a command on the pull request then works on."""
    latest = await deps.pulls.latest(REF)
    return latest is not None and latest.ref.head_sha == head


async def _waiting_for_tests(deps: WorkerDeps) -> bool:
    return bool(await deps.workflow_runs().waiting())
