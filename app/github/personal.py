"""GitHub as a person reaches it, with their token: `tiebreak review` of a pull request by its
address, without an App.

The calls are the installation's (:class:`app.github.client.Installation`): the same
requests, read the same way, failing the same way (:class:`app.github.errors.GitHubError`),
only authenticated by a person's token instead of an App's — or by none, which GitHub allows
for public repositories within a small hourly allowance. What a person's token posts is
written by that person. The client sends through its own :class:`ConnectionPool`, retries as
the App's does (:class:`app.github.retry.CappedRetry`), and is made once per command.
"""

from typing import Any

from githubkit import GitHub, TokenAuthStrategy, UnauthAuthStrategy

from app.bodies import ReviewDraft
from app.events import PullKey
from app.github.answers import read
from app.github.client import TIMEOUT_SECONDS, Installation
from app.github.errors import translating
from app.github.identity import NoAuthorship
from app.github.models import PostedReview
from app.github.pool import ConnectionPool
from app.github.retry import CappedRetry, CountedFailures
from app.telemetry.metrics import Metrics


class PersonalClient:
    """A person's calls to GitHub, with `token` (None: anonymous) on the API at `base_url`."""

    def __init__(
        self,
        token: str | None,
        base_url: str,
        *,
        timeout: float = TIMEOUT_SECONDS,
        retry_backoff: float = 1.0,
    ) -> None:
        auth = TokenAuthStrategy(token) if token else UnauthAuthStrategy()
        self._pool = ConnectionPool()
        self._github: GitHub[Any] = GitHub(
            auth,
            base_url=base_url.rstrip("/") + "/",
            timeout=timeout,
            # Counted nowhere but retried as the App's calls are: a command has no metrics.
            auto_retry=CountedFailures(Metrics(), CappedRetry(backoff=retry_backoff)),
            http_cache=False,
            async_transport=self._pool,
        )
        # The installation's reads serve a person as they are; none of the person's posts is
        # read back as Tiebreak's own.
        self.reads = Installation(self._github, NoAuthorship(), retry_backoff=retry_backoff)
        """The pull request, its diff and files, as an installation reads them."""

    @translating
    async def post_review(self, ref: PullKey, review: ReviewDraft) -> PostedReview:
        """Post `review` on the pull request, written by the token's person."""
        response = await self._github.rest.pulls.async_create_review(
            ref.owner, ref.repo, ref.number, **review.model_dump(mode="json", exclude_none=True)
        )
        return read(PostedReview, response)

    async def aclose(self) -> None:
        await self._pool.close()
