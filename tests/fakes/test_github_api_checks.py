"""The fake GitHub's check runs behave as GitHub's."""

from typing import Any, cast

import pydantic
import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed

from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_api_kit import HEAD, NAME, OWNER, REPO, failure, payload

# -- check runs -------------------------------------------------------------------------------


async def test_a_check_run_is_created_then_completed_and_its_history_kept(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    created = await github.rest.checks.async_create(
        OWNER,
        NAME,
        name="Tiebreak",
        head_sha=HEAD,
        status="in_progress",
        external_id="review-1",
        details_url="https://tiebreak.example/reviews/1",
        output={"title": "Reviewing", "summary": "The agents are debating."},
    )
    run_id = payload(created)["id"]
    updated = await github.rest.checks.async_update(
        OWNER,
        NAME,
        run_id,
        status="completed",
        conclusion="neutral",
        output={"title": "2 findings", "summary": "See below.", "text": "Details."},
        actions=[{"label": "Re-review", "description": "Run again", "identifier": "rerun"}],
    )

    assert created.status_code == 201
    body = payload(created)
    assert (body["name"], body["head_sha"], body["status"]) == ("Tiebreak", HEAD, "in_progress")
    assert body["conclusion"] is None
    assert body["html_url"] == f"https://github.com/{REPO}/runs/{run_id}"
    assert body["details_url"] == "https://tiebreak.example/reviews/1"
    assert body["output"]["title"] == "Reviewing"
    assert created.parsed_data.id == run_id  # the strict model accepts the fake's answer
    assert updated.status_code == 200
    assert (payload(updated)["status"], payload(updated)["conclusion"]) == ("completed", "neutral")
    assert payload(updated)["completed_at"]
    (run,) = fake.check_runs(REPO)
    assert run.states == [("in_progress", None), ("completed", "neutral")]
    assert [h["output"]["title"] for h in run.history] == ["Reviewing", "2 findings"]
    assert run.output["text"] == "Details."
    assert run.actions[0]["identifier"] == "rerun"
    assert run.external_id == "review-1"


def annotations(n: int, start: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "path": "app.py",
            "start_line": line,
            "end_line": line,
            "annotation_level": "warning",
            "message": f"finding {line}",
        }
        for line in range(start, start + n)
    ]


async def test_annotations_of_successive_updates_append(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    run_id = payload(
        await github.rest.checks.async_create(OWNER, NAME, name="Tiebreak", head_sha=HEAD)
    )["id"]
    for start in (1, 51):
        output: Any = {"title": "Findings", "summary": "…", "annotations": annotations(50, start)}
        await github.rest.checks.async_update(OWNER, NAME, run_id, output=output)
    final = await github.rest.checks.async_get(OWNER, NAME, run_id)

    assert payload(final)["output"]["annotations_count"] == 100
    (run,) = fake.check_runs(REPO)
    assert [a["start_line"] for a in run.annotations] == list(range(1, 101))
    assert [h["output"]["annotations_count"] for h in run.history] == [0, 50, 100]
    assert run.states == [("queued", None)] * 3


async def test_more_than_50_annotations_in_one_request_is_422(
    fake: FakeGitHub,
    github: GitHub[AppInstallationAuthStrategy],
    unchecked: GitHub[AppInstallationAuthStrategy],
) -> None:
    output: Any = {"title": "Findings", "summary": "…", "annotations": annotations(51)}
    # githubkit refuses it before sending...
    with pytest.raises(pydantic.ValidationError):
        await github.rest.checks.async_create(
            OWNER, NAME, name="Tiebreak", head_sha=HEAD, output=output
        )
    assert fake.requests_to("POST", r".*/check-runs") == []

    # ...and GitHub refuses it too.
    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.checks.async_create(
            OWNER, NAME, name="Tiebreak", head_sha=HEAD, output=output
        )

    assert failure(exc)[0] == 422
    assert fake.check_runs(REPO) == []


async def test_a_conclusion_completes_the_run(
    fake: FakeGitHub, unchecked: GitHub[AppInstallationAuthStrategy]
) -> None:
    created = await unchecked.rest.checks.async_create(
        OWNER, NAME, name="Tiebreak", head_sha=HEAD, status="in_progress", conclusion="success"
    )

    assert (payload(created)["status"], payload(created)["conclusion"]) == ("completed", "success")


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "waiting"},  # GitHub Actions only
        {"status": "bogus"},
        {"conclusion": "stale"},  # GitHub only
        {"conclusion": "bogus"},
        {"status": "completed"},  # without a conclusion
        {"completed_at": "2026-01-01T00:00:00Z"},  # without a conclusion
        {"output": {"title": "no summary"}},
        {"actions": [{"label": "x", "description": "y", "identifier": "z"}] * 4},
        {"actions": [{"label": "a label of more than 20", "description": "y", "identifier": "z"}]},
        {"output": {"title": "t", "summary": "s", "annotations": [{"path": "app.py"}]}},
    ],
)
async def test_github_refuses_a_check_run_it_cannot_take(
    fake: FakeGitHub, unchecked: GitHub[AppInstallationAuthStrategy], fields: dict[str, Any]
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.checks.async_create(
            OWNER, NAME, name="Tiebreak", head_sha=HEAD, **fields
        )

    assert failure(exc)[0] == 422
    assert fake.check_runs(REPO) == []


async def test_a_check_run_on_an_unknown_commit_is_422(
    github: GitHub[AppInstallationAuthStrategy],
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await github.rest.checks.async_create(OWNER, NAME, name="Tiebreak", head_sha="c" * 40)

    assert failure(exc) == (
        422,
        {**failure(exc)[1], "message": f"No commit found for SHA: {'c' * 40}"},
    )


async def test_a_refused_update_changes_nothing(
    fake: FakeGitHub, unchecked: GitHub[AppInstallationAuthStrategy]
) -> None:
    run_id = payload(
        await unchecked.rest.checks.async_create(
            OWNER, NAME, name="Tiebreak", head_sha=HEAD, status="in_progress"
        )
    )["id"]

    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.checks.async_update(
            OWNER, NAME, run_id, data=cast(Any, {"completed_at": "2026-01-01T00:00:00Z"})
        )
    with pytest.raises(RequestFailed) as missing:
        await unchecked.rest.checks.async_update(OWNER, NAME, run_id + 1000, status="queued")

    assert failure(exc)[0] == 422
    assert failure(missing)[0] == 404
    (run,) = fake.check_runs(REPO)
    assert run.states == [("in_progress", None)]
