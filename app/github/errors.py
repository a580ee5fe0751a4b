"""What a call to GitHub raises when it fails: one :class:`GitHubError`, whatever went wrong.

Nothing outside :mod:`app.github` sees githubkit's exceptions: each call of the gateway turns
them into a :class:`GitHubError` that says what GitHub answered (its status, and its own
message) or that no answer came, so callers decide by `status` alone.
"""

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from githubkit.exception import GitHubException, GraphQLFailed, RequestError, RequestFailed
from pydantic import BaseModel, ValidationError

from policies.errors import TiebreakError

P = ParamSpec("P")
T = TypeVar("T")

MESSAGE_CHARS = 300
"""How much of GitHub's own error message is kept."""


class GitHubError(TiebreakError):
    """GitHub refused or failed a call Tiebreak needed."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status GitHub answered with; None when no answer came (a timeout, a
        connection that failed, credentials refused before anything was sent) or when the
        answer was GraphQL's `errors` (whose HTTP status says nothing)."""
        self.body = body
        """GitHub's answer, as text (its JSON `message` and `errors` are in there)."""


class BranchMoved(GitHubError):
    """A branch was not moved because it no longer points at the commit the new one is
    based on: someone pushed meanwhile (GitHub's 422 `Update is not a fast forward`)."""


class NotWritable(GitHubError):
    """GitHub refused the App a write to a repository (403 `Resource not accessible by
    integration`): a fork that does not allow maintainer edits, or an App without the
    Contents write permission."""


def translated(exc: GitHubException) -> GitHubError:
    """githubkit's exception as a :class:`GitHubError`."""
    if isinstance(exc, RequestFailed):
        request, response = exc.request, exc.response
        status = response.status_code
        said = _message(response.text)
        return GitHubError(
            f"GitHub answered {status} to {request.method} {request.url.path}"
            + (f": {said}" if said else ""),
            status=status,
            body=response.text,
        )
    if isinstance(exc, GraphQLFailed):
        said = "; ".join(error.message for error in exc.response.errors or ())
        return GitHubError(f"GitHub's GraphQL API answered errors: {said[:MESSAGE_CHARS]}")
    if isinstance(exc, RequestError):
        return GitHubError(f"GitHub could not be reached: {exc.exc or repr(exc.exc)}")
    return GitHubError(f"GitHub refused the App's credentials: {exc!r}")


def translating(
    call: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[P, Coroutine[Any, Any, T]]:
    """A gateway method whose githubkit exceptions leave it as :class:`GitHubError`."""

    @functools.wraps(call)
    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await call(*args, **kwargs)
        except GitHubException as exc:
            raise translated(exc) from exc

    return run


class _Refusal(BaseModel):
    """An error's JSON body, as far as it is read."""

    message: str | None = None


def _message(text: str) -> str:
    """GitHub's `message` from an error's JSON body, shortened; empty if there is none."""
    try:
        message = _Refusal.model_validate_json(text).message
    except ValidationError:
        return ""
    return message[:MESSAGE_CHARS] if message else ""
