"""A pull request fetched by its address for `tiebreak review`: its diff, its changed files
at the head and its repository's config at the base, read as the App reads them.

The token is a person's: `GITHUB_TOKEN`, else what `gh auth token` prints when the GitHub CLI
is installed and logged in. With neither, the pull request is read anonymously, which GitHub
allows for public repositories only, within a small hourly allowance; posting needs a token.

The config comes from the base commit, as the App reads it: a pull request cannot write the
rules it is reviewed by. The changed files' texts are the context a checkout gives
(:mod:`app.cli.checkout`), read within the App's limits (:class:`ReadingLimits`).
"""

import shutil
import subprocess
from dataclasses import dataclass, field

from agents.diff import Diff
from agents.pull_changes import PullChanges
from app.cli.pull_address import PullAddress
from app.events import PullKey
from app.github.configs import repository_config
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.github.models import FileAt, PullRequest
from app.review.gathering import ReadingLimits, head_sources
from app.review.together import together
from policies.config import RepoConfig
from policies.config_file import ConfigProblem
from policies.guidance import Guidance

GH_TIMEOUT_SECONDS = 10.0
RATE_LIMITED = (403, 429)
"""GitHub's statuses for a rate limit reached, its message saying so."""


@dataclass(frozen=True)
class Token:
    """A person's GitHub token and where it came from."""

    value: str
    source: str


@dataclass(frozen=True)
class RemotePull:
    """A pull request as `tiebreak review` reviews it."""

    pull: PullRequest
    diff: Diff
    """The diff, less the files the config's `paths` leave out."""
    config: RepoConfig
    problems: list[ConfigProblem]
    sources: dict[str, str] | None
    """Each changed file's text at the head, as a checkout gives it; None with context off."""
    read: str
    """What was read, for the terminal."""
    guidance: Guidance = field(default_factory=Guidance)
    changes: PullChanges | None = None
    """The whole pull request's changed lines, the files `paths` leave out included: evidence
    of intent may be cited from any of them (`agents.pull_changes`)."""


def find_token(environment: str | None, host: str) -> Token | None:
    """`environment` (GITHUB_TOKEN's value), else `gh auth token` for `host`; None for none."""
    if environment:
        return Token(environment, "GITHUB_TOKEN")
    gh = shutil.which("gh")
    if gh is None:
        return None
    try:
        done = subprocess.run(
            [gh, "auth", "token", "--hostname", host],
            capture_output=True,
            text=True,
            timeout=GH_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = done.stdout.strip()
    return Token(value, "gh auth token") if done.returncode == 0 and value else None


def refusal(exc: GitHubError, address: PullAddress, token: Token | None) -> str:
    """What a failed call means to the person who asked, in a line."""
    if exc.status == 404:
        if token is None:
            return f"{address}: not found or no access: is GITHUB_TOKEN set?"
        return f"{address}: not found or no access with the token from {token.source}"
    if exc.status == 401:
        if token is None:
            return "GitHub wants a token: set GITHUB_TOKEN (or run gh auth login)"
        return f"GitHub refused the token from {token.source} (401): it is wrong or expired"
    if exc.status in RATE_LIMITED and "rate limit" in exc.body.lower():
        more = "" if token else "; a token (GITHUB_TOKEN) raises it"
        return f"GitHub's rate limit is reached, try again later{more}: {exc}"
    return str(exc)


async def fetch(github: InstallationClient, ref: PullKey, limits: ReadingLimits) -> RemotePull:
    """The pull request `ref`, its diff, its config at the base (over its organisation's
    defaults, as the App reads them) and its files at the head. Raises
    :class:`GitHubError`, and :class:`agents.errors.DiffError` for a diff that is not one."""
    pull = await github.pull_request(ref)
    text, (config, problems) = await together(
        github.diff(ref), repository_config(github, ref, pull.base_sha)
    )
    paths = config.path_filter()
    whole = Diff.parse(text, allow_empty=True)
    diff = Diff(tuple(f for f in whole.files if paths.reviews(f.path)))
    guidelines = [FileAt(pull.base_sha, path) for path in config.guidelines]
    heads, too_large = (
        await head_sources(github, ref, pull, diff, limits) if config.context.enabled else ([], [])
    )
    texts = await github.texts(ref, guidelines + heads)
    guidance = Guidance.of(
        config.instructions, config.path_instructions, {f.path: texts[f] for f in guidelines}
    )
    if not config.context.enabled:
        off = "context is off in the config"
        return RemotePull(pull, diff, config, problems, None, off, changes=whole.changes())
    kept, left_out = limits.within(
        ((f.path, found), len(found.encode())) for f in heads if (found := texts[f])
    )
    read = f"code around the changes read from {ref.full_name} at {pull.head_sha[:7]}"
    if unread := [f.path for f in too_large] + [path for path, _ in left_out]:
        read += f"; not read, too large: {', '.join(map(repr, unread))}"
    changes = whole.changes()
    return RemotePull(pull, diff, config, problems, dict(kept), read, guidance, changes)
