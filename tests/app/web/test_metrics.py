"""`GET /metrics` as an operator's Prometheus sees it: what the fleet counted, and the queues.

Real Redis, a real arq worker, the fake GitHub and the fake Messages API; the exposition is
parsed with prometheus_client's own parser.
"""

import asyncio
import socket
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from fastapi.testclient import TestClient
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis

from agents.errors import LLMUnavailable
from agents.models.claude import ClaudeLLM
from agents.models.llm import LLMRequest, LLMResponse, Usage
from agents.models.scripted import Reply, ScriptedLLM, by_role
from agents.outcome import Consensus
from app.events import CommandCall, CommandRequest
from app.github.client import GitHubApp
from app.github.errors import GitHubError
from app.publishing.publication import RunRecord
from app.settings import Settings
from app.store.counters import FleetCounters
from app.store.embedded import EmbeddedRedis
from app.store.keys import UNIT_QUEUE, unit_job_id
from app.store.pulls import Pulls
from app.store.queue import JobName, ReviewQueue
from app.telemetry.metrics import COUNTERS, LLM_TOKENS, WEBHOOKS, Metrics
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.messages_api import FakeMessagesAPI, QueuedResponder
from tests.kits.review import STUBBORN, agreed, run_review, run_worker
from tests.scenarios.debates import (
    AGREED,
    LOG_FIX,
    UNDEFINED,
    answers,
    dispute,
    evaluations,
    force_fix,
    reject,
    report,
    rulings,
)
from tests.scenarios.reviews import APP_ID, BASE, REF, REPO, background_worker, worker_setup
from tests.scenarios.webhooks import SECRET, payload, signed

Samples = dict[str, dict[tuple[str, ...], float]]
"""Sample values by sample name, then by label values (in the order of `LABELS`)."""

LABELS = {counter.name: counter.labels for counter in COUNTERS} | {
    "tiebreak_queue_depth": ("queue",),
    "tiebreak_queue_jobs": ("queue", "state"),
    "tiebreak_live_runs": ("state",),
}

TOKEN = "scrape-token-for-tests"
QUICK = 0.001

TOOL_ROLES = {
    "report_findings": "tester",
    "evaluate_answers": "tester",
    "answer_findings": "coder",
    "arbitrate": "arbiter",
}


def read(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        # A family shows before it has samples (a labelled counter nothing has counted yet).
        samples[family.name + ("_total" if family.type == "counter" else "")] = {}
        for sample in family.samples:
            names = LABELS[sample.name]
            assert sample.labels.keys() == set(names)
            values = tuple(sample.labels[name] for name in names)
            samples.setdefault(sample.name, {})[values] = sample.value
    return samples


def scrape(client: TestClient, token: str | None = None) -> Samples:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == CONTENT_TYPE_LATEST
    return read(response.text)


def scrape_fleet(redis_url: str) -> Samples:
    """What a web server of the fleet on this Redis shows."""
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as client:
        return scrape(client)


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


def post(client: TestClient, event: str, body: dict[str, Any] | bytes, **kw: Any) -> Any:
    raw, headers = signed(event, body, **kw)
    return client.post("/api/github/webhooks", content=raw, headers=headers)


async def latest_review(redis_url: str) -> RunRecord:
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        record = await Pulls(redis).latest(REF)
    finally:
        await redis.aclose()
    assert record is not None
    return record


def github_errors(github: FakeGitHub) -> dict[tuple[str, ...], float]:
    """Every error status the fake GitHub answered, counted."""
    statuses = Counter(str(r.status) for r in github.requests if r.status >= 400)
    return {(status,): float(n) for status, n in statuses.items()}


# -- webhooks -----------------------------------------------------------------------------------


def test_webhook_answers_are_counted_by_event_and_outcome(client: TestClient) -> None:
    opened = payload("pull_request/opened")
    assert post(client, "pull_request", opened, delivery="d-1").status_code == 202
    assert post(client, "pull_request", opened, delivery="d-1").status_code == 200
    assert post(client, "pull_request", opened, secret="forged").status_code == 401
    assert post(client, "ping", payload("ping/payload")).status_code == 200
    assert post(client, "pull_request", b"{not json").status_code == 400

    assert scrape(client)["tiebreak_webhooks_total"] == {
        ("pull_request", "enqueued"): 1,
        ("pull_request", "duplicate"): 1,
        # Unverified: its headers are anyone's to invent, so they name no event.
        ("unknown", "invalid_signature"): 1,
        ("ping", "pong"): 1,
        ("pull_request", "bad_request"): 1,
    }


def test_non_ascii_signature_is_401(client: TestClient) -> None:
    raw, headers = signed("pull_request", payload("pull_request/opened"))
    del headers["X-Hub-Signature-256"]
    # As a forger sends it: a byte no hex digest holds, where GitHub's digest would be.
    forged = (b"X-Hub-Signature-256", b"sha256=\xe9" + b"0" * 63)
    raw_headers = [(name.encode(), value.encode()) for name, value in headers.items()]

    response = client.post("/api/github/webhooks", content=raw, headers=[*raw_headers, forged])

    assert response.status_code == 401
    assert scrape(client)["tiebreak_webhooks_total"] == {("unknown", "invalid_signature"): 1}


# -- a review through a real worker -------------------------------------------------------------


async def test_a_review_counts_the_model_calls_and_tokens_the_api_billed(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    with FakeMessagesAPI(QueuedResponder(**AGREED)) as api:
        llm = ClaudeLLM.connect(api_key=api.api_key, base_url=api.base_url)
        try:
            result, _ = await run_review(github, key, redis_url, llm)
        finally:
            await llm.aclose()
    assert result == "neutral"
    calls: Counter[tuple[str, ...]] = Counter()
    tokens: Counter[tuple[str, ...]] = Counter()
    for request in api.requests:
        assert request.usage is not None
        assert request.tool is not None
        role = TOOL_ROLES[request.tool]
        calls[role, "ok"] += 1
        tokens[role, "uncached"] += request.usage.input_tokens
        tokens[role, "cache_write"] += request.usage.cache_creation_input_tokens
        tokens[role, "cache_read"] += request.usage.cache_read_input_tokens
        tokens[role, "output"] += request.usage.output_tokens
    assert tokens["tester", "cache_read"] > 0  # the bill has every kind to tell apart

    seen = scrape_fleet(redis_url)

    assert seen["tiebreak_llm_calls_total"] == calls
    assert seen["tiebreak_llm_tokens_total"] == {k: v for k, v in tokens.items() if v}
    record = await latest_review(redis_url)
    published = Counter((str(f.consensus),) for f in record.review.findings)
    assert seen["tiebreak_debates_total"] == published == {("unanimous",): 1}
    jobs = seen["tiebreak_jobs_total"]
    assert jobs[JobName.REVIEW, "completed"] == 1
    assert jobs[JobName.UNIT, "completed"] == len(record.review.units)
    assert seen["tiebreak_arbitrations_total"] == {}
    assert seen["tiebreak_loop_detections_total"] == {(): 0}
    assert seen["tiebreak_budget_exhaustions_total"] == {(): 0}
    # The repository has no config file: GitHub's 404 for it is counted too.
    assert seen["tiebreak_github_api_errors_total"] == github_errors(github) != {}


LOOPING_TESTER: dict[str, list[Reply]] = {
    "tester": [
        report(UNDEFINED),
        evaluations(reject("F1", "Still undefined at line 16.")),
        evaluations(reject("F1", "still undefined at LINE 17.")),
    ],
    "coder": [answers(dispute("F1", "It is imported.")), answers(dispute("F1", "Look again."))],
    "arbiter": [rulings(force_fix("F1", LOG_FIX))],
}


@pytest.mark.parametrize(
    ("config", "script", "expected"),
    [
        pytest.param(
            None,
            {**STUBBORN, "arbiter": [rulings(force_fix("F1", LOG_FIX))]},
            {
                "tiebreak_arbitrations_total": {("budget",): 1},
                "tiebreak_budget_exhaustions_total": {(): 1},
                "tiebreak_loop_detections_total": {(): 0},
                "tiebreak_debates_total": {("arbiter",): 1},
                "tiebreak_llm_calls_total": {
                    ("tester", "ok"): 2,
                    ("coder", "ok"): 2,
                    ("arbiter", "ok"): 1,
                },
            },
            id="a-repeated-answer-exhausts-the-budget",
        ),
        pytest.param(
            "debate:\n  max_retries: 2\n  max_exchanges_per_finding: 10\n",
            LOOPING_TESTER,
            {
                "tiebreak_arbitrations_total": {("loop",): 1},
                "tiebreak_budget_exhaustions_total": {(): 0},
                "tiebreak_loop_detections_total": {(): 1},
                "tiebreak_debates_total": {("arbiter",): 1},
                "tiebreak_llm_calls_total": {
                    ("tester", "ok"): 3,
                    ("coder", "ok"): 2,
                    ("arbiter", "ok"): 1,
                },
            },
            id="a-repeating-tester-loops",
        ),
        pytest.param(
            None,
            {**STUBBORN, "arbiter": [{"rulings": "no"}, LLMUnavailable("overloaded")]},
            {
                # Sent to the arbiter, who could not rule: the finding stays unresolved.
                "tiebreak_arbitrations_total": {("budget",): 1},
                "tiebreak_debates_total": {("unresolved",): 1},
                "tiebreak_llm_calls_total": {
                    ("tester", "ok"): 2,
                    ("coder", "ok"): 2,
                    ("arbiter", "ok"): 1,
                    ("arbiter", "error"): 1,
                },
            },
            id="the-arbiter-is-unavailable",
        ),
    ],
)
async def test_deadlocks_count_their_arbitrations_loops_and_spent_budgets(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    config: str | None,
    script: dict[str, list[Reply]],
    expected: Samples,
) -> None:
    if config is not None:
        github.set_file(REPO, BASE, ".github/tiebreak.yml", config)

    await run_review(github, key, redis_url, ScriptedLLM(by_role(**script)))

    seen = scrape_fleet(redis_url)
    assert {name: seen[name] for name in expected} == expected
    record = await latest_review(redis_url)
    published = Counter((str(f.consensus),) for f in record.review.findings)
    assert seen["tiebreak_debates_total"] == published


async def test_a_ruling_asked_for_later_counts_as_a_requested_arbitration(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    github.set_file(REPO, BASE, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)))
    asked = CommandRequest(pull=REF, login="octocat", calls=[CommandCall(name="arbitrate")])
    arbiter = ScriptedLLM(by_role(arbiter=[rulings(force_fix("F1", LOG_FIX))]))

    await run_worker(
        github, key, redis_url, arbiter, lambda queue: queue.enqueue_commands(asked, "button")
    )

    seen = scrape_fleet(redis_url)
    assert seen["tiebreak_arbitrations_total"] == {("requested",): 1}
    # The debate itself ended unresolved (arbitration was off): counted as it ended.
    assert seen["tiebreak_debates_total"] == {(str(Consensus.UNRESOLVED),): 1}
    assert seen["tiebreak_jobs_total"][JobName.COMMANDS, "completed"] == 1
    assert seen["tiebreak_llm_calls_total"][("arbiter", "ok")] == 1


# -- GitHub API errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "status", "times", "retry", "review"),
    [
        # Retried twice, then the review goes on: each failed attempt counts.
        ("GET", r"/repos/.*/contents/\.github/tiebreak\.yml", 502, 2, QUICK, "neutral"),
        ("POST", r"/repos/.*/check-runs", 403, 1, None, "failed"),
        # The installation's token, which the calls sent at once all wait for: each of its
        # failed requests counts once, however many calls it failed.
        ("POST", r"/app/installations/\d+/access_tokens", 502, 2, QUICK, "neutral"),
    ],
)
async def test_github_api_errors_are_counted_by_status_for_every_failed_attempt(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    method: str,
    path: str,
    status: int,
    times: int,
    retry: float | None,
    review: str,
) -> None:
    github.fail_next(method, path, status, times=times)

    result, _ = await run_review(github, key, redis_url, agreed(), retry_backoff=retry)

    assert str(result).startswith(review)
    seen = scrape_fleet(redis_url)
    errors = seen["tiebreak_github_api_errors_total"]
    assert errors[(str(status),)] == times
    assert errors == github_errors(github)
    outcome = "failed" if review == "failed" else "completed"
    assert seen["tiebreak_jobs_total"][JobName.REVIEW, outcome] == 1


async def test_a_request_that_never_reaches_github_counts_as_a_transport_error(
    key: AppKey, redis_url: str
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    metrics = Metrics()
    app = GitHubApp(APP_ID, key.private_pem, closed, retry=False, metrics=metrics)

    with pytest.raises(GitHubError) as unreachable:
        await app.installation(1).pull_request(REF)
    assert unreachable.value.status is None
    redis = Redis.from_url(redis_url)
    try:
        assert await FleetCounters(redis).flush(metrics)
    finally:
        await redis.aclose()

    assert scrape_fleet(redis_url)["tiebreak_github_api_errors_total"] == {("transport",): 1}


# -- queues and live runs -----------------------------------------------------------------------


async def test_jobs_waiting_for_a_worker_show_as_queue_depth_by_state(
    client: TestClient, redis_url: str
) -> None:
    redis: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        queue = ReviewQueue(redis)
        assert await queue.enqueue_review(REF)
        assert await queue.enqueue_review(REF, rerun="again")
        await redis.enqueue_job(
            JobName.UNIT,
            "run",
            0,
            1,
            _job_id=unit_job_id("run", 0, 1),
            _queue_name=UNIT_QUEUE,
            _defer_by=3600,
        )
    finally:
        await redis.aclose()

    seen = scrape(client)

    assert seen["tiebreak_queue_depth"] == {("reviews",): 2, ("units",): 1}
    assert seen["tiebreak_queue_jobs"] == {
        ("reviews", "queued"): 2,
        ("reviews", "deferred"): 0,
        ("reviews", "in_progress"): 0,
        ("units", "queued"): 0,
        ("units", "deferred"): 1,
        ("units", "in_progress"): 0,
    }
    assert set(seen["tiebreak_live_runs"].values()) == {0}


class HeldModel:
    """A model whose first call waits until the test lets it answer."""

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.answer = asyncio.Event()

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.called.set()
        await self.answer.wait()
        return LLMResponse(tool_input={"findings": []}, usage=Usage(input_tokens=1))


async def test_running_jobs_show_in_progress_and_their_run_live(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    model = HeldModel()
    # The janitor sweeps half a minute from now, well after this test: its cron job never
    # joins the review queue being measured.
    sweep = frozenset({(datetime.now(UTC).second + 30) % 60})
    deps = worker_setup(github, key, model, sweep_seconds=sweep)
    async with background_worker(deps, redis_url) as redis:
        await ReviewQueue(redis).enqueue_review(REF)
        await asyncio.wait_for(model.called.wait(), 60)

        seen = scrape_fleet(redis_url)

        model.answer.set()
    jobs = seen["tiebreak_queue_jobs"]
    assert (jobs["reviews", "in_progress"], jobs["units", "in_progress"]) == (1, 1)
    assert (jobs["reviews", "queued"], jobs["units", "queued"]) == (0, 0)
    assert seen["tiebreak_queue_depth"] == {("reviews",): 0, ("units",): 0}
    # The review's coordinator waits for its unit.
    assert seen["tiebreak_live_runs"][("waiting",)] == 1
    assert sum(seen["tiebreak_live_runs"].values()) == 1


# -- the fleet's counts in Redis ----------------------------------------------------------------


async def test_counts_flushed_by_two_processes_add_up(client: TestClient, redis_url: str) -> None:
    web, worker = Metrics(), Metrics()
    web.inc(WEBHOOKS, event="ping", outcome="pong")
    web.inc(WEBHOOKS, event="ping", outcome="pong")
    worker.inc(WEBHOOKS, 3, outcome="pong", event="ping")  # label order does not matter
    worker.inc(LLM_TOKENS, 500, role="tester", kind="output")
    redis = Redis.from_url(redis_url)
    try:
        assert await FleetCounters(redis).flush(web)
        assert await FleetCounters(redis).flush(worker)
        worker.inc(LLM_TOKENS, 7, role="tester", kind="output")
        assert await FleetCounters(redis).flush(worker)
    finally:
        await redis.aclose()

    seen = scrape(client)

    assert seen["tiebreak_webhooks_total"] == {("ping", "pong"): 5}
    assert seen["tiebreak_llm_tokens_total"] == {("tester", "output"): 507}


async def test_a_flush_while_redis_is_down_keeps_its_counts_for_the_next(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path, persist=False).start()
    redis = Redis.from_url(server.url)
    metrics = Metrics()
    try:
        metrics.inc(WEBHOOKS, event="ping", outcome="pong")
        server.stop()

        assert not await FleetCounters(redis).flush(metrics)
        metrics.inc(WEBHOOKS, event="ping", outcome="pong")
        server.start()
        assert await FleetCounters(redis).flush(metrics)

        assert metrics.pending() == {}
        assert scrape_fleet(server.url)["tiebreak_webhooks_total"] == {("ping", "pong"): 2}
    finally:
        await redis.aclose()
        server.stop()


def test_a_counter_refuses_labels_it_does_not_have() -> None:
    with pytest.raises(ValueError, match="takes labels"):
        Metrics().inc(WEBHOOKS, event="ping")
    with pytest.raises(ValueError, match="only goes up"):
        Metrics().inc(WEBHOOKS, -1, event="ping", outcome="pong")


# -- protection and failure ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("authorization", "status"),
    [
        (None, 401),
        ("Bearer wrong-token", 401),
        (f"Basic {TOKEN}", 401),
        (f"Bearer {TOKEN}", 200),
    ],
)
def test_with_a_token_set_a_scrape_must_bring_it(
    redis_url: str, authorization: str | None, status: int
) -> None:
    settings = Settings(github_webhook_secret=SECRET, tiebreak_metrics_token=TOKEN)
    headers = {} if authorization is None else {"Authorization": authorization}
    with TestClient(create_app(settings, redis_url)) as client:
        response = client.get("/metrics", headers=headers)

    assert response.status_code == status
    if status == 401:
        assert response.headers["www-authenticate"] == "Bearer"
        assert "tiebreak_" not in response.text
    else:
        assert "# TYPE tiebreak_webhooks_total counter" in response.text


def test_while_redis_is_down_a_scrape_gets_503(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path, persist=False).start()
    try:
        with TestClient(create_app(Settings(github_webhook_secret=SECRET), server.url)) as client:
            assert client.get("/metrics").status_code == 200
            server.stop()

            response = client.get("/metrics")

        assert response.status_code == 503
        assert response.text == "redis unreachable\n"
    finally:
        server.stop()
