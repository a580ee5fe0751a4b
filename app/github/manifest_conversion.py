"""GitHub's side of registering an App from its manifest: trading the flow's code for the App.

`tiebreak setup` runs the flow (:mod:`app.setup.registration`); this is its one call to GitHub,
made without App credentials (the App does not exist yet) and without retries: a code works
once, and a failed attempt may have spent it.
"""

from githubkit import GitHub
from githubkit.cache import MemCacheStrategy
from githubkit.exception import GitHubException

from app.github.answers import read
from app.github.errors import GitHubError, translated
from app.github.models import RegisteredApp

CONVERSION_TIMEOUT = 30.0
"""Seconds the conversion may take."""


async def app_from_manifest(api_url: str, code: str) -> RegisteredApp | None:
    """The registered App (its id, slug, private key, webhook secret...) for the manifest
    flow's `code`, or None if GitHub's answer does not hold it; :class:`GitHubError` if
    GitHub refuses the code or cannot be reached."""
    async with GitHub(
        base_url=api_url.rstrip("/") + "/",
        timeout=CONVERSION_TIMEOUT,
        auto_retry=False,
        http_cache=False,
        cache_strategy=MemCacheStrategy(),
    ) as github:
        try:
            response = await github.rest.apps.async_create_from_manifest(code)
        except GitHubException as exc:
            raise translated(exc) from exc
    try:
        return read(RegisteredApp, response)
    except GitHubError:
        return None
