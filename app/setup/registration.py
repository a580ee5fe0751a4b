"""Registering Tiebreak's GitHub App with GitHub's manifest flow, for `tiebreak setup`.

1. :meth:`Registration.start` gives the page's form: `app.yml` completed for this deployment,
   to post to GitHub's "new GitHub App" page with a fresh random `state`, and the fresh random
   `browser` value the page sets as a cookie. The state is bound to that value: only the
   browser that was given the form can finish the flow with it.
2. GitHub registers the App once its owner confirms, and sends the browser back to the
   `redirect_url` with a temporary `code` and the `state`.
3. :meth:`Registration.finish` checks the `state` — one this flow handed out, unused, within
   the hour GitHub gives the whole flow — and that the redirect came back with the cookie
   the state is bound to, so a redirect that another site forged, or one carrying a state
   that someone else fetched from the page (another user of the machine, a page reaching it
   through DNS rebinding) and their own App's code, is refused; then it trades the code for
   the App's id, private key and webhook secret (`POST /app-manifests/{code}/conversions`,
   without authentication) and writes them to the dotenv file, readable by its owner only.

Nothing is written unless every step succeeded. A `state` is spent once its code is traded
or refused; while GitHub cannot be reached, or the file is in the way, it stays valid, so
reloading the page GitHub sent the browser to tries again. A redirect refused for its state
or its cookie spends nothing.
"""

import asyncio
import hmac
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.github.errors import GitHubError
from app.github.manifest_conversion import app_from_manifest
from app.github.models import RegisteredApp
from app.setup import env_file
from app.setup.manifest import (
    DEFAULT_API_URL,
    AppManifest,
    app_settings_url,
    install_url,
    registration_url,
)
from policies.errors import TiebreakError

FLOW_LIFETIME = 3600.0
"""GitHub wants the three steps done within an hour; a state older than that is refused."""


CODE = re.compile(r"[A-Za-z0-9_-]{1,200}")
"""GitHub's codes are hexadecimal; anything else never reaches the URL of the request."""


class SetupError(TiebreakError):
    """The registration could not finish; `status` is the HTTP status of the page saying so."""

    status = 500


class ForgedRedirect(SetupError):
    """A redirect with a state this flow did not hand out, or already spent, or expired."""

    status = 403


class OtherBrowser(ForgedRedirect):
    """A redirect with a state this flow handed out, but not with the cookie of the browser it
    was handed to: someone else's state, with (most likely) their own App's code."""


class CodeRefused(SetupError):
    """GitHub did not take the code: unknown, already used or older than an hour."""

    status = 400


class GitHubUnavailable(SetupError):
    """GitHub could not be reached, or failed; the same code may be tried again."""

    status = 502


class EnvFileExists(SetupError):
    """The dotenv file exists and may not be replaced."""

    status = 409


class NotWritten(SetupError):
    """GitHub registered the App, but its credentials could not be written."""


@dataclass(frozen=True, slots=True)
class SetupOptions:
    public_url: str
    """Where GitHub reaches Tiebreak: the webhooks go to this URL and the manifest's path."""
    github_url: str
    """GitHub's web pages: https://github.com, or a GitHub Enterprise Server."""
    api_url: str
    env_file: Path
    org: str | None = None
    """The organization that owns the App; None: the account of whoever registers it."""
    force: bool = False
    """Whether an existing dotenv file is replaced."""


@dataclass(frozen=True, slots=True)
class Form:
    """What the page posts to GitHub."""

    action: str
    manifest: dict[str, Any]
    browser: str
    """The cookie's value for the browser given this form: the redirect must carry it."""


@dataclass(frozen=True, slots=True)
class _Issued:
    """A state handed out: when, and to which browser (its cookie's value)."""

    at: float
    browser: str


class Registration:
    """One run of the flow: the states it handed out, and the App it registered."""

    def __init__(
        self,
        options: SetupOptions,
        manifest: AppManifest,
        redirect_url: str,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options
        self.manifest = manifest
        self.redirect_url = redirect_url
        self.clock = clock
        self.app: RegisteredApp | None = None
        """The App, once registered and written down."""
        self._states: dict[str, _Issued] = {}
        # One redirect at a time: a reload while GitHub answers must not trade the code twice.
        self._lock = asyncio.Lock()

    @property
    def webhook_url(self) -> str:
        return self.manifest.webhook_url(self.options.public_url)

    def start(self) -> Form:
        """A form with a fresh state, bound to a fresh browser value (never one a request
        offers: a value someone else chose or saw must not get a state)."""
        state = secrets.token_urlsafe(32)
        browser = secrets.token_urlsafe(32)
        self._states[state] = _Issued(self.clock(), browser)
        action = registration_url(self.options.github_url, state, self.options.org)
        manifest = self.manifest.for_deployment(self.options.public_url, self.redirect_url)
        return Form(action, manifest, browser)

    async def finish(self, code: str, state: str, browser: str) -> RegisteredApp:
        """Check the redirect (its state, and `browser`: the value of the cookie it came back
        with, "" for none), trade its code and write the App's credentials."""
        async with self._lock:
            issued = self._issued(state)
            if issued is None or self.clock() - self._states[issued].at > FLOW_LIFETIME:
                raise ForgedRedirect(
                    "this redirect does not carry a state this page handed out (or it was "
                    "used, or is more than an hour old): nothing was done. Start again from "
                    "the page this command printed."
                )
            # In constant time too: the cookie is what tells the browser given the state apart.
            if not hmac.compare_digest(self._states[issued].browser.encode(), browser.encode()):
                raise OtherBrowser(
                    "this redirect did not come back to the browser this page gave its state "
                    "to (its cookie is missing or different): someone else may have fetched "
                    "the page and sent their own App here, or the page was opened again since. "
                    "Nothing was done. Start again from the page this command printed, in "
                    "one browser tab."
                )
            if not CODE.fullmatch(code):
                del self._states[issued]
                raise CodeRefused("the redirect carries no valid code: start again")
            self._check_writable()
            try:
                app = await convert(self.options.api_url, code)
            except CodeRefused:
                del self._states[issued]
                raise
            del self._states[issued]
            self._write(app)
            self.app = app
            return app

    def _issued(self, state: str) -> str | None:
        # Compared in constant time: the state is what tells this page's redirect from a forgery.
        matches = [s for s in self._states if hmac.compare_digest(s.encode(), state.encode())]
        return matches[0] if matches else None

    def _check_writable(self) -> None:
        path = self.options.env_file
        if not self.options.force and (path.exists() or path.is_symlink()):
            raise EnvFileExists(
                f"{path} exists, and setup never overwrites it without --force. The code "
                "from GitHub is still good for an hour: move the file away and reload this "
                "page."
            )

    def _write(self, app: RegisteredApp) -> None:
        text = env_file.render(self.env_values(app), comments=self.env_comments(app))
        try:
            env_file.write_private(self.options.env_file, text, replace=self.options.force)
        except OSError as exc:
            settings = app_settings_url(self.options.github_url, app.slug, self.options.org)
            raise NotWritten(
                f"GitHub registered the App {app.name}, but {self.options.env_file} could not "
                f"be written ({exc.strerror or exc}). Generate a private key and set a webhook "
                f"secret in the App's settings, {settings}, and set them yourself."
            ) from exc

    def env_values(self, app: RegisteredApp) -> dict[str, str]:
        values = {
            "GITHUB_APP_ID": str(app.id),
            "GITHUB_WEBHOOK_SECRET": app.webhook_secret.get_secret_value(),
            "GITHUB_PRIVATE_KEY": app.pem.get_secret_value(),
            "PUBLIC_URL": self.options.public_url,
        }
        if self.options.api_url.rstrip("/") != DEFAULT_API_URL:
            values["GITHUB_API_URL"] = self.options.api_url
        return values

    def env_comments(self, app: RegisteredApp) -> list[str]:
        return [
            f"The GitHub App {app.name} ({app.html_url}), registered by `tiebreak setup`.",
            "Readable by its owner only: it holds the App's private key and webhook secret.",
            f"Install the App on repositories at {install_url(app.html_url)}",
            "Tiebreak's workers also need ANTHROPIC_API_KEY: add it below, or to the environment",
            "(a variable set in the environment wins over this file).",
            "",
        ]


async def convert(api_url: str, code: str) -> RegisteredApp:
    """Trade a manifest flow's code for the App's configuration."""
    try:
        app = await app_from_manifest(api_url, code)
    except GitHubError as exc:
        if exc.status is None:
            raise GitHubUnavailable(_unavailable(str(exc))) from exc
        if exc.status >= 500:
            raise GitHubUnavailable(_unavailable(f"GitHub answered {exc.status}")) from exc
        raise CodeRefused(
            f"GitHub refused the code ({exc.status}): a code works once, and only within an "
            "hour of GitHub's redirect. Nothing was written: start again from the page "
            "this command printed (and delete the App GitHub registered, if it did, in "
            "its settings)."
        ) from exc
    if app is None:
        raise SetupError(
            "GitHub's answer to the code lacks the App's credentials: nothing was written"
        )
    return app


def _unavailable(reason: str) -> str:
    return f"{reason}. Nothing was written; reload this page to try again."
