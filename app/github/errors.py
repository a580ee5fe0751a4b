"""What a call to GitHub raises when it fails: one :class:`GitHubError`, whatever went wrong.

Nothing outside :mod:`app.github` sees githubkit's exceptions: each call of the gateway turns
them into a :class:`GitHubError` that says what GitHub answered (its status, and its own
message) or that no answer came, so callers decide by `status` alone.

An installation's call first needs its access token, which is asked for inside the call's
httpx auth flow (`POST /app/installations/{id}/access_tokens`, :mod:`app.github.tokens`).
GitHub's refusal there does not reach the caller as the `RequestFailed` it is: httpx's send
raises it from the flow, and githubkit wraps whatever the send raises as a `RequestError`, as
it does a connection that failed. Its `exc` (and `__cause__`) is the refusal, read here as
:class:`TokenRefused`: the installation removed or suspended, the App's key wrong, or this
machine's clock off GitHub's. "GitHub could not be reached" is said of a request that got no
answer, and of nothing else.
"""

import functools
import re
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from githubkit.exception import (
    GitHubException,
    GraphQLFailed,
    RateLimitExceeded,
    RequestError,
    RequestFailed,
)
from pydantic import BaseModel, ValidationError

from policies.errors import TiebreakError

P = ParamSpec("P")
T = TypeVar("T")

MESSAGE_CHARS = 300
"""How much of GitHub's own error message is kept."""

TOKEN_PATH = re.compile(r"/app/installations/(?P<installation>[0-9]+)/access_tokens$")
"""The end of the path of the request for an installation's access token (after the API's
base, which GitHub Enterprise Server puts under `/api/v3`)."""

TOKEN_REFUSALS = {
    401: "the App's private key is not the one GitHub has for it",
    403: "the App's installation is suspended",
    404: "the App is no longer installed (the installation was removed)",
}
"""What GitHub means by refusing an installation its access token, by status."""
CLOCK_OFF = (
    "this machine's clock is off GitHub's (ahead by more than a minute or behind by more than "
    "nine), and the App's JWT is dated by it"
)
"""What GitHub means by a 401 whose message names the App's JWT's times (:data:`CLOCK_CLAIMS`):
the key is right, the time it was signed at is not."""
CLOCK_CLAIMS = ("'Issued at' claim", "'Expiration time' claim")
"""What GitHub's message names for a JWT issued in its future, or expired by its clock."""


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


class TokenRefused(GitHubError):
    """GitHub answered the request for the installation's access token with an error, so the
    call that needed it was never sent (`status` is None). `answered` is GitHub's status to
    the token's request; `cause` what it means (:data:`TOKEN_REFUSALS`: the App's key wrong,
    its installation suspended or removed), or None for another failure (a 5xx, a rate
    limit), which may pass."""

    def __init__(self, message: str, *, answered: int, cause: str | None, body: str) -> None:
        super().__init__(message, body=body)
        self.answered = answered
        self.cause = cause


def translated(exc: GitHubException) -> GitHubError:
    """githubkit's exception as a :class:`GitHubError`."""
    if isinstance(exc, RequestFailed):
        return _answered(exc)
    if isinstance(exc, GraphQLFailed):
        said = "; ".join(error.message for error in exc.response.errors or ())
        return GitHubError(f"GitHub's GraphQL API answered errors: {said[:MESSAGE_CHARS]}")
    if isinstance(exc, RequestError):
        if isinstance(exc.exc, RequestFailed):
            # Raised inside githubkit's auth flow: the answer to the token's request.
            return _auth_flow_failure(exc.exc)
        return GitHubError(f"GitHub could not be reached: {exc.exc or repr(exc.exc)}")
    return GitHubError(f"GitHub refused the App's credentials: {exc!r}")


def _answered(exc: RequestFailed) -> GitHubError:
    request, response = exc.request, exc.response
    status = response.status_code
    said = _message(response.text)
    return GitHubError(
        f"GitHub answered {status} to {request.method} {request.url.path}"
        + (f": {said}" if said else ""),
        status=status,
        body=response.text,
    )


def _auth_flow_failure(exc: RequestFailed) -> GitHubError:
    request, response = exc.request, exc.response
    token = TOKEN_PATH.search(request.url.path)
    if request.method != "POST" or token is None:
        return _answered(exc)
    status = response.status_code
    limited = isinstance(exc, RateLimitExceeded)
    said = _message(response.text)
    cause = None if limited else TOKEN_REFUSALS.get(status)
    if status == 401 and any(claim in said for claim in CLOCK_CLAIMS):
        cause = CLOCK_OFF
    return TokenRefused(
        f"GitHub answered {status} to the request for installation {token['installation']}'s "
        f"access token (POST {request.url.path})"
        + (f": {said}" if said else "")
        + (f"; {cause}" if cause else ""),
        answered=status,
        cause=cause,
        body=response.text,
    )


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
