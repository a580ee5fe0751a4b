"""`tiebreak review` of a pull request by its address, from the terminal: the address checked,
the token found, the pull request fetched and, with `--post`, the review posted, each
failure ended with one line that says what to do (:mod:`app.cli.exits`)."""

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from agents.errors import DiffError
from agents.review import Review
from app.cli.exits import fail
from app.cli.posting import post_review
from app.cli.pull_address import AddressError, PullAddress, parse_address, web_hosts
from app.cli.remote import RemotePull, Token, fetch, find_token, refusal
from app.github.errors import GitHubError
from app.github.personal import PersonalClient
from app.jobs.reading import ReadingLimits
from app.settings import get_settings
from policies.config import CONFIG_PATH

T = TypeVar("T")


@dataclass(frozen=True)
class PullRequest:
    """The pull request asked for, and the client that reaches it."""

    address: PullAddress
    token: Token | None
    github: PersonalClient


def connect(text: str, *, post: bool) -> PullRequest:
    """The pull request `text` names, with a client for it; exit 2 on a bad address, or
    with `--post` and no token."""
    try:
        settings = get_settings()
    except ValidationError as exc:
        fail(str(exc).splitlines()[0])
    api_url = str(settings.github_api_url)
    try:
        address = parse_address(text, api_url)
    except AddressError as exc:
        fail(str(exc))
    secret = settings.github_token.get_secret_value() if settings.github_token else None
    token = find_token(secret, web_hosts(api_url)[0].split(":")[0])
    if token is None:
        if post:
            fail("--post needs a GitHub token: set GITHUB_TOKEN (or run gh auth login)")
        click.echo(
            "tiebreak: no GitHub token (GITHUB_TOKEN is unset and gh gives none): reading "
            f"{address} anonymously, as GitHub allows for public repositories",
            err=True,
        )
    return PullRequest(address, token, PersonalClient(token.value if token else None, api_url))


def fetched(asked: PullRequest) -> RemotePull:
    """The pull request, its diff, config and files; exit 2 when GitHub refuses them."""
    try:
        remote = _run(asked, fetch(asked.github.reads, asked.address.key, ReadingLimits()))
    except DiffError as exc:
        fail(f"{asked.address}'s diff: {exc}")
    pull = remote.pull
    title = _printable(pull.title)
    click.echo(f"tiebreak: reviewing {asked.address} at {pull.head_sha[:7]}: {title}", err=True)
    for problem in remote.problems:
        name = problem.source or CONFIG_PATH
        where = f"{name}:{problem.line}" if problem.line else name
        where += "" if problem.source else " at the base"
        said = f"warning: {problem.message}" if problem.warning else problem.message
        click.echo(f"tiebreak: {where}: {_printable(said)}", err=True)
    return remote


def posted(asked: PullRequest, remote: RemotePull, review: Review) -> None:
    """Post `review` and say where it is; exit 2 when GitHub refuses it."""
    done, comments = _run(asked, post_review(asked.github, asked.address, remote, review))
    who = f" as {done.user.login}" if done.user and done.user.login else ""
    said = f"{comments} comment{'' if comments == 1 else 's'}"
    click.echo(
        f"tiebreak: posted a review of {asked.address}{who}, {said}: {done.html_url}", err=True
    )


def _printable(text: str) -> str:
    """`text`, written by whoever opened the pull request, without the control characters
    that would move the cursor or recolour the terminal."""
    return "".join(c if c.isprintable() else " " for c in text)


def _run(asked: PullRequest, call: Coroutine[Any, Any, T]) -> T:
    async def run() -> T:
        try:
            return await call
        finally:
            await asked.github.aclose()

    try:
        return asyncio.run(run())
    except GitHubError as exc:
        fail(refusal(exc, asked.address, asked.token))
