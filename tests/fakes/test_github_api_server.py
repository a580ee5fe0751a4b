"""The fake GitHub as a server: injected faults, a crashing handler, the record of
requests, concurrency, another process, and its lifecycle.
"""

import asyncio
import subprocess
import sys
from datetime import timedelta
from typing import Any

import httpx
import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed, SecondaryRateLimitExceeded

from tests.fakes.github_api import AppKey, FakeGitHub, FakeGitHubError
from tests.fakes.github_api_kit import (
    APP_ID,
    BASE,
    DIFF,
    DIFF_MEDIA,
    HEAD,
    INSTALLATION,
    NAME,
    NUMBER,
    OWNER,
    REPO,
    failure,
    installation_client,
    payload,
)

# -- fault injection --------------------------------------------------------------------------


async def test_a_failure_can_be_injected_for_the_next_matching_requests(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.fail_next("GET", rf"/repos/{REPO}/pulls/\d+", 502, times=2)

    for _ in range(2):
        with pytest.raises(RequestFailed) as exc:
            await github.rest.pulls.async_get(OWNER, NAME, NUMBER)
        assert failure(exc) == (502, {**failure(exc)[1], "message": "Bad Gateway"})
    third = await github.rest.pulls.async_get(OWNER, NAME, NUMBER)

    assert third.status_code == 200


async def test_a_failure_can_be_injected_for_one_media_type_of_a_path(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.fail_next("GET", rf"/repos/{REPO}/pulls/\d+", 502, accept=DIFF_MEDIA)

    pull = await github.rest.pulls.async_get(OWNER, NAME, NUMBER)
    with pytest.raises(RequestFailed) as exc:
        await github.rest.pulls.async_get(OWNER, NAME, NUMBER, headers={"Accept": DIFF_MEDIA})
    diff = await github.rest.pulls.async_get(OWNER, NAME, NUMBER, headers={"Accept": DIFF_MEDIA})

    # The pull request as JSON was not the diff: answered; the diff failed once.
    assert payload(pull)["number"] == NUMBER
    assert failure(exc)[0] == 502
    assert diff.text == DIFF


async def test_a_secondary_rate_limit_reaches_githubkit_with_its_retry_after(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.fail_next(
        "POST",
        r".*/pulls/\d+/reviews",
        403,
        {"message": "You have exceeded a secondary rate limit."},
        {"retry-after": "7"},
    )

    with pytest.raises(SecondaryRateLimitExceeded) as exc:
        await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER, body="x", event="COMMENT")

    assert exc.value.retry_after == timedelta(seconds=7)
    assert fake.reviews(REPO, NUMBER) == []


async def test_a_processed_failure_takes_effect_although_the_client_sees_an_error(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.fail_next("POST", r".*/pulls/\d+/reviews", 504, processed=True)

    with pytest.raises(RequestFailed):
        await github.rest.pulls.async_create_review(OWNER, NAME, NUMBER, body="x", event="COMMENT")

    assert len(fake.reviews(REPO, NUMBER)) == 1


# -- the server itself ------------------------------------------------------------------------


async def test_a_crashing_handler_answers_500_and_is_a_problem(app_key: AppKey) -> None:
    def boom(*args: Any) -> Any:
        raise RuntimeError("the fake is broken")

    fake = FakeGitHub(app_id=APP_ID, public_key_pem=app_key.public_pem).start()
    try:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(REPO, NUMBER, head_sha=HEAD, base_sha=BASE, diff=DIFF)
        fake._get_pull = boom  # type: ignore[method-assign,assignment]
        async with installation_client(fake, app_key) as github:
            with pytest.raises(RequestFailed) as exc:
                await github.rest.pulls.async_get(OWNER, NAME, NUMBER)
    finally:
        fake.stop()

    assert exc.value.response.status_code == 500
    (problem,) = fake.problems
    assert "RuntimeError: the fake is broken" in problem
    # Strict: leaving the `with` block with a problem noted fails the test.
    with pytest.raises(FakeGitHubError, match="the fake is broken"):
        fake.__exit__(None, None, None)


async def test_an_unknown_route_is_404_json(fake: FakeGitHub, plain: httpx.AsyncClient) -> None:
    token = fake.issue_token(INSTALLATION)

    response = await plain.put(
        f"/repos/{REPO}/issues/{NUMBER}/lock", headers={"Authorization": f"token {token}"}
    )

    assert response.status_code == 404
    assert response.json()["message"] == "Not Found"


async def test_a_body_that_is_not_json_is_400(fake: FakeGitHub, plain: httpx.AsyncClient) -> None:
    token = fake.issue_token(INSTALLATION)

    response = await plain.post(
        f"/repos/{REPO}/labels", content=b"{nope", headers={"Authorization": f"token {token}"}
    )

    assert (response.status_code, response.json()["message"]) == (400, "Problems parsing JSON")


async def test_every_request_is_recorded(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.issues.async_add_labels(OWNER, NAME, NUMBER, labels=["tiebreak"])

    exchange, call = fake.requests
    assert (exchange.method, exchange.status) == ("POST", 201)
    assert (call.method, call.path, call.status) == ("POST", f"/repos/{REPO}/issues/7/labels", 200)
    assert call.body == {"labels": ["tiebreak"]}
    assert call.headers["x-github-api-version"] == "2026-03-10"
    assert call.response[0]["name"] == "tiebreak"


async def test_concurrent_requests_change_state_consistently(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    async def create(i: int) -> int:
        response = await github.rest.checks.async_create(
            OWNER, NAME, name=f"check {i}", head_sha=HEAD
        )
        await github.rest.issues.async_add_labels(OWNER, NAME, NUMBER, labels=[f"label {i}"])
        return int(payload(response)["id"])

    ids = await asyncio.gather(*(create(i) for i in range(20)))

    assert len(set(ids)) == 20
    assert sorted(run.id for run in fake.check_runs(REPO)) == sorted(ids)
    assert sorted(fake.issue_labels(REPO, NUMBER)) == sorted(f"label {i}" for i in range(20))


CHILD = """
import json, sys, urllib.request
base, token = sys.argv[1], sys.argv[2]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
request = urllib.request.Request(
    base + "/repos/octo/widgets/issues/7/labels",
    data=json.dumps({"labels": ["from another process"]}).encode(),
    headers={"Authorization": "token " + token, "Content-Type": "application/json"},
    method="POST",
)
with opener.open(request, timeout=5) as response:
    print(response.status, json.load(response)[0]["name"])
"""


def test_another_process_can_use_the_fake(fake: FakeGitHub) -> None:
    token = fake.issue_token(INSTALLATION)

    child = subprocess.run(
        [sys.executable, "-c", CHILD, fake.base_url, token],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )

    assert child.stdout.strip() == "200 from another process"
    assert fake.issue_labels(REPO, NUMBER) == ["from another process"]


def test_the_base_url_exists_only_while_running(app_key: AppKey) -> None:
    fake = FakeGitHub(app_id=APP_ID, public_key_pem=app_key.public_pem)

    with pytest.raises(RuntimeError):
        _ = fake.base_url
    with fake:
        assert fake.base_url.startswith("http://127.0.0.1:")
    with pytest.raises(RuntimeError):
        _ = fake.base_url


def test_the_diff_lines_follow_githubs_positions(fake: FakeGitHub) -> None:
    lines = fake.diff_lines(REPO, NUMBER, "app.py")

    assert [(d.left, d.right) for d in lines if d.hunk == 1] == [
        (20, 21),
        (21, None),
        (None, 22),
        (22, 23),
    ]
    assert [d.position for d in lines] == [1, 2, 3, 4, 5, 6, 8, 9, 10, 11]
