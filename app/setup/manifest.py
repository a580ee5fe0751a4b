"""Tiebreak's GitHub App manifest, `app.yml`, and the manifest GitHub's registration form takes.

`app.yml` holds what every deployment shares: the App's name and description, its events and
permissions, and the webhook's path. :meth:`AppManifest.for_deployment` adds what one
deployment decides — where GitHub posts the webhooks, where it sends the browser back — as
GitHub's "register a GitHub App from a manifest" flow expects them.
"""

import ipaddress
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote, urlencode, urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.setup import DEFAULT_GITHUB_URL

MANIFEST_FILE = "app.yml"
"""At the top of the source tree; wheels carry it inside the `app` package."""

DEFAULT_API_URL = "https://api.github.com"

EventName = Annotated[str, StringConstraints(pattern=r"^[a-z_]+$")]


class HookAttributes(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    url: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9/_.-]*$")]
    """A path here: the deployment's public URL goes in front of it."""


class AppManifest(BaseModel):
    """What `app.yml` says."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Annotated[str, StringConstraints(min_length=1, max_length=34)]
    """GitHub allows 34 characters, and a name no other App has: GitHub's page lets its user
    change it before registering."""
    description: str = ""
    public: bool = False
    hook_attributes: HookAttributes
    default_events: Annotated[tuple[EventName, ...], Field(min_length=1)]
    default_permissions: dict[str, Literal["read", "write"]]

    @property
    def webhook_path(self) -> str:
        return self.hook_attributes.url

    def webhook_url(self, public_url: str) -> str:
        return public_url.rstrip("/") + self.webhook_path

    def for_deployment(self, public_url: str, redirect_url: str) -> dict[str, Any]:
        """The manifest GitHub's form takes, for a server at `public_url` (which GitHub must
        reach) and a setup page at `redirect_url` (which only the browser must reach)."""
        base = public_url.rstrip("/")
        return {
            "name": self.name,
            "url": base,
            "description": self.description,
            "public": self.public,
            "hook_attributes": {"url": self.webhook_url(base), "active": True},
            "redirect_url": redirect_url,
            "default_events": list(self.default_events),
            "default_permissions": dict(self.default_permissions),
        }


def load_manifest(text: str | None = None) -> AppManifest:
    """`app.yml` (or `text` in its format), validated."""
    return AppManifest.model_validate(yaml.safe_load(manifest_text() if text is None else text))


def manifest_text() -> str:
    packaged = resources.files("app").joinpath(MANIFEST_FILE)
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    return (Path(__file__).resolve().parents[2] / MANIFEST_FILE).read_text(encoding="utf-8")


def registration_url(github_url: str, state: str, org: str | None = None) -> str:
    """Where the manifest is posted: a personal account's or an organization's "new App"."""
    owner = f"/organizations/{quote(org, safe='')}" if org else ""
    return f"{github_url.rstrip('/')}{owner}/settings/apps/new?{urlencode({'state': state})}"


def app_settings_url(github_url: str, slug: str, org: str | None = None) -> str:
    """A registered App's settings page: its private keys and webhook secret are there."""
    owner = f"/organizations/{quote(org, safe='')}" if org else ""
    return f"{github_url.rstrip('/')}{owner}/settings/apps/{quote(slug, safe='')}"


def install_url(html_url: str) -> str:
    """Where the App's owner picks the repositories the App is installed on."""
    return f"{html_url.rstrip('/')}/installations/new"


def api_url_for(github_url: str) -> str:
    """The REST API of a GitHub: api.github.com for github.com, `/api/v3` on GitHub Enterprise
    Server."""
    base = github_url.rstrip("/")
    return DEFAULT_API_URL if base == DEFAULT_GITHUB_URL else f"{base}/api/v3"


def base_url(value: str) -> str:
    """`value` as the root of a deployment's URLs: http(s), a host, no query; no trailing
    slash. Raises ValueError saying what is wrong."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{value!r} is not an http:// or https:// URL")
    if parts.query or parts.fragment:
        raise ValueError(f"{value!r} has a query or a fragment")
    return parts.geturl().rstrip("/")


def is_private(url: str) -> bool:
    """Whether `url`'s host is one GitHub cannot reach: this machine, or a private network."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_loopback or address.is_link_local
