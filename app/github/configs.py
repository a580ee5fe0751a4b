"""A repository's config as the App reads it: its `.github/tiebreak.yml` at the pull
request's base, over its organisation's defaults, `tiebreak.yml` at the head of the default
branch of `OWNER/.github` (:func:`policies.config.layered_config`).

Both files are read at once, for each review, through the installation: one more request
beside the repository's own file, never a slower review, and a change to the defaults
applies to the next review. An installation that cannot see `OWNER/.github` (the App is not
installed on it) is answered 404 by GitHub, as for a missing file: the defaults are then not
read, silently. Any other failure to read them is a warning, the review going on with the
repository's own file.
"""

import asyncio

from app.events import PullKey
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from policies.config import (
    CONFIG_PATH,
    DEFAULTS_PATH,
    DEFAULTS_REPO,
    RepoConfig,
    layered_config,
)
from policies.config_file import ConfigProblem


def defaults_source(owner: str) -> str:
    """How the organisation's defaults file is named where its problems are shown."""
    return f"{owner}/{DEFAULTS_REPO}:{DEFAULTS_PATH}"


async def repository_config(
    github: InstallationClient, ref: PullKey, base_sha: str
) -> tuple[RepoConfig, list[ConfigProblem]]:
    """The config of `ref`'s repository at the base commit `base_sha`, over its
    organisation's defaults, and what is wrong with either."""
    own, (defaults, unread) = await asyncio.gather(
        github.file(ref, CONFIG_PATH, base_sha), _defaults(github, ref)
    )
    config, problems = layered_config(own, defaults, defaults_source(ref.owner))
    return config, [*problems, *unread]


async def _defaults(
    github: InstallationClient, ref: PullKey
) -> tuple[str | None, list[ConfigProblem]]:
    home = ref.model_copy(update={"repo": DEFAULTS_REPO})
    try:
        return await github.file(home, DEFAULTS_PATH, None), []
    except GitHubError as exc:
        said = f"the organisation's defaults could not be read ({exc}); they were left out"
        return None, [ConfigProblem(said, warning=True, source=defaults_source(ref.owner))]
