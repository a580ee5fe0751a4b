"""The fake GitHub keeps to GitHub's REST description: each route it answers is an operation of
the description or is listed with the reason it is not GitHub's REST API, and a body the
description refuses is refused (422) and fails the test that sent it, naming the operation."""

import re
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_api.openapi import (
    NOT_REST,
    description,
    json_schema,
    listed,
    sample_path,
)
from tests.fakes.github_api_kit import HEAD, NUMBER, REPO


def test_every_route_of_the_fake_is_an_operation_of_githubs_description(
    fake: FakeGitHub,
) -> None:
    unknown = [
        f"{method} {pattern.pattern}"
        for method, pattern in fake.routes()
        if not listed((method, pattern))
        and description().find(method, sample_path(pattern)) is None
    ]

    assert unknown == [], (
        "routes GitHub's description lacks: drop them, list them in NOT_REST with the reason, "
        "or, if GitHub has them, regenerate tests/fixtures/github-rest (its README says how)"
    )


def test_the_routes_that_are_not_githubs_rest_api_are_the_fakes_and_say_why(
    fake: FakeGitHub,
) -> None:
    served = [route for route in fake.routes() if listed(route)]

    assert len(served) == len(NOT_REST)
    assert all(len(why.split()) > 5 for why in NOT_REST.values())
    assert listed(("POST", re.compile(r"/graphql")))


def test_the_extract_holds_the_operations_the_fake_serves_and_no_other(
    fake: FakeGitHub,
) -> None:
    served = {
        description().find(method, sample_path(pattern))
        for method, pattern in fake.routes()
        if not listed((method, pattern))
    }

    assert {str(op) for op in served if op} == {str(op) for op in description().operations}


def test_the_extracts_schemas_are_json_schemas() -> None:
    bodies = [op.body_schema for op in description().operations if op.body_schema]

    for schema in bodies:
        Draft202012Validator.check_schema(json_schema(schema))
    assert len(bodies) >= 15


@pytest.fixture
def person(fake: FakeGitHub, plain: httpx.AsyncClient) -> httpx.AsyncClient:
    plain.headers["authorization"] = f"token {fake.issue_person_token('ada', repos=[REPO])}"
    return plain


async def test_a_body_the_description_refuses_is_422_and_a_problem_of_the_test(
    fake: FakeGitHub, person: httpx.AsyncClient
) -> None:
    review: Any = {"body": "Looks fine", "event": "COMMENTED"}

    answer = await person.post(f"/repos/{REPO}/pulls/{NUMBER}/reviews", json=review)

    assert answer.status_code == 422
    assert answer.json()["message"].startswith("Invalid request.")
    assert (
        '"COMMENTED" is not one of ["APPROVE", "REQUEST_CHANGES", "COMMENT"]'
        in (answer.json()["message"])
    )
    assert fake.reviews(REPO, NUMBER) == []
    (problem,) = fake.problems
    assert f"POST /repos/{REPO}/pulls/{NUMBER}/reviews is " in problem
    assert "(pulls/create-review): a body GitHub's description refuses, at event:" in problem
    fake.problems.clear()


async def test_a_field_github_would_ignore_is_taken_and_a_problem_of_the_test(
    fake: FakeGitHub, person: httpx.AsyncClient
) -> None:
    comment = {"body": "Thanks", "in_reply_to": 5}

    answer = await person.post(f"/repos/{REPO}/issues/{NUMBER}/comments", json=comment)

    assert answer.status_code == 201
    assert [c.body for c in fake.issue_comments(REPO, NUMBER)] == ["Thanks"]
    (problem,) = fake.problems
    assert "(issues/create-comment): a body GitHub's description ignores" in problem
    assert "'in_reply_to' was unexpected" in problem
    fake.problems.clear()


async def test_check_runs_are_checked_through_githubs_combinators(
    fake: FakeGitHub, person: httpx.AsyncClient
) -> None:
    # GitHub's update schema says a completed run has a conclusion (anyOf), and the fields of
    # its branches are known fields, not ignored ones.
    created = await person.post(
        f"/repos/{REPO}/check-runs", json={"name": "Tiebreak", "head_sha": HEAD}
    )
    url = f"/repos/{REPO}/check-runs/{created.json()['id']}"

    completed = await person.patch(url, json={"status": "completed", "conclusion": "success"})
    unfinished = await person.patch(url, json={"status": "completed"})

    assert (created.status_code, completed.status_code) == (201, 200)
    assert unfinished.status_code == 422
    (problem,) = fake.problems
    assert "(checks/update): a body GitHub's description refuses, at the body:" in problem
    assert "'conclusion' is a required property" in problem
    fake.problems.clear()


async def test_a_path_githubs_description_lacks_is_a_problem_of_the_test_once_answered(
    fake: FakeGitHub, person: httpx.AsyncClient
) -> None:
    # The fake takes a tarball without its ref (the default branch, as GitHub does), but
    # GitHub's description has only `/tarball/{ref}`: a client should name the ref.
    answer = await person.get(f"/repos/{REPO}/tarball")
    missing = await person.get(f"/repos/{REPO}/no-such-endpoint")

    assert (answer.status_code, missing.status_code) == (302, 404)
    (problem,) = fake.problems
    assert problem.startswith(f"GET /repos/{REPO}/tarball was answered 302, but it is no ")
    fake.problems.clear()


NAMED = {"type": "object", "properties": {"name": {"type": "string"}}}


@pytest.mark.parametrize(
    ("schema", "body", "fits"),
    [
        ({"type": "string", "nullable": True}, None, True),
        ({"type": "string", "enum": ["a"], "nullable": True}, None, True),
        ({"type": "string"}, None, False),
        ({"allOf": [NAMED], "nullable": True}, None, True),
        (NAMED, {"name": "x"}, True),
        (NAMED, {"name": "x", "other": 1}, False),
        ({**NAMED, "additionalProperties": True}, {"other": 1}, True),
        # A branch refines its parent's object: the parent's fields and the branch's are known.
        (
            {**NAMED, "anyOf": [{"properties": {"size": {}}, "additionalProperties": True}]},
            {"name": "x", "size": 1},
            True,
        ),
        (
            {**NAMED, "anyOf": [{"properties": {"size": {}}, "additionalProperties": True}]},
            {"name": "x", "colour": 1},
            False,
        ),
        # Whole alternatives are each closed; parts of one object (allOf) are closed together.
        ({"oneOf": [NAMED, {"type": "array"}]}, {"name": "x", "other": 1}, False),
        ({"allOf": [NAMED, {"properties": {"size": {}}}]}, {"name": "x", "size": 1}, True),
        ({"allOf": [NAMED, {"properties": {"size": {}}}]}, {"name": "x", "colour": 1}, False),
    ],
)
def test_githubs_openapi_schemas_are_read_as_json_schemas_that_know_every_field(
    schema: dict[str, Any], body: Any, fits: bool
) -> None:
    assert Draft202012Validator(json_schema(schema)).is_valid(body) is fits
