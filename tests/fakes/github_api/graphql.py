"""The fake GitHub's GraphQL endpoint, which answers the two queries Tiebreak sends: the review
threads of a pull request, recognised rather than parsed, with the errors GitHub answers
for it (a variable of the wrong type, a page size missing or too large, a bad cursor, a
repository or pull request it cannot resolve) shaped as GitHub's, and who resolved each
(`resolvedBy { login }`, a `User`: null for a thread no user resolved, an App's bot user
included); files' texts by aliased `object(expression:)` fields
(:mod:`tests.fakes.github_api.blobs`); and the two mutations `resolveReviewThread` and
`unresolveReviewThread`, on a thread's node id (`id` in the query's nodes).
"""

import base64
import binascii
import re
from typing import Any

from tests.fakes.github_api.auth import _Auth
from tests.fakes.github_api.blobs import _Blobs
from tests.fakes.github_api.constants import _GRAPHQL_DOCS, GRAPHQL_UNSUPPORTED, MAX_GRAPHQL_PAGE
from tests.fakes.github_api.state import _Answer, _error, _Request


class _GraphQL(_Auth, _Blobs):
    """`POST /graphql` (its token checked as for REST)."""

    def _graphql(self, request: _Request) -> _Answer:
        """`POST /graphql`, for the queries Tiebreak sends: a pull request's review threads,
        and files' texts by `object(expression:)`.

        No parser for the first: the query is recognised by `reviewThreads` in it, its pages
        by the `first:` arguments, and its subject by the variables `owner`, `name`, `number`
        and `cursor`. Errors are shaped as GitHub's: 200 with `errors` beside the `data` that
        resolved.
        """
        if not request.headers.get("authorization"):
            raise _error(401, "This endpoint requires you to be authenticated.", _GRAPHQL_DOCS)
        covered = self._covered(request)
        body = request.body if isinstance(request.body, dict) else {}
        query, variables = body.get("query"), body.get("variables") or {}
        if not isinstance(query, str):
            message = "A query attribute must be specified and must be a string."
            return _graphql_answer(None, [{"message": message}])
        if not isinstance(variables, dict):
            variables = {}
        mutation = re.search(r"\b(un)?resolveReviewThread\b", query)
        if mutation:
            resolving = mutation[1] is None
            return self._resolve_review_thread(
                covered, variables.get("threadId"), self._person(request), resolving=resolving
            )
        if self._asks_for_objects(query):
            data, errors = self._objects(covered, query, variables)
            if any(error.get("type") == "FAKE_UNPARSED" for error in errors):
                self.problems.append(f"POST /graphql: {errors[0]['message']}:\n{query}")
            return _graphql_answer(data, errors)
        if "reviewThreads" not in query:
            self.problems.append(f"POST /graphql: {GRAPHQL_UNSUPPORTED}, not:\n{query}")
            return _graphql_answer(
                None, [{"type": "FAKE_UNSUPPORTED", "message": GRAPHQL_UNSUPPORTED}]
            )
        if not isinstance(variables, dict):
            variables = {}
        return self._review_threads(covered, query, variables)

    def _review_threads(
        self, covered: frozenset[str], query: str, variables: dict[str, Any]
    ) -> _Answer:
        owner, name = variables.get("owner"), variables.get("name")
        number: Any = variables.get("number")  # an int once the checks below passed
        cursor = variables.get("cursor")
        invalid = [
            _invalid_variable(key, kind, value)
            for key, kind, value in (
                ("owner", "String!", owner),
                ("name", "String!", name),
                ("number", "Int!", number),
                ("cursor", "String", cursor),
            )
            if not _graphql_value(kind, value)
        ]
        if invalid:
            return _graphql_answer(None, invalid)
        pages = {"comments": 0}  # a query that asks for no comments gets none
        for connection in ("reviewThreads", "comments"):
            if not re.search(rf"\b{connection}\b", query):
                continue
            first = _first(query, connection)
            if first is None or first > MAX_GRAPHQL_PAGE:
                return _graphql_answer(None, [_pagination_error(connection, first)])
            pages[connection] = first
        key = f"{owner}/{name}".lower()
        repo = self._repos.get(key)
        if repo is None or key not in covered:
            # A repository the token cannot see is one that does not exist, as in REST.
            message = f"Could not resolve to a Repository with the name '{owner}/{name}'."
            error = _not_resolved(query, ["repository"], message)
            return _graphql_answer({"repository": None}, [error])
        pull = self._pulls.get((key, number))
        if pull is None:
            message = f"Could not resolve to a PullRequest with the number of {number}."
            error = _not_resolved(query, ["repository", "pullRequest"], message)
            return _graphql_answer({"repository": {"pullRequest": None}}, [error])
        roots = [c for c in pull.comments if c.in_reply_to is None]
        start = _after(cursor) if cursor is not None else 0
        if start is None:
            error = {
                "type": "INVALID_CURSOR_ARGUMENTS",
                "path": ["repository", "pullRequest", "reviewThreads"],
                "locations": [_location(query, "reviewThreads")],
                "message": f"`{cursor}` does not appear to be a valid cursor.",
            }
            data = {"repository": {"pullRequest": {"reviewThreads": None}}}
            return _graphql_answer(data, [error])
        chunk = roots[start : start + pages["reviewThreads"]]
        with_id = re.search(r"\bnodes\s*\{\s*id\b", query) is not None
        resolver = _resolver_selection(query)
        if resolver is not None and resolver != "login":
            self.problems.append(f"POST /graphql: resolvedBy {{ login }} only, not:\n{query}")
            return _graphql_answer(
                None, [{"type": "FAKE_UNSUPPORTED", "message": GRAPHQL_UNSUPPORTED}]
            )
        nodes = [
            ({"id": _thread_node_id(root.id)} if with_id else {})
            | ({"resolvedBy": _user(pull.resolved.get(root.id))} if resolver else {})
            | {
                "isResolved": root.id in pull.resolved,
                "comments": {
                    "nodes": [
                        {"databaseId": comment.id}
                        for comment in pull.comments
                        if root.id in (comment.id, comment.in_reply_to)
                    ][: pages["comments"]]
                },
            }
            for root in chunk
        ]
        end = start + len(chunk)
        threads = {
            "pageInfo": {
                "hasNextPage": end < len(roots),
                "endCursor": _cursor(end) if chunk else None,
            },
            "nodes": nodes,
        }
        return _graphql_answer({"repository": {"pullRequest": {"reviewThreads": threads}}})

    def _resolve_review_thread(
        self, covered: frozenset[str], thread_id: Any, person: str | None, *, resolving: bool
    ) -> _Answer:
        """`resolveReviewThread` or `unresolveReviewThread(input: {threadId})`: the thread
        resolved by the token's holder (a person, or the App's bot user, whom `resolvedBy`
        does not name), or unresolved."""
        field_name = "resolveReviewThread" if resolving else "unresolveReviewThread"
        with self._lock:
            for (key, _), pull in self._pulls.items():
                if key not in covered:
                    continue
                for root in pull.comments:
                    if root.in_reply_to is None and _thread_node_id(root.id) == thread_id:
                        if resolving:
                            pull.resolved[root.id] = person
                        else:
                            pull.resolved.pop(root.id, None)
                        thread = {"id": thread_id, "isResolved": resolving}
                        return _graphql_answer({field_name: {"thread": thread}})
        message = f"Could not resolve to a node with the global id of '{thread_id}'"
        error = {"type": "NOT_FOUND", "path": [field_name], "message": message}
        return _graphql_answer({field_name: None}, [error])


def _thread_node_id(root_id: int) -> str:
    """A review thread's node id, as GitHub's look (`PRRT_…`), from its first comment."""
    return "PRRT_" + base64.b64encode(f"thread:{root_id}".encode()).decode().rstrip("=")


def _resolver_selection(query: str) -> str | None:
    """What the query selects of each thread's `resolvedBy` (`login`); None if it asks not."""
    if not re.search(r"\bresolvedBy\b", query):
        return None
    selection = re.search(r"\bresolvedBy\s*\{([^{}]*)\}", query)
    return " ".join(selection[1].split()) if selection else ""


def _user(login: str | None) -> dict[str, str] | None:
    """A `User` as the threads query selects it; null for none (no one, or an App's bot)."""
    return {"login": login} if login is not None else None


def _graphql_answer(
    data: dict[str, Any] | None, errors: list[dict[str, Any]] | None = None
) -> _Answer:
    """GitHub's GraphQL answer: 200, with the `data` that resolved and the `errors`."""
    body: dict[str, Any] = {"data": data} if data is not None else {}
    if errors:
        body["errors"] = errors
    return _Answer(200, body)


def _graphql_value(kind: str, value: Any) -> bool:
    if value is None:
        return not kind.endswith("!")
    if kind.startswith("Int"):
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str)


def _invalid_variable(name: str, kind: str, value: Any) -> dict[str, Any]:
    explanation = "Expected value to not be null" if value is None else "Could not coerce value"
    return {
        "extensions": {"value": value, "problems": [{"path": [], "explanation": explanation}]},
        "message": f"Variable ${name} of type {kind} was provided invalid value",
    }


def _pagination_error(connection: str, first: int | None) -> dict[str, Any]:
    if first is None:
        return {
            "type": "MISSING_PAGINATION_BOUNDARIES",
            "message": f"You must provide a `first` or `last` value to properly paginate the "
            f"`{connection}` connection.",
        }
    return {
        "type": "EXCESSIVE_PAGINATION",
        "message": f"Requesting {first} records on the `{connection}` connection exceeds the "
        f"`first` limit of {MAX_GRAPHQL_PAGE} records.",
    }


def _first(query: str, connection: str) -> int | None:
    """The `first: N` argument of a connection in the query; None if it has none."""
    arguments = re.search(rf"\b{connection}\s*\(([^)]*)\)", query)
    first = re.search(r"\bfirst\s*:\s*(\d+)", arguments[1]) if arguments else None
    return int(first[1]) if first else None


def _location(query: str, field_name: str) -> dict[str, int]:
    """Where a field first appears in the query: GitHub's `locations` item (from 1)."""
    found = re.search(rf"\b{field_name}\b", query)
    offset = found.start() if found else 0
    line = query.count("\n", 0, offset) + 1
    return {"line": line, "column": offset - (query.rfind("\n", 0, offset) + 1) + 1}


def _not_resolved(query: str, path: list[str], message: str) -> dict[str, Any]:
    return {
        "type": "NOT_FOUND",
        "path": path,
        "locations": [_location(query, path[-1])],
        "message": message,
    }


def _cursor(position: int) -> str:
    """An opaque cursor: the page after it starts at `position`."""
    return base64.b64encode(f"cursor:{position}".encode()).decode()


def _after(cursor: str) -> int | None:
    """The position a cursor of `_cursor` stands for; None for any other string."""
    try:
        text = base64.b64decode(cursor, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    prefix, _, position = text.partition(":")
    return int(position) if prefix == "cursor" and position.isdigit() else None
