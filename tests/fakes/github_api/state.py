"""The fake GitHub's internal state and plumbing: the repositories, pull requests, commits,
reactions, tokens and faults it holds, one request and its answer, the exception that ends
a request with an answer, and the helpers that make one an error in GitHub's shape.
"""

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from tests.fakes.github_api.constants import DOCS
from tests.fakes.github_api.records import (
    CheckRun,
    IssueComment,
    Label,
    RefUpdate,
    Review,
    ReviewComment,
)


@dataclass(slots=True)
class _Commit:
    sha: str
    tree: str
    parents: list[str]
    message: str
    author: dict[str, str]
    committer: dict[str, str]
    placeholder: bool = False
    """Made by `set_file` for a branch no pull request has named yet; the first pull request
    that names the branch takes its files."""


@dataclass(slots=True)
class _Reaction:
    id: int
    content: str
    user: str
    user_type: str
    created_at: str


@dataclass(slots=True)
class _Repo:
    full_name: str
    id: int
    default_branch: str
    branches: dict[str, str] = field(default_factory=dict)
    """Branch name → commit SHA."""
    commits: dict[str, _Commit] = field(default_factory=dict)
    """The commits the repository has, by SHA. A fork and its parent share commit objects,
    so a snapshot edited through one is seen through the other."""
    labels: dict[str, Label] = field(default_factory=dict)
    """Lower-cased name → label (GitHub matches label names case-insensitively)."""
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    issue_comments: dict[int, IssueComment] = field(default_factory=dict)
    reactions: dict[int, list[_Reaction]] = field(default_factory=dict)
    """Comment id (issue or review comment: the fake's ids are unique) → its reactions."""
    permissions: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Lower-cased login → (login, role name)."""
    ref_updates: list[RefUpdate] = field(default_factory=list)


@dataclass(slots=True)
class _Pull:
    number: int
    id: int
    head_sha: str
    head_ref: str
    head_repo: str | None
    """The repository holding the head branch; None once it was deleted (a fork)."""
    base_sha: str
    base_ref: str
    draft: bool
    title: str
    body: str | None
    author: str
    author_type: str
    state: str
    maintainer_can_modify: bool
    diff: str
    files: list[dict[str, Any]]
    too_large: bool
    heads: list[str]
    """Every head SHA the pull request had, oldest first (reviews may name an older one)."""
    labels: list[str] = field(default_factory=list)
    """Lower-cased names of the repository labels on it, in the order added."""
    reviews: list[Review] = field(default_factory=list)
    comments: list[ReviewComment] = field(default_factory=list)
    """Every review comment on it (of reviews, of people, replies), oldest first."""
    resolved: dict[int, str | None] = field(default_factory=dict)
    """The first comments of the review threads someone resolved, each with the login of the
    user who resolved it: None for an App's bot user, which GitHub's `resolvedBy` (a `User`)
    cannot name."""


@dataclass(slots=True)
class _Token:
    installation_id: int
    repos: frozenset[str] | None
    """Lower-cased full names the token was narrowed to; None for all of the installation's."""
    person: str | None = None
    """The login of the person whose token it is (`ghp_…`); None for an installation's."""


def _error_body(status: int) -> dict[str, str]:
    """GitHub's error body for a status with no more to say."""
    phrase = HTTPStatus(status).phrase
    return {"message": phrase, "documentation_url": DOCS, "status": str(status)}


@dataclass(slots=True)
class _Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    body: Any
    headers: dict[str, str]
    remaining: int
    processed: bool
    every: int = 0
    """For a lasting fault: answer every `every`-th matching request (0: the next ones)."""
    methods: frozenset[str] = frozenset()
    """A lasting fault's methods (`method` is unused then)."""
    seen: int = 0
    accept: str | None = None
    """Only requests whose Accept header is this (a diff's media type, say); None: any."""


@dataclass(frozen=True, slots=True)
class _Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    body: Any = None
    """Sent as JSON unless `data` is set."""
    data: bytes | None = None
    """Sent as is (a diff, a raw file)."""
    content_type: str = "application/json; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)

    def payload(self) -> bytes:
        return self.data if self.data is not None else json.dumps(self.body).encode()

    def recorded(self) -> Any:
        if self.data is None:
            return self.body
        if self.content_type == "application/x-gzip":
            return f"<{len(self.data):,} bytes of gzip>"
        return self.data.decode(errors="replace")


class _HTTPError(Exception):
    """Ends a request with this answer (a validation failure, a missing resource)."""

    def __init__(self, answer: _Answer) -> None:
        super().__init__(answer.status)
        self.answer = answer


def _error(
    status: int, message: str, docs: str = DOCS, errors: list[Any] | None = None
) -> _HTTPError:
    body: dict[str, Any] = {"message": message}
    if errors is not None:
        body["errors"] = errors
    body["documentation_url"] = docs
    body["status"] = str(status)
    return _HTTPError(_Answer(status, body))


def _not_found(docs: str = DOCS) -> _HTTPError:
    return _error(404, "Not Found", docs)


def _invalid(message: str, docs: str) -> _HTTPError:
    """A body GitHub's schema validation refuses."""
    return _error(422, f"Invalid request.\n\n{message}", docs)


def _unprocessable(messages: Sequence[str], docs: str) -> _HTTPError:
    """GitHub's model-validation 422: one error string, the messages joined as a sentence."""
    return _error(422, "Unprocessable Entity", docs, [_sentence(messages)])


def _sentence(parts: Sequence[str]) -> str:
    # Rails' Array#to_sentence, which GitHub uses to join validation messages.
    if len(parts) <= 1:
        return "".join(parts)
    if len(parts) == 2:
        return f"{parts[0]} and {parts[1]}"
    return f"{', '.join(parts[:-1])}, and {parts[-1]}"


def _object_body(request: _Request, docs: str) -> dict[str, Any]:
    if not isinstance(request.body, dict):
        raise _invalid("The request body is not a JSON object.", docs)
    return request.body


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
