"""An installation's access token, asked for once however many calls need it at the same time.

githubkit's installation auth asks GitHub for a token whenever a request finds none in its
cache, so the calls a job sends at once as it starts (the pull request, its config at the base
and its organisation's, and its diff) each asked for one: four tokens where one does, for every
installation each time its token expires. :class:`InstallationTokens` asks GitHub once (`POST
/app/installations/{id}/access_tokens`, with the App's JWT), the calls that need the token
meanwhile waiting for that answer, and keeps the token until a minute before it expires, as
githubkit did; :class:`InstallationAuth` is the auth strategy githubkit runs for each request
of an installation's client, handing it that token (a request sent to another host than the
API's, none: httpx drops it from a redirect to one).

A token GitHub refuses (the installation removed or suspended, the App's key wrong) fails the
request that needed it as githubkit's own flow failed it: its `RequestFailed`, raised inside
the request's auth flow, which :mod:`app.github.errors` reads as a refused token. Each call
waiting for that answer gets the refusal; the next call asks again.

GitHub may answer a call that carried the token 401 (bad credentials). A token a few seconds
old may not have reached all of GitHub's servers yet (octokit's auth-app waits for it the same
way, octokit/auth-app.js#65): the call is sent again after 1 s, then after 2 s more, while the
token is younger than :data:`FRESH`. A token older than that was revoked, or expired early by
GitHub's clock (this machine's is behind it): it is let go, the call gets the 401, and the
next call a new token, rather than the same refusal until the token was due to expire.
"""

import asyncio
import functools
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx
from githubkit.auth.base import BaseAuthStrategy
from pydantic import BaseModel

from app.github.answers import read

if TYPE_CHECKING:
    from githubkit import GitHub, GitHubCore

MARGIN = 60.0
"""Seconds before its expiry that a token is no longer handed out (githubkit's own margin):
a call that takes it then still has a minute to be answered."""
FRESH = 5.0
"""Seconds after GitHub gives a token during which a 401 to a call that carried it is taken
for the token not having reached all of GitHub yet: the call is sent again."""

log = logging.getLogger(__name__)


class _Token(BaseModel):
    """GitHub's answer to a request for an installation's token: the fields read."""

    token: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class HeldToken:
    """An installation's token as this process holds it."""

    token: str
    given: float
    """When GitHub gave it, on :attr:`InstallationTokens.clock`."""
    until: float
    """When it is no longer handed out, on the same clock."""


class InstallationTokens:
    """The App's installation tokens in this process: one request to GitHub at a time for
    each installation's, kept until :data:`MARGIN` seconds before it expires."""

    def __init__(self, app: "GitHub[Any]", clock: Callable[[], float] = time.monotonic) -> None:
        self._app = app
        """The App's own client, which signs its requests with the App's JWT."""
        self.clock = clock
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        """How a call refused a fresh token waits before it is sent again."""
        self._held: dict[int, HeldToken] = {}
        self._asking: dict[int, asyncio.Future[HeldToken]] = {}

    async def token(self, installation_id: int) -> HeldToken:
        """The installation's token: the one held, or the answer to the one request for it
        under way (made now if none is)."""
        held = self._held.get(installation_id)
        if held is not None and self.clock() < held.until:
            return held
        asking = self._asking.get(installation_id)
        # A request made on another event loop (a process that ran one, then another) is
        # not awaited here.
        if asking is None or asking.get_loop() is not asyncio.get_running_loop():
            asking = asyncio.ensure_future(self._ask(installation_id))
            self._asking[installation_id] = asking
            asking.add_done_callback(functools.partial(self._answered, installation_id))
        # A caller cancelled leaves the request to the others waiting for it.
        return await asyncio.shield(asking)

    def age(self, held: HeldToken) -> float:
        """Seconds since GitHub gave `held`."""
        return self.clock() - held.given

    def let_go(self, installation_id: int, held: HeldToken) -> None:
        """No longer hand out `held` (GitHub refused it): the next call asks for a new token.
        A newer token held meanwhile stays."""
        if self._held.get(installation_id) is held:
            del self._held[installation_id]

    async def _ask(self, installation_id: int) -> HeldToken:
        response = await self._app.rest.apps.async_create_installation_access_token(installation_id)
        answer = read(_Token, response)
        left = (answer.expires_at - datetime.now(UTC)).total_seconds()
        now = self.clock()
        held = self._held[installation_id] = HeldToken(answer.token, now, now + left - MARGIN)
        return held

    def _answered(self, installation_id: int, asking: "asyncio.Future[HeldToken]") -> None:
        if self._asking.get(installation_id) is asking:
            del self._asking[installation_id]
        if not asking.cancelled():
            asking.exception()  # each caller waiting got it; none left waiting is no loss


@dataclass(frozen=True)
class InstallationAuth(BaseAuthStrategy):
    """githubkit's auth strategy for an installation's calls: each request carries the
    installation's token from `tokens`."""

    tokens: InstallationTokens
    installation_id: int

    def get_auth_flow(self, github: "GitHubCore[Any]") -> httpx.Auth:
        return _TokenFlow(self.tokens, self.installation_id, github.config.base_url)


class _TokenFlow(httpx.Auth):
    requires_request_body = True  # read before the first send: a request sent again is whole

    def __init__(self, tokens: InstallationTokens, installation_id: int, api: httpx.URL) -> None:
        self._tokens = tokens
        self._installation_id = installation_id
        self._api = (api.scheme, api.netloc)

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        # The token is GitHub's API's alone: a request sent elsewhere goes without it.
        if (request.url.scheme, request.url.netloc) != self._api:
            yield request
            return
        tokens, installation = self._tokens, self._installation_id
        held = await tokens.token(installation)
        request.headers["Authorization"] = f"token {held.token}"
        response = yield request
        wait = 1.0
        while response.status_code == 401 and tokens.age(held) + wait < FRESH:
            log.warning(
                "GitHub answered 401 to %s %s with installation %d's token, given %.1f s ago: "
                "sent again in %g s (a new token takes a few seconds to reach all of GitHub)",
                request.method, request.url.path, installation, tokens.age(held), wait,
            )  # fmt: skip
            await response.aread()  # httpx's connection is free again for the next send
            await tokens.sleep(wait)
            response = yield request
            wait += 1.0
        if response.status_code == 401:
            tokens.let_go(installation, held)

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        raise RuntimeError("an installation's calls are made on an event loop")
        yield request  # pragma: no cover - a generator, as httpx expects
