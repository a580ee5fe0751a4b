"""Who the App is on GitHub, so that Tiebreak trusts only what it posted itself.

Everything an App posts through an installation — reviews, comments, replies — is authored
by the App's bot user, `<slug>[bot]`, of type `Bot`. Tiebreak finds its own posts again by
hidden markers, and anyone can write a marker: a person, or another App (any contributor who
can run a workflow makes `github-actions[bot]` post). So a marker counts only on an item the
App's bot user wrote. The slug is read once per process, with the App's JWT (`GET /app`).
"""

from typing import Any, Protocol

from githubkit import GitHub

from app.github import answers
from app.github.answers import read
from app.github.errors import GitHubError, translating
from app.github.models import Author


class Authorship(Protocol):
    """Who wrote what Tiebreak reads back as its own."""

    async def authored(self, author: Author | None) -> bool:
        """Whether `author` (of a review or a comment) is Tiebreak itself."""
        ...

    async def named(self, login: str) -> bool:
        """Whether `login` is Tiebreak's own bot user's."""
        ...


class NoAuthorship:
    """A person's calls: nothing on a pull request is theirs as Tiebreak's, since only the
    App's bot user writes Tiebreak's posts."""

    async def authored(self, author: Author | None) -> bool:
        return False

    async def named(self, login: str) -> bool:
        return False


class AppIdentity:
    """The App's bot user, looked up on first use and kept for the process's life."""

    def __init__(self, github: GitHub[Any]) -> None:
        self._github = github
        """A client authenticated as the App itself (its JWT), as `GET /app` requires."""
        self._login: str | None = None

    @translating
    async def bot_login(self) -> str:
        """`<slug>[bot]`, the login that authors the App's posts."""
        if self._login is None:
            # Two jobs asking at once may both look it up: the answer is the same.
            response = await self._github.rest.apps.async_get_authenticated()
            slug = read(answers.App, response).slug
            if not slug:
                raise GitHubError("GitHub did not say the App's slug")
            self._login = f"{slug}[bot]"
        return self._login

    async def authored(self, author: Author | None) -> bool:
        """Whether `author` (of a review or a comment) is the App itself."""
        if author is None or author.type != "Bot":
            return False
        return await self.named(author.login)

    async def named(self, login: str) -> bool:
        """Whether `login` is `<slug>[bot]`: no person's login is, GitHub's having no
        brackets (a person may hold the slug itself as a login)."""
        # Logins are case-insensitive on GitHub.
        return login.lower() == (await self.bot_login()).lower()
