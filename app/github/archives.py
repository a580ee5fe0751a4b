"""A repository's snapshot at a commit, as GitHub's tarball archive: its bytes streamed.

`GET /repos/{owner}/{repo}/tarball/{ref}` answers a redirect to a download URL on another
host (codeload), which githubkit's client follows (dropping the `Authorization` header, as
httpx does for another host: the URL carries its own token). The archive is streamed chunk by
chunk, never held whole: what is done with it (where it is written, how much of it is taken)
is the caller's. A failure while the bytes arrive (a timeout, a dropped connection) raises
:class:`app.github.errors.GitHubError`, as a refused request does.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from githubkit import GitHub
from githubkit.exception import GitHubException

from app.events import PullKey
from app.github.errors import GitHubError, translated


@asynccontextmanager
async def tarball(
    github: GitHub[Any], ref: PullKey, sha: str
) -> AsyncIterator[AsyncIterator[bytes]]:
    """The gzipped tar of commit `sha` of `ref`'s repository, as its chunks arrive; the
    connection is closed on leaving."""
    try:
        response = await github.rest.repos.async_download_tarball_archive(
            ref.owner, ref.repo, sha, stream=True
        )
    except GitHubException as exc:
        raise translated(exc) from exc
    raw = response.raw_response
    try:
        yield _chunks(raw)
    finally:
        await raw.aclose()


async def _chunks(raw: httpx.Response) -> AsyncIterator[bytes]:
    try:
        async for chunk in raw.aiter_bytes():
            yield chunk
    except httpx.HTTPError as exc:
        raise GitHubError(f"the archive's download from GitHub failed: {exc!r}") from exc
