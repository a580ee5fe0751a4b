"""The typed base every API section of the fake GitHub builds on: `_Base` declares the state
they share, which `FakeGitHub.__init__` sets up, and holds the helpers they all use —
paging a list, finding a repository or a pull request, and the JSON of a repository and
of a user.
"""

import hashlib
import math
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.app_manifests import AppManifests
from tests.fakes.github_api.constants import (
    DEFAULT_PER_PAGE,
    EXAMPLE_REPOSITORY_IDS,
    MAX_PER_PAGE,
)
from tests.fakes.github_api.records import Recorded
from tests.fakes.github_api.state import _Answer, _Fault, _not_found, _Pull, _Repo, _Request, _Token
from tests.fakes.loopback import LoopbackFake


class _Base(LoopbackFake):
    """What every API section of `FakeGitHub` shares: the state `FakeGitHub.__init__` sets up
    (declared here so that each section's mixin is typed) and the helpers they all use."""

    app_id: str
    app_slug: str
    requests: list[Recorded]
    issued_tokens: list[str]
    app_jwts: list[str]
    _public_key: rsa.RSAPublicKey
    _lock: threading.RLock
    _ids: Iterator[int]
    _installations: dict[int, set[str]]
    _repos: dict[str, _Repo]
    _pulls: dict[tuple[str, int], _Pull]
    _tokens: dict[str, _Token]
    _faults: list[_Fault]
    _blobs: dict[str, bytes]
    _trees: dict[str, dict[str, tuple[str, str, str]]]
    _download_tokens: dict[str, tuple[str, str]]
    _archives: dict[tuple[str, str, str], bytes]
    _replaced_archives: dict[tuple[str, str], bytes]
    _manifests: AppManifests

    # -- pull requests ------------------------------------------------------------------------

    def _pull(self, repo: _Repo, number: str) -> _Pull:
        pull = self._pulls.get((repo.full_name.lower(), int(number)))
        if pull is None:
            raise _not_found()
        return pull

    def _poster(self, request: _Request) -> tuple[str, str]:
        """Who writes what the request posts, login and type: the person whose token it
        carries, else the App's bot user (an installation posts as the App)."""
        _, _, credential = request.headers.get("authorization", "").partition(" ")
        token = self._tokens.get(credential)
        if token is not None and token.person is not None:
            return token.person, "User"
        return f"{self.app_slug}[bot]", "Bot"

    # -- helpers ------------------------------------------------------------------------------

    def _page(self, request: _Request, items: list[Any]) -> _Answer:
        """One page of `items`, with GitHub's `Link` header (absolute URLs)."""
        per_page = _positive(request.query.get("per_page"), DEFAULT_PER_PAGE)
        per_page = min(per_page, MAX_PER_PAGE)
        page = _positive(request.query.get("page"), 1)
        last = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def url(n: int) -> str:
            query = {**request.query, "page": str(n)}
            return f"{self.base_url}{request.path}?{urlencode(query)}"

        links: list[str] = []
        if page > 1:
            links.append(f'<{url(min(page - 1, last))}>; rel="prev"')
        if page < last:
            links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
        if page > 1:
            links.append(f'<{url(1)}>; rel="first"')
        headers = {"link": ", ".join(links)} if links else {}
        return _Answer(200, chunk, headers=headers)

    def _repo_for_setup(self, full_name: str) -> _Repo:
        if full_name.count("/") != 1 or not all(full_name.split("/")):
            raise ValueError(f"a repository is named owner/name, not {full_name!r}")
        repo = self._repos.get(full_name.lower())
        if repo is None:
            repo_id = EXAMPLE_REPOSITORY_IDS.get(full_name.lower()) or next(self._ids)
            repo = _Repo(full_name=full_name, id=repo_id, default_branch="main")
            self._repos[full_name.lower()] = repo
        return repo

    def _existing_repo(self, full_name: str) -> _Repo:
        repo = self._repos.get(full_name.lower())
        if repo is None:
            raise KeyError(f"no repository {full_name} is set up")
        return repo

    def _existing_pull(self, full_name: str, number: int) -> _Pull:
        pull = self._pulls.get((full_name.lower(), number))
        if pull is None:
            raise KeyError(f"no pull request {full_name}#{number} is set up")
        return pull

    def _repo_json(self, full_name: str, *, fork: bool = False) -> dict[str, Any]:
        owner, name = full_name.split("/", 1)
        repo = self._repos.get(full_name.lower())
        repo_id = repo.id if repo else self._user_id(full_name)
        return {
            "id": repo_id,
            "node_id": f"R_{repo_id}",
            "name": name,
            "full_name": repo.full_name if repo else full_name,
            "owner": _user(owner, "Organization", self._user_id(owner)),
            "private": True,
            "fork": fork,
            "html_url": f"https://github.com/{full_name}",
            "url": f"{self.base_url}/repos/{full_name}",
            "default_branch": repo.default_branch if repo else "main",
        }

    @staticmethod
    def _user_id(login: str) -> int:
        # Stable per login, so the same user has the same id in every answer.
        return int(hashlib.sha1(login.encode()).hexdigest()[:8], 16)


def _positive(value: str | None, default: int) -> int:
    # GitHub ignores a page or per_page that is not a positive number.
    try:
        number = int(value) if value is not None else default
    except ValueError:
        return default
    return number if number > 0 else default


def _user(login: str, kind: str, user_id: int) -> dict[str, Any]:
    """A user as GitHub's `simple-user` schema has it (githubkit validates every field)."""
    api = f"https://api.github.com/users/{quote(login)}"
    return {
        "login": login,
        "id": user_id,
        "node_id": f"U_{user_id}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user_id}",
        "gravatar_id": "",
        "url": api,
        "html_url": f"https://github.com/{quote(login)}",
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": kind,
        "site_admin": False,
    }
