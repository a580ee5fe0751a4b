"""Who may write to a repository, as one job asks GitHub: once per person, however often the
job needs to know (a person who reacted 👎 to every finding of a review, or resolved all their
threads, is asked about once)."""

from app.events import PullKey
from app.github.installation_client import InstallationClient
from policies.permissions import WRITERS


class Permissions:
    """The collaborator permissions of people on the repository of `pull`, asked of GitHub
    the first time each is needed and remembered for the rest of the job."""

    def __init__(self, github: InstallationClient, pull: PullKey) -> None:
        self._github = github
        self._pull = pull
        self._known: dict[str, str] = {}

    async def of(self, login: str) -> str:
        """`admin`, `write`, `read` or `none`; a failure raises `GitHubError`, and is asked
        again the next time."""
        person = login.lower()
        if person not in self._known:
            self._known[person] = await self._github.permission(self._pull, login)
        return self._known[person]

    async def writes(self, login: str) -> bool:
        """Whether `login` may write to the repository (admin, maintain or write)."""
        return await self.of(login) in WRITERS
