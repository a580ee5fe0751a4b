"""A pull request's address, as `tiebreak review` is given it, checked before anything is
fetched: `https://github.com/OWNER/REPO/pull/N` (a page under it too, such as `/files`; the scheme
may be left out) or `OWNER/REPO#N`.

The address is untrusted input. Only the GitHub whose API the settings name is reached: its
web host is github.com for api.github.com, and the API's own host for GitHub Enterprise
Server (`https://HOST/api/v3`). Owner and repository names are checked by GitHub's rules and
the number is a positive integer, so nothing else ends up in a request's path.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from app.events import PullKey
from policies.errors import TiebreakError

PUBLIC_API_HOST = "api.github.com"
PUBLIC_WEB_HOSTS = ("github.com", "www.github.com")

OWNER = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}")
"""A user's or an organisation's login: letters, digits and single inner hyphens, up to 39."""
REPOSITORY = re.compile(r"[A-Za-z0-9_.-]{1,100}")
NUMBER = re.compile(r"[1-9][0-9]{0,9}")
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
BARE = re.compile(r"[A-Za-z0-9.-]+(?::[0-9]+)?/[^/\s]+/[^/\s]+/pull/[^\s]*")
"""An address copied without its scheme (`github.com/OWNER/REPO/pull/N`)."""
SHORT = re.compile(r"(?P<owner>[^/\s]+)/(?P<repo>[^/#\s]+)#(?P<number>[^/\s]+)")
PAGES = ("", "files", "commits", "checks", "changes")
"""What may follow `/pull/N` in an address copied from a browser."""


class AddressError(TiebreakError):
    """An address that is no pull request of the configured GitHub."""


@dataclass(frozen=True)
class PullAddress:
    owner: str
    repo: str
    number: int

    @property
    def key(self) -> PullKey:
        """As the GitHub gateway takes it; a person's calls have no installation (0)."""
        return PullKey(installation_id=0, owner=self.owner, repo=self.repo, number=self.number)

    def __str__(self) -> str:
        return f"{self.owner}/{self.repo}#{self.number}"


def is_address(text: str) -> bool:
    """Whether `text` is meant as a pull request's address rather than a diff's file."""
    return any(
        (SCHEME.match(text), SHORT.fullmatch(text), BARE.fullmatch(text)),
    )


def web_hosts(api_url: str) -> tuple[str, ...]:
    """The web hosts (`host[:port]`) whose pull requests the API at `api_url` serves."""
    parts = urlsplit(api_url)
    if (parts.hostname or "").lower() == PUBLIC_API_HOST:
        return PUBLIC_WEB_HOSTS
    return (parts.netloc.lower(),)


def parse_address(text: str, api_url: str) -> PullAddress:
    """The pull request `text` names on the GitHub of `api_url`; AddressError saying what is
    wrong otherwise."""
    if short := SHORT.fullmatch(text):
        return _checked(short["owner"], short["repo"], short["number"])
    if BARE.fullmatch(text):
        # As a browser reads it: on the scheme of the API, https but for a local server.
        text = f"{urlsplit(api_url).scheme}://{text}"
    parts = urlsplit(text)
    hosts = web_hosts(api_url)
    if parts.scheme not in ("https", urlsplit(api_url).scheme) or parts.username or parts.password:
        raise AddressError(f"{text!r} is not an https:// address of a pull request")
    if parts.netloc.lower() not in hosts:
        raise AddressError(
            f"{parts.netloc or text!r} is not {hosts[0]}: Tiebreak reviews pull requests of the "
            "GitHub GITHUB_API_URL names"
        )
    segments = parts.path.strip("/").split("/")
    if len(segments) < 4 or segments[2] != "pull" or "/".join(segments[4:]) not in PAGES:
        raise AddressError(f"{text!r} is not a pull request's address: …/OWNER/REPO/pull/N")
    return _checked(segments[0], segments[1], segments[3])


def _checked(owner: str, repo: str, number: str) -> PullAddress:
    if OWNER.fullmatch(owner) is None:
        raise AddressError(f"{owner!r} is not a GitHub user or organisation name")
    if REPOSITORY.fullmatch(repo) is None or repo in (".", ".."):
        raise AddressError(f"{repo!r} is not a GitHub repository name")
    if NUMBER.fullmatch(number) is None:
        raise AddressError(f"{number!r} is not a pull request number")
    return PullAddress(owner, repo, int(number))
