"""The fake GitHub answers Tiebreak's GraphQL query for review threads as GitHub does."""

from typing import Any

import httpx
import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.exception import GraphQLFailed

from tests.fakes.github_api import GRAPHQL_UNSUPPORTED, AppKey, FakeGitHub, FakeGitHubError
from tests.fakes.github_api_kit import (
    APP_ID,
    INSTALLATION,
    NAME,
    NUMBER,
    OTHER_REPO,
    OWNER,
    REPO,
    installation_client,
)

# -- GraphQL: review threads ------------------------------------------------------------------

THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
          isResolved
          comments(first: 1) { nodes { databaseId } }
        }
      }
    }
  }
}
"""
THREADS_OF_PULL = {"owner": OWNER, "name": NAME, "number": NUMBER}


def thread_nodes(data: dict[str, Any]) -> list[tuple[bool, list[int]]]:
    """(isResolved, the comments' databaseIds) of each thread of a reviewThreads answer."""
    nodes = data["repository"]["pullRequest"]["reviewThreads"]["nodes"]
    return [(n["isResolved"], [c["databaseId"] for c in n["comments"]["nodes"]]) for n in nodes]


async def test_review_threads_and_whether_they_are_resolved_come_through_githubkits_graphql(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    await github.rest.pulls.async_create_review(
        OWNER,
        NAME,
        NUMBER,
        event="COMMENT",
        comments=[
            {"path": "app.py", "line": 22, "side": "RIGHT", "body": "y changed."},
            {"path": "new.txt", "line": 1, "body": "A greeting?"},
        ],
    )
    ((first, second),) = [review.comments for review in fake.reviews(REPO, NUMBER)]
    persons = fake.add_review_comment(REPO, NUMBER, "app.py", 2, "Why sys?", author="alice")
    reply = fake.add_review_comment(
        REPO, NUMBER, "new.txt", 1, "Yes.", author="alice", in_reply_to=second.id
    )
    fake.resolve_thread(REPO, NUMBER, reply, by="alice")  # the reply's thread: the second's
    fake.resolve_thread(REPO, NUMBER, persons, by="alice")
    fake.unresolve_thread(REPO, NUMBER, persons)

    data = await github.async_graphql(THREADS_QUERY, {**THREADS_OF_PULL, "cursor": None})
    asked_for_two = await github.async_graphql(
        THREADS_QUERY.replace("comments(first: 1)", "comments(first: 2)"), THREADS_OF_PULL
    )

    assert thread_nodes(data) == [
        (False, [first.id]),
        (True, [second.id]),
        (False, [persons]),
    ]
    page_info = data["repository"]["pullRequest"]["reviewThreads"]["pageInfo"]
    assert page_info["hasNextPage"] is False
    assert isinstance(page_info["endCursor"], str)
    assert thread_nodes(asked_for_two)[1] == (True, [second.id, reply])
    assert fake.thread_resolved(REPO, NUMBER, second.id)
    assert fake.thread_resolved(REPO, NUMBER, reply)
    assert not fake.thread_resolved(REPO, NUMBER, persons)
    (call, _) = fake.requests_to("POST", "/graphql")
    assert call.headers["authorization"] == f"token {fake.issued_tokens[0]}"
    assert call.body == {"query": THREADS_QUERY, "variables": {**THREADS_OF_PULL, "cursor": None}}
    with pytest.raises(KeyError):
        fake.resolve_thread(REPO, NUMBER, 999_999, by="alice")


async def test_review_threads_come_in_pages_after_opaque_cursors(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    threads = [
        fake.add_review_comment(REPO, NUMBER, "app.py", line, f"Line {line}?")
        for line in (1, 2, 3, 4, 5)
    ]
    query = THREADS_QUERY.replace("first: 100", "first: 2")

    pages = [page async for page in github.graphql.paginate(query, THREADS_OF_PULL)]

    assert [[ids for _, ids in thread_nodes(page)] for page in pages] == [
        [[threads[0]], [threads[1]]],
        [[threads[2]], [threads[3]]],
        [[threads[4]]],
    ]
    infos = [page["repository"]["pullRequest"]["reviewThreads"]["pageInfo"] for page in pages]
    assert [info["hasNextPage"] for info in infos] == [True, True, False]
    cursors = [r.body["variables"].get("cursor") for r in fake.requests_to("POST", "/graphql")]
    assert cursors == [None, infos[0]["endCursor"], infos[1]["endCursor"]]
    assert all(isinstance(info["endCursor"], str) for info in infos)


RESOLVERS_QUERY = THREADS_QUERY.replace(
    "          isResolved\n", "          id\n          isResolved\n          resolvedBy { login }\n"
)
RESOLVE = (
    "mutation($threadId: ID!) { %s(input: {threadId: $threadId}) { thread { id isResolved } } }"
)


async def test_who_resolved_a_thread_is_the_user_github_names_and_never_an_app(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy], plain: httpx.AsyncClient
) -> None:
    alices, apps, bobs = (
        fake.add_review_comment(REPO, NUMBER, "app.py", line, f"Line {line}?") for line in (1, 2, 3)
    )
    fake.resolve_thread(REPO, NUMBER, alices, by="alice")

    async def resolvers() -> list[tuple[bool, object]]:
        data = await github.async_graphql(RESOLVERS_QUERY, THREADS_OF_PULL)
        nodes = data["repository"]["pullRequest"]["reviewThreads"]["nodes"]
        return [(n["isResolved"], n["resolvedBy"]) for n in nodes]

    assert await resolvers() == [(True, {"login": "alice"}), (False, None), (False, None)]
    data = await github.async_graphql(RESOLVERS_QUERY, THREADS_OF_PULL)
    ids = [n["id"] for n in data["repository"]["pullRequest"]["reviewThreads"]["nodes"]]
    # The App resolves one and unresolves Alice's: GitHub names no `User` for its bot user.
    resolved = await github.async_graphql(RESOLVE % "resolveReviewThread", {"threadId": ids[1]})
    reopened = await github.async_graphql(RESOLVE % "unresolveReviewThread", {"threadId": ids[0]})
    # Bob resolves the third with his own token: GitHub names him.
    token = fake.issue_person_token("bob", repos=[REPO])
    by_bob = await plain.post(
        "/graphql",
        json={"query": RESOLVE % "resolveReviewThread", "variables": {"threadId": ids[2]}},
        headers={"Authorization": f"bearer {token}"},
    )

    assert resolved == {"resolveReviewThread": {"thread": {"id": ids[1], "isResolved": True}}}
    assert reopened == {"unresolveReviewThread": {"thread": {"id": ids[0], "isResolved": False}}}
    assert by_bob.json()["data"]["resolveReviewThread"]["thread"]["isResolved"] is True
    assert await resolvers() == [(False, None), (True, None), (True, {"login": "bob"})]
    assert not fake.thread_resolved(REPO, NUMBER, alices)
    assert fake.thread_resolved(REPO, NUMBER, apps)
    fake.unresolve_thread(REPO, NUMBER, bobs)
    assert not fake.thread_resolved(REPO, NUMBER, bobs)
    with pytest.raises(GraphQLFailed) as missing:
        await github.async_graphql(RESOLVE % "unresolveReviewThread", {"threadId": "PRRT_none"})
    assert [(e.type, e.path) for e in missing.value.response.errors or []] == [
        ("NOT_FOUND", ["unresolveReviewThread"])
    ]
    assert fake.problems == []


async def test_a_resolver_asked_for_more_than_its_login_is_a_problem(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    query = RESOLVERS_QUERY.replace("resolvedBy { login }", "resolvedBy { login email }")

    with pytest.raises(GraphQLFailed):
        await github.async_graphql(query, THREADS_OF_PULL)

    (problem,) = fake.problems
    assert "resolvedBy { login email }" in problem
    fake.problems.clear()


async def test_review_threads_of_a_repository_or_pull_request_not_found_are_graphql_errors(
    fake: FakeGitHub, github: GitHub[AppInstallationAuthStrategy]
) -> None:
    fake.add_pull(OTHER_REPO, 1, head_sha="9" * 40, base_sha="8" * 40)

    async def errors(variables: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
        with pytest.raises(GraphQLFailed) as exc:
            await github.async_graphql(THREADS_QUERY, variables)
        response = exc.value.response
        assert response.errors is not None
        return response.data, [e.model_dump(exclude_none=True) for e in response.errors]

    # Another installation's repository is hidden, as one that does not exist.
    other = {"owner": "acme", "name": "elsewhere", "number": 1}
    assert await errors(other) == (
        {"repository": None},
        [
            {
                "type": "NOT_FOUND",
                "path": ["repository"],
                "locations": [{"line": 3, "column": 3}],
                "message": "Could not resolve to a Repository with the name 'acme/elsewhere'.",
            }
        ],
    )
    missing = await errors({**THREADS_OF_PULL, "number": 404})
    assert missing[0] == {"repository": {"pullRequest": None}}
    assert [(e["type"], e["path"], e["message"]) for e in missing[1]] == [
        (
            "NOT_FOUND",
            ["repository", "pullRequest"],
            "Could not resolve to a PullRequest with the number of 404.",
        )
    ]
    bad_cursor = await errors({**THREADS_OF_PULL, "cursor": "not a cursor"})
    assert [e["type"] for e in bad_cursor[1]] == ["INVALID_CURSOR_ARGUMENTS"]
    no_number = await errors({"owner": OWNER, "name": NAME})
    assert [e["message"] for e in no_number[1]] == [
        "Variable $number of type Int! was provided invalid value"
    ]
    assert fake.problems == []


@pytest.mark.parametrize(
    ("threads", "error"),
    [
        ("reviewThreads(first: 101, after: $cursor)", "EXCESSIVE_PAGINATION"),
        ("reviewThreads(after: $cursor)", "MISSING_PAGINATION_BOUNDARIES"),
    ],
)
async def test_a_page_of_review_threads_is_asked_for_and_at_most_100(
    github: GitHub[AppInstallationAuthStrategy], threads: str, error: str
) -> None:
    query = THREADS_QUERY.replace("reviewThreads(first: 100, after: $cursor)", threads)

    with pytest.raises(GraphQLFailed) as exc:
        await github.async_graphql(query, THREADS_OF_PULL)

    assert [e.type for e in exc.value.response.errors or []] == [error]


async def test_graphql_wants_a_valid_installation_token(
    fake: FakeGitHub, plain: httpx.AsyncClient
) -> None:
    body = {"query": THREADS_QUERY, "variables": THREADS_OF_PULL}

    anonymous = await plain.post("/graphql", json=body)
    unknown = await plain.post(
        "/graphql", json=body, headers={"Authorization": "bearer ghs_not_issued"}
    )
    token = fake.issue_token(INSTALLATION)
    valid = await plain.post("/graphql", json=body, headers={"Authorization": f"bearer {token}"})

    assert anonymous.status_code == unknown.status_code == 401
    assert unknown.json()["message"] == "Bad credentials"
    assert valid.status_code == 200
    assert valid.json() == {
        "data": {
            "repository": {
                "pullRequest": {
                    "reviewThreads": {
                        "pageInfo": {"hasNextPage": False, "endCursor": None},
                        "nodes": [],
                    }
                }
            }
        }
    }


async def test_a_graphql_query_the_fake_does_not_know_is_an_error_and_a_problem(
    app_key: AppKey,
) -> None:
    fake = FakeGitHub(app_id=APP_ID, public_key_pem=app_key.public_pem).start()
    try:
        fake.add_installation(INSTALLATION, repos=[REPO])
        async with installation_client(fake, app_key) as github:
            with pytest.raises(GraphQLFailed) as exc:
                await github.async_graphql("query { viewer { login } }")
    finally:
        fake.stop()

    errors = exc.value.response.errors or []
    assert [e.message for e in errors] == [GRAPHQL_UNSUPPORTED]
    (problem,) = fake.problems
    assert "viewer { login }" in problem
    with pytest.raises(FakeGitHubError, match="answers only the reviewThreads query"):
        fake.__exit__(None, None, None)
