"""GitHub's side of the App manifest flow, served by the fake GitHub (`FakeGitHub`).

* `POST /settings/apps/new?state=…` (or `/organizations/{org}/settings/apps/new`) is GitHub's
  registration page, as it acts once its user has pressed "Create GitHub App": it takes a form
  with a `manifest` field (JSON), registers the App and answers 302 to the manifest's
  `redirect_url` with a `code`, and the `state` when one was given. A manifest GitHub would
  refuse — not JSON, no `url`, a webhook without `url`, no `redirect_url`, a name longer than 34
  characters, an access other than read or write — is answered 422, and nothing is registered.
* `POST /app-manifests/{code}/conversions` (the REST API, no authentication) trades the code
  for the App's configuration: `id`, `slug`, `pem`, `webhook_secret`, `client_id`,
  `client_secret`, `html_url` and the rest of GitHub's answer. A code works once and for an
  hour; an unknown, used or expired one is 404.

The App registered is the fake's own App: its id, and the private key the test gave
`FakeGitHub.allow_registration`, so the credentials a setup writes work against the same
fake. Not modelled: GitHub's sign-in, its confirmation page, and its checks that the events
fit the permissions.
"""

import copy
import html
import json
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

CODE_LIFETIME = 3600.0
"""GitHub wants the code traded within an hour of its redirect."""

MAX_NAME = 34

NEW_APP = re.compile(r"(?:/organizations/(?P<org>[^/]+))?/settings/apps/new")
CONVERSION = re.compile(r"/app-manifests/(?P<code>[^/]+)/conversions")

DOCS = "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest"


@dataclass(frozen=True, slots=True)
class ManifestAnswer:
    status: int
    body: Any = None
    """Sent as JSON, unless `html` is set."""
    html: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class RegisteredApp:
    """An App registered through the form, and what became of its code."""

    manifest: dict[str, Any]
    org: str | None
    state: str | None
    code: str
    slug: str
    registered_at: float
    conversions: int = 0
    """Successful trades of the code: at most one."""


class AppManifests:
    """The manifest flow's state; the fake calls it under its own lock."""

    def __init__(
        self,
        app_id: str,
        web_url: Callable[[], str],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app_id = app_id
        self.web_url = web_url
        self.clock = clock
        self.private_pem: str | None = None
        self.webhook_secret = secrets.token_hex(20)
        self.registered: list[RegisteredApp] = []

    def answer(
        self, method: str, path: str, query: Mapping[str, str], body: Any
    ) -> ManifestAnswer | None:
        """The answer to a request of the flow; None for any other request."""
        if method == "POST" and (match := NEW_APP.fullmatch(path)):
            return self._register(match["org"], query.get("state"), body)
        if method == "POST" and (match := CONVERSION.fullmatch(path)):
            return self._convert(match["code"])
        return None

    @staticmethod
    def takes_form(path: str) -> bool:
        """Whether `path` is a web page that takes a browser's form."""
        return NEW_APP.fullmatch(path) is not None

    def expire(self) -> None:
        """Make every code older than GitHub's hour."""
        for app in self.registered:
            app.registered_at -= CODE_LIFETIME + 1

    def _register(self, org: str | None, state: str | None, form: Any) -> ManifestAnswer:
        if self.private_pem is None:
            return _page(403, "This fake GitHub registers no App: call allow_registration.")
        raw = form.get("manifest") if isinstance(form, dict) else None
        try:
            manifest = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            manifest = None
        if not isinstance(manifest, dict):
            return _page(422, "Invalid GitHub App configuration: the manifest is not JSON.")
        problems = _problems(manifest)
        if problems:
            return _page(422, "Invalid GitHub App configuration: " + "; ".join(problems))
        code = secrets.token_hex(20)
        name = str(manifest.get("name") or f"app-{self.app_id}")
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        self.registered.append(
            RegisteredApp(copy.deepcopy(manifest), org, state, code, slug, self.clock())
        )
        params = {"code": code} | ({"state": state} if state is not None else {})
        separator = "&" if urlsplit(manifest["redirect_url"]).query else "?"
        location = f"{manifest['redirect_url']}{separator}{urlencode(params)}"
        return ManifestAnswer(302, html="", headers={"location": location})

    def _convert(self, code: str) -> ManifestAnswer:
        app = next((a for a in self.registered if secrets.compare_digest(a.code, code)), None)
        expired = app is not None and self.clock() - app.registered_at > CODE_LIFETIME
        if app is None or app.conversions or expired or self.private_pem is None:
            return ManifestAnswer(
                404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}
            )
        app.conversions += 1
        return ManifestAnswer(201, self._configuration(app, self.private_pem))

    def _configuration(self, app: RegisteredApp, pem: str) -> dict[str, Any]:
        web = self.web_url()
        owner = app.org or "octocat"
        manifest = app.manifest
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return {
            "id": int(self.app_id),
            "slug": app.slug,
            "node_id": f"A_{self.app_id}",
            "owner": {
                "login": owner,
                "id": 1,
                "type": "Organization" if app.org else "User",
                "html_url": f"{web}/{owner}",
            },
            "name": manifest.get("name") or app.slug,
            "description": manifest.get("description") or "",
            "external_url": manifest["url"],
            "html_url": f"{web}/apps/{app.slug}",
            "created_at": now,
            "updated_at": now,
            "permissions": {"metadata": "read", **manifest.get("default_permissions", {})},
            "events": list(manifest.get("default_events", [])),
            "client_id": "Iv1." + secrets.token_hex(8),
            "client_secret": secrets.token_hex(20),
            "webhook_secret": self.webhook_secret,
            "pem": pem,
        }


def _problems(manifest: dict[str, Any]) -> list[str]:
    problems = []
    if not _is_url(manifest.get("url")):
        problems.append("url is required")
    hook = manifest.get("hook_attributes")
    if hook is not None and not (isinstance(hook, dict) and _is_url(hook.get("url"))):
        problems.append("hook_attributes.url is required")
    if not _is_url(manifest.get("redirect_url")):
        problems.append("redirect_url is required by this fake")
    name = manifest.get("name")
    if name is not None and (not isinstance(name, str) or len(name) > MAX_NAME):
        problems.append(f"name is too long (maximum is {MAX_NAME} characters)")
    permissions = manifest.get("default_permissions", {})
    if not isinstance(permissions, dict) or any(
        access not in ("read", "write") for access in permissions.values()
    ):
        problems.append("default_permissions must map permissions to read or write")
    events = manifest.get("default_events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        problems.append("default_events must be a list of event names")
    return problems


def _is_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _page(status: int, message: str) -> ManifestAnswer:
    page = f"<!doctype html><title>GitHub</title><p>{html.escape(message)}</p>"
    return ManifestAnswer(status, html=page)
