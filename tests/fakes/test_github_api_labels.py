"""The fake GitHub's labels behave as GitHub's."""

from typing import Any

import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import RequestFailed

from tests.fakes.github_api import AUTO_LABEL_COLOR, FakeGitHub
from tests.fakes.github_api_kit import NAME, NUMBER, OWNER, REPO, failure, payload

# -- labels -----------------------------------------------------------------------------------


async def test_creating_an_existing_label_is_422_already_exists(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    created = await github.rest.issues.async_create_label(
        OWNER, NAME, name="Tiebreak: unresolved", color="d73a4a", description="Agents disagree."
    )

    with pytest.raises(RequestFailed) as exc:
        await github.rest.issues.async_create_label(
            OWNER, NAME, name="tiebreak: UNRESOLVED", color="000000"
        )

    assert created.status_code == 201
    assert (payload(created)["name"], payload(created)["color"]) == (
        "Tiebreak: unresolved",
        "d73a4a",
    )
    assert created.parsed_data.description == "Agents disagree."
    status, body = failure(exc)
    assert status == 422
    assert body["message"] == "Validation Failed"
    assert body["errors"] == [{"resource": "Label", "code": "already_exists", "field": "name"}]
    assert [label.color for label in fake.labels(REPO)] == ["d73a4a"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"color": "red"}, "color"), ({"description": "x" * 101}, "description")],
)
async def test_a_label_needs_a_hex_color_and_a_short_description(
    fake: FakeGitHub,
    unchecked: GitHub[AppInstallationAuthStrategy],
    fields: dict[str, Any],
    field: str,
) -> None:
    with pytest.raises(RequestFailed) as exc:
        await unchecked.rest.issues.async_create_label(OWNER, NAME, name="x", **fields)

    status, body = failure(exc)
    assert status == 422
    assert [e["field"] for e in body["errors"]] == [field]
    assert fake.labels(REPO) == []


async def test_adding_a_missing_label_to_an_issue_creates_it_grey(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_label(REPO, "bug", color="d73a4a")

    response = await github.rest.issues.async_add_labels(
        OWNER, NAME, NUMBER, labels=["BUG", "tiebreak"]
    )

    assert response.status_code == 200
    assert [(x["name"], x["color"]) for x in payload(response)] == [
        ("bug", "d73a4a"),
        ("tiebreak", AUTO_LABEL_COLOR),
    ]
    assert fake.issue_labels(REPO, NUMBER) == ["bug", "tiebreak"]
    created = next(label for label in fake.labels(REPO) if label.name == "tiebreak")
    assert created.description is None


async def test_removing_a_label_answers_the_rest_and_404_when_absent(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.issues.async_add_labels(
        OWNER, NAME, NUMBER, labels=["needs work", "tiebreak"]
    )

    removed = await github.rest.issues.async_remove_label(OWNER, NAME, NUMBER, "needs work")
    with pytest.raises(RequestFailed) as exc:
        await github.rest.issues.async_remove_label(OWNER, NAME, NUMBER, "needs work")
    listed = await github.rest.issues.async_list_labels_on_issue(OWNER, NAME, NUMBER)

    assert [x["name"] for x in payload(removed)] == ["tiebreak"]
    assert failure(exc)[0] == 404
    assert failure(exc)[1]["message"] == "Label does not exist"
    labels: list[Any] = listed.parsed_data
    assert [x.name for x in labels] == ["tiebreak"]
    (delete, _) = fake.requests_to("DELETE", r".*/labels/.*")
    assert delete.path.endswith("/labels/needs%20work")  # sent URL-encoded, read decoded
