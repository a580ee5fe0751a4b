"""`POST /api/github/webhooks` on a real Redis: verify, deduplicate, route, enqueue."""

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from app.events import PullRequestRef, QueuedRef
from app.settings import Settings, SettingsError
from app.store.embedded import EmbeddedRedis
from app.store.keys import review_job_id
from app.store.queue import JobName
from app.web.intake import MAX_BODY_BYTES
from app.web.server import create_app
from tests.kits.store import Store
from tests.scenarios.webhooks import SECRET, payload, signed

MiB = 1024 * 1024
OPENED = payload("pull_request/opened")
HEAD = OPENED["pull_request"]["head"]["sha"]
REF = PullRequestRef(
    installation_id=1,
    owner="Codertocat",
    repo="Hello-World",
    number=2,
    repository_id=186853002,
    head_sha=HEAD,
)


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    settings = Settings(github_webhook_secret=SECRET)
    with TestClient(create_app(settings, redis_url)) as test_client:
        yield test_client


@pytest.fixture
def store(redis_url: str) -> Iterator[Store]:
    view = Store(redis_url)
    yield view
    view.close()


def post(client: TestClient, event: str, body: dict[str, Any] | bytes, **kw: Any) -> Any:
    raw, headers = signed(event, body, **kw)
    return client.post("/api/github/webhooks", content=raw, headers=headers)


def queued_jobs(store: Store) -> list[str]:
    return store.queued_jobs()


def test_an_opened_pull_request_is_queued_for_review(client: TestClient, store: Store) -> None:
    response = post(client, "pull_request", OPENED, delivery="d-1")

    assert response.status_code == 202
    assert response.json() == {"outcome": "enqueued", "delivery": "d-1"}
    assert queued_jobs(store) == [review_job_id(REF)]
    assert review_job_id(REF) == f"review:Codertocat/Hello-World#2@{HEAD}"


@pytest.mark.parametrize(
    "name",
    [
        "pull_request/reopened",
        "pull_request/synchronize",
        "pull_request/ready_for_review.with-installation",
    ],
)
def test_other_changes_are_queued_too(client: TestClient, store: Store, name: str) -> None:
    response = post(client, "pull_request", payload(name))

    assert response.status_code == 202
    assert len(queued_jobs(store)) == 1


def test_a_redelivery_is_acknowledged_once(client: TestClient, store: Store) -> None:
    first = post(client, "pull_request", OPENED, delivery="d-1")
    again = post(client, "pull_request", OPENED, delivery="d-1")

    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["outcome"] == "duplicate"
    assert len(queued_jobs(store)) == 1


def test_a_redelivery_is_not_handled_again_once_its_review_is_gone(
    client: TestClient, store: Store
) -> None:
    # A worker ran the review and kept no result: only the delivery's id is left to tell.
    post(client, "pull_request", OPENED, delivery="d-1")
    store.drop_job(review_job_id(REF))
    again = post(client, "pull_request", OPENED, delivery="d-1")

    assert (again.status_code, again.json()["outcome"]) == (200, "duplicate")
    assert queued_jobs(store) == []


def test_another_event_for_the_same_head_does_not_start_a_second_review(
    client: TestClient, store: Store
) -> None:
    post(client, "pull_request", OPENED, delivery="d-1")
    reopened = post(client, "pull_request", {**OPENED, "action": "reopened"}, delivery="d-2")

    assert reopened.status_code == 200
    assert reopened.json()["outcome"] == "duplicate"
    assert len(queued_jobs(store)) == 1


def pushed(before: str, after: str) -> dict[str, Any]:
    """The pull request's `synchronize` delivery for a push from `before` to `after`."""
    push: dict[str, Any] = json.loads(json.dumps(OPENED))
    push["action"] = "synchronize"
    push["before"], push["after"] = before, after
    push["pull_request"]["head"]["sha"] = after
    return push


def test_a_newer_push_supersedes_the_older_review(client: TestClient, store: Store) -> None:
    post(client, "pull_request", OPENED)

    assert post(client, "pull_request", pushed(HEAD, "f" * 40)).status_code == 202

    old_job = review_job_id(REF)
    assert store.zscore("arq:abort", old_job) is not None
    assert store.get("tiebreak:head:Codertocat/Hello-World#2") == "f" * 40
    assert f"review:Codertocat/Hello-World#2@{'f' * 40}" in queued_jobs(store)


def test_a_push_heard_after_a_newer_one_does_not_supersede_it(
    client: TestClient, store: Store
) -> None:
    post(client, "pull_request", OPENED)
    # Two pushes, HEAD → e… → f…, whose deliveries arrive in the wrong order.
    post(client, "pull_request", pushed("e" * 40, "f" * 40))
    late = post(client, "pull_request", pushed(HEAD, "e" * 40))

    # Queued all the same: when it starts, GitHub says whether its head is the current one.
    assert late.status_code == 202
    newest = f"review:Codertocat/Hello-World#2@{'f' * 40}"
    assert newest in queued_jobs(store)
    assert store.zscore("arq:abort", newest) is None
    assert store.zscore("arq:abort", review_job_id(REF)) is not None
    assert store.get("tiebreak:head:Codertocat/Hello-World#2") == "e" * 40


def test_a_draft_is_queued_with_its_event_for_the_config_to_decide(
    client: TestClient, store: Store
) -> None:
    # Whether drafts are reviewed is the repository's choice, read by the job from the base
    # branch: the webhook cannot know it.
    draft = json.loads(json.dumps(OPENED))
    draft["pull_request"]["draft"] = True

    response = post(client, "pull_request", draft)

    assert response.status_code == 202
    assert queued_jobs(store) == [review_job_id(REF)]


def test_a_draft_marked_ready_is_queued_beside_its_head_s_own_review(
    client: TestClient, store: Store
) -> None:
    draft = json.loads(json.dumps(OPENED))
    draft["pull_request"]["draft"] = True
    ready = json.loads(json.dumps(OPENED))
    ready["action"] = "ready_for_review"

    post(client, "pull_request", draft)
    response = post(client, "pull_request", ready)

    # The opened job may decline the draft and holds its id meanwhile: made ready, the same
    # head gets a review of its own (which ends at once if that head was reviewed).
    assert response.status_code == 202
    assert response.json()["outcome"] == "enqueued"
    assert review_job_id(REF, trigger="ready_for_review") == f"{review_job_id(REF)}:ready"
    assert review_job_id(REF, trigger="ready_for_review") in queued_jobs(store)


@pytest.mark.parametrize(
    ("event", "name"),
    [
        ("pull_request", "pull_request/closed"),
        ("issue_comment", "issue_comment/created.with-installation"),
        ("star", "pull_request/opened"),
    ],
)
def test_events_tiebreak_does_not_act_on_are_ignored(
    client: TestClient, store: Store, event: str, name: str
) -> None:
    response = post(client, event, payload(name))

    assert response.status_code == 200
    assert response.json()["outcome"] == "ignored"
    assert queued_jobs(store) == []


def test_ping_is_answered(client: TestClient) -> None:
    response = post(client, "ping", payload("ping/payload"))

    assert response.status_code == 200
    assert response.json()["outcome"] == "pong"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-Hub-Signature-256": "sha256=" + "0" * 64},
        {"X-Hub-Signature-256": "deadbeef"},
        {"X-Hub-Signature": "sha1=0000000000000000000000000000000000000000"},
    ],
    ids=["missing", "wrong", "no-prefix", "sha1-only"],
)
def test_a_delivery_without_a_valid_signature_is_refused(
    client: TestClient, store: Store, headers: dict[str, str]
) -> None:
    raw, good = signed("pull_request", OPENED)
    del good["X-Hub-Signature-256"]

    response = client.post("/api/github/webhooks", content=raw, headers=good | headers)

    assert response.status_code == 401
    assert queued_jobs(store) == []
    assert store.keys("tiebreak:*") == []


def test_a_body_signed_with_another_secret_is_refused(client: TestClient, store: Store) -> None:
    response = post(client, "pull_request", OPENED, secret="someone-else")

    assert response.status_code == 401
    assert queued_jobs(store) == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [(b"{not json", "malformed JSON"), (b"[1, 2]", "not a JSON object")],
)
def test_a_body_that_is_no_json_object_is_a_bad_request(
    client: TestClient, body: bytes, reason: str
) -> None:
    response = post(client, "pull_request", body)

    assert response.status_code == 400
    assert reason in response.json()["error"]


@pytest.mark.parametrize(
    "body",
    [
        b'{"action":"opened","pull_request": {',
        b'{"action": "closed", "number": [',
        b'  {"action":"opened"}',
    ],
)
def test_a_malformed_body_is_a_bad_request_whatever_its_first_member(
    client: TestClient, store: Store, body: bytes
) -> None:
    response = post(client, "pull_request", body)

    assert response.status_code == 400
    assert queued_jobs(store) == []


def test_a_body_whose_action_is_not_its_first_member_is_routed_by_it(
    client: TestClient, store: Store
) -> None:
    reordered = {k: v for k, v in OPENED.items() if k != "action"} | {"action": "opened"}
    assert json.dumps(reordered).find('"action"') > 1

    response = post(client, "pull_request", reordered)

    assert response.status_code == 202
    assert len(queued_jobs(store)) == 1


def test_a_payload_missing_what_its_handler_needs_is_a_bad_request(
    client: TestClient, store: Store
) -> None:
    broken = {k: v for k, v in OPENED.items() if k != "pull_request"}

    response = post(client, "pull_request", broken, delivery="d-9", like_github=False)

    assert response.status_code == 400
    assert "unexpected pull_request payload: pull_request" in response.json()["error"]
    # The delivery id is forgotten, so a corrected redelivery would be handled.
    assert store.get("tiebreak:delivery:d-9") is None


def test_missing_delivery_headers_are_a_bad_request(client: TestClient) -> None:
    raw, headers = signed("pull_request", OPENED)
    del headers["X-GitHub-Delivery"]

    response = client.post("/api/github/webhooks", content=raw, headers=headers)

    assert response.status_code == 400


def test_a_body_over_githubs_cap_is_refused(client: TestClient, store: Store) -> None:
    response = post(client, "pull_request", b" " * (MAX_BODY_BYTES + 1))

    assert response.status_code == 413
    assert queued_jobs(store) == []


def test_a_body_without_a_declared_length_is_refused(client: TestClient, store: Store) -> None:
    raw, headers = signed("pull_request", OPENED)

    # Sent in chunks, with no Content-Length, as GitHub never sends a delivery.
    response = client.post("/api/github/webhooks", content=iter([raw]), headers=headers)

    assert response.status_code == 411
    assert queued_jobs(store) == []


def test_installations_are_recorded(client: TestClient, store: Store) -> None:
    post(client, "installation", payload("installation/created"))
    post(client, "installation_repositories", payload("installation_repositories/added"))

    assert store.hget("tiebreak:installation:957387", "account") == "Codertocat"
    assert store.smembers("tiebreak:installation:957387:repos") == {
        "Codertocat/Hello-World",
        "Codertocat/Space",
    }

    deleted = payload("installation/deleted")
    deleted["installation"]["id"] = 957387
    post(client, "installation", deleted)

    assert not store.exists("tiebreak:installation:957387")


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}


def test_the_server_refuses_to_start_without_a_webhook_secret(redis_url: str) -> None:
    with pytest.raises(SettingsError, match="GITHUB_WEBHOOK_SECRET"):
        create_app(Settings(), redis_url)


def test_the_job_carries_only_the_narrow_reference(client: TestClient, store: Store) -> None:
    import pickle

    post(client, "pull_request", OPENED)

    job = pickle.loads(store.raw(f"arq:job:{review_job_id(REF)}") or b"")
    assert job["f"] == JobName.REVIEW
    # With the base the event names, where the review reads its config meanwhile.
    base = OPENED["pull_request"]["base"]["sha"]
    assert job["a"] == ({**REF.model_dump(mode="json"), "base_sha": base}, "opened")
    queued = QueuedRef.model_validate(job["a"][0])
    assert (queued.ref, queued.base_sha) == (REF, base)
    assert PullRequestRef.model_validate(job["a"][0]) == REF  # as a worker before it reads it


@pytest.mark.parametrize(
    ("field", "value"),
    [("sha", "not-a-sha"), ("sha", "../../../etc"), ("name", "repo/../../admin")],
)
def test_names_and_shas_that_could_bend_an_api_path_are_refused(
    client: TestClient, store: Store, field: str, value: str
) -> None:
    hostile = json.loads(json.dumps(OPENED))
    if field == "sha":
        hostile["pull_request"]["head"]["sha"] = value
    else:
        hostile["repository"]["name"] = value

    response = post(client, "pull_request", hostile)

    assert response.status_code == 400
    assert store.queued_jobs() == []


STALL_MS = 600_000
"""How long Redis stalls: longer than the test may run, so a delivery that waits for Redis
fails it."""


def stalled_app(stack: ExitStack, data_dir: Path, settings: Settings) -> tuple[str, TestClient]:
    """The app on a redis-server of its own (its URL), which is stopped before the app shuts
    down however the test ends: the shutdown's last flush of counts would wait on it."""
    server = stack.enter_context(EmbeddedRedis(data_dir, persist=False))
    client = stack.enter_context(TestClient(create_app(settings, server.url)))
    stack.callback(server.stop)
    return server.url, client


def stall(url: str, commands: str = "ALL") -> None:
    """Every client's commands wait (or only those that write, with `commands="WRITE"`), as
    they do while Redis is stuck: a fork on a large dataset, a slow disk, a network that
    stopped answering."""
    with redis.Redis.from_url(url) as admin:
        admin.execute_command("CLIENT", "PAUSE", STALL_MS, commands)


def until_waiting(url: str) -> None:
    """Return once a client's command waits on the stalled Redis (which still answers reads)."""
    with redis.Redis.from_url(url) as admin:
        while not admin.info("clients")["blocked_clients"]:
            time.sleep(0.01)


@pytest.mark.timeout(30)
def test_while_redis_stalls_a_delivery_gets_503_rather_than_waiting_for_it(
    tmp_path: Path,
) -> None:
    with ExitStack() as stack:
        url, client = stalled_app(stack, tmp_path, Settings(github_webhook_secret=SECRET))
        assert post(client, "pull_request", OPENED).status_code == 202
        stall(url)

        stalled = post(client, "pull_request", payload("pull_request/synchronize"))

    assert stalled.status_code == 503
    assert stalled.json() == {"error": "the queue is unavailable; redeliver later"}


@pytest.mark.timeout(30)
def test_bodies_waiting_on_a_stalled_redis_count_against_the_webhook_buffer(
    tmp_path: Path,
) -> None:
    settings = Settings(github_webhook_secret=SECRET, tiebreak_webhook_buffer_mb=25)
    # Signed by GitHub, or replayed by anyone who saw it once: a signature is no timestamp.
    large = {**OPENED, "padding": "x" * 16 * MiB}
    ping, ping_headers = signed("ping", {**payload("ping/payload"), "padding": "x" * 10 * MiB})
    with ExitStack() as stack:
        sender = stack.enter_context(ThreadPoolExecutor(1))
        url, client = stalled_app(stack, tmp_path, settings)
        assert post(client, "pull_request", OPENED).status_code == 202
        stall(url, "WRITE")
        waiting = sender.submit(post, client, "pull_request", large)
        until_waiting(url)

        meanwhile = client.post("/api/github/webhooks", content=ping, headers=ping_headers)

        assert waiting.result().status_code == 503
    assert meanwhile.status_code == 503
    assert meanwhile.json() == {"error": "too many deliveries arriving at once; redeliver later"}


def test_while_redis_is_down_a_delivery_gets_503_and_its_redelivery_is_queued(
    tmp_path: Path,
) -> None:
    redis = EmbeddedRedis(tmp_path, persist=False).start()
    try:
        settings = Settings(github_webhook_secret=SECRET)
        with TestClient(create_app(settings, redis.url)) as client:
            redis.stop()

            refused = post(client, "pull_request", OPENED, delivery="while-down")

            assert refused.status_code == 503
            assert refused.json() == {"error": "the queue is unavailable; redeliver later"}
            redis.start()
            redelivered = post(client, "pull_request", OPENED, delivery="while-down")
            assert redelivered.status_code == 202
    finally:
        redis.stop()
