"""What the setup tests share: a browser's part of the manifest flow, over real HTTP.

`parse_form` reads the setup page's form as a browser would (attribute values unescaped); a
`Browser` keeps the cookies pages set and sends them back, and `Browser.submit` posts the form
to the fake GitHub as the browser does when its user presses the button.
"""

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from http.cookiejar import CookieJar
from typing import Any
from urllib.parse import urlencode

APP_ID = 4242
PUBLIC_URL = "https://tiebreak.example.com"
CONVERSIONS = r"/app-manifests/[^/]+/conversions"
"""The path of GitHub's manifest conversion, as `FakeGitHub.requests_to` matches it."""
EVENTS = [
    "pull_request",
    "issue_comment",
    "pull_request_review_comment",
    "check_run",
    "check_suite",
    "workflow_run",
]
PERMISSIONS = {
    "pull_requests": "write",
    "checks": "write",
    "issues": "write",
    "contents": "write",
    "metadata": "read",
    "actions": "write",
}


@dataclass(frozen=True, slots=True)
class Form:
    action: str
    method: str
    manifest_text: str

    @property
    def manifest(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.manifest_text)
        return parsed


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form":
            action, method = values.get("action", ""), values.get("method", "")
            self.forms.append({"action": action, "method": method, "fields": {}})
        elif tag == "input" and self.forms and "name" in values:
            self.forms[-1]["fields"][values["name"]] = values.get("value", "")


def parse_form(page: str) -> Form:
    """The page's one form."""
    parser = _FormParser()
    parser.feed(page)
    (form,) = parser.forms
    assert set(form["fields"]) == {"manifest"}, form["fields"]
    return Form(form["action"], form["method"].lower(), form["fields"]["manifest"])


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Browser:
    """One browser: the cookies pages set are sent back with its later requests, GitHub's
    redirect back to the setup page included. Two `Browser`s share nothing."""

    def __init__(self) -> None:
        self.cookies = CookieJar()

    def _open(
        self, request: urllib.request.Request, *, follow: bool = True
    ) -> tuple[int, str, dict[str, str]]:
        handlers: list[urllib.request.BaseHandler] = [
            urllib.request.HTTPCookieProcessor(self.cookies)
        ]
        if not follow:
            handlers.append(_NoRedirects())
        opener = urllib.request.build_opener(*handlers)
        try:
            with opener.open(request, timeout=30) as response:
                return int(response.status), response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as error:
            return int(error.code), error.read().decode(), dict(error.headers)

    def get(self, url: str, *, host: str | None = None) -> tuple[int, str, dict[str, str]]:
        """GET `url` (with `host` as its Host header: a name rebound to this address)."""
        request = urllib.request.Request(url)
        if host is not None:
            request.add_header("Host", host)
        return self._open(request)

    def submit(self, form: Form, *, follow: bool) -> tuple[int, str, dict[str, str]]:
        """Post the form as a browser does: its status, body and headers, after GitHub's
        redirect when `follow` (a browser's GET of the `Location`, with its cookies)."""
        data = urlencode({"manifest": form.manifest_text}).encode()
        request = urllib.request.Request(form.action, data=data, method="POST")
        request.add_header("content-type", "application/x-www-form-urlencoded")
        return self._open(request, follow=follow)
