"""`FakeGitHub` itself, assembled from one mixin per API section and one each for its setup
and inspection methods: its constructor with the state and the routing table, and the
answering of a request (recorded, replaced by a fault, routed to its section's handler, a
handler that raises turned into a 500).
"""

import contextlib
import itertools
import json
import re
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.app_manifests import CONVERSION, NEW_APP, AppManifests, ManifestAnswer
from tests.fakes.github_api.actions import DOWNLOAD, _Actions
from tests.fakes.github_api.actions import ROUTES as ACTIONS_ROUTES
from tests.fakes.github_api.archives import CODELOAD, _Archives
from tests.fakes.github_api.auth import _Auth
from tests.fakes.github_api.checks import _CheckRuns
from tests.fakes.github_api.comments import _Comments
from tests.fakes.github_api.compare import _Compare
from tests.fakes.github_api.constants import _REPO, EMPTY_TREE, FORM_TYPE
from tests.fakes.github_api.contents import _Contents
from tests.fakes.github_api.git_data import _GitData
from tests.fakes.github_api.gitstore import _GitStore
from tests.fakes.github_api.graphql import _GraphQL
from tests.fakes.github_api.inspecting import _Inspecting
from tests.fakes.github_api.labels import _Labels
from tests.fakes.github_api.openapi import CODELOAD_DOWNLOAD, GRAPHQL, Route, description
from tests.fakes.github_api.pulls import _PullRequests
from tests.fakes.github_api.records import FakeGitHubError, Recorded
from tests.fakes.github_api.reviews import _Reviews
from tests.fakes.github_api.setting_up import _Setup
from tests.fakes.github_api.state import (
    _Answer,
    _error,
    _Fault,
    _HTTPError,
    _invalid,
    _not_found,
    _Pull,
    _Repo,
    _Request,
    _Token,
)
from tests.fakes.loopback import Response

HOLD_LIMIT = 30.0
"""Seconds a held request waits at most: a test that never lets it go fails, not hangs."""


@dataclass(frozen=True)
class _Hold:
    """Requests kept unanswered (:meth:`FakeGitHub.holding`)."""

    method: str
    pattern: re.Pattern[str]
    came: threading.Event
    released: threading.Event

    def holds(self, method: str, path: str) -> bool:
        return method == self.method and self.pattern.fullmatch(path) is not None


class FakeGitHub(
    _Setup,
    _Inspecting,
    _Compare,
    _PullRequests,
    _Labels,
    _Reviews,
    _Contents,
    _CheckRuns,
    _Comments,
    _GraphQL,
    _GitData,
    _Archives,
    _Auth,
    _Actions,
    _GitStore,
):
    """A fake of GitHub's REST API (and two GraphQL queries) on 127.0.0.1, for one GitHub App.

    Use it as a context manager; `base_url` (no trailing slash) is valid inside. Every
    request is recorded in `requests`.
    """

    def __init__(
        self,
        *,
        app_id: int | str,
        public_key_pem: str | bytes,
        app_slug: str = "tiebreak",
        strict: bool = True,
    ) -> None:
        super().__init__(strict=strict)
        self.app_id = str(app_id)
        pem = public_key_pem.encode() if isinstance(public_key_pem, str) else public_key_pem
        # Loaded now so that a wrong key fails the test's setup, not its first request.
        key = serialization.load_pem_public_key(pem)
        if not isinstance(key, rsa.RSAPublicKey):
            raise TypeError("a GitHub App's key is an RSA key")
        self._public_key = key
        self.app_slug = app_slug
        self.requests: list[Recorded] = []
        self.issued_tokens: list[str] = []
        """Every installation token issued, revoked or not."""
        self.app_jwts: list[str] = []
        """Every bearer token sent to exchange for an installation token, valid or not."""
        self.latency = 0.0
        """Seconds each request waits before it is answered, as GitHub's own time and the
        network's would make it (0: answered at once)."""
        self.bodies_checked = True
        """Whether a body GitHub's description refuses (answered 422 either way), or a field
        it ignores, is noted in `problems`. Off only where a test sends such bodies on
        purpose, to see the fake refuse them as GitHub does."""
        self._lock = threading.RLock()
        self._ids = itertools.count(1001)
        self._installations: dict[int, set[str]] = {}
        self._repos: dict[str, _Repo] = {}
        self._pulls: dict[tuple[str, int], _Pull] = {}
        self._tokens: dict[str, _Token] = {}
        self._faults: list[_Fault] = []
        self._holds: list[_Hold] = []
        # Content-addressed, so shared by every repository (as a fork network shares them).
        self._blobs: dict[str, bytes] = {}
        self._trees: dict[str, dict[str, tuple[str, str, str]]] = {EMPTY_TREE: {}}
        """Tree SHA → name → (mode, type, SHA), in git's order."""
        self._download_tokens: dict[str, tuple[str, str]] = {}
        """A download URL's token → the repository (lower-cased) and the ref it downloads."""
        self._archives: dict[tuple[str, str, str], bytes] = {}
        """Archives made, by tree, commit and top directory: each is made once."""
        self._replaced_archives: dict[tuple[str, str], bytes] = {}
        self._repo_routes: list[tuple[str, re.Pattern[str], str]] = [
            ("GET", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)"), "_get_pull"),
            ("GET", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)/files"), "_list_files"),
            ("GET", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)/reviews"), "_list_reviews"),
            ("POST", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)/reviews"), "_create_review"),
            ("GET", re.compile(rf"{_REPO}/contents(?:/(?P<path>.*))?"), "_get_contents"),
            ("POST", re.compile(rf"{_REPO}/check-runs"), "_create_check_run"),
            ("GET", re.compile(rf"{_REPO}/check-runs/(?P<id>\d+)"), "_get_check_run"),
            ("PATCH", re.compile(rf"{_REPO}/check-runs/(?P<id>\d+)"), "_update_check_run"),
            ("GET", re.compile(rf"{_REPO}/commits/(?P<ref>.+)/check-runs"), "_list_check_runs"),
            ("GET", re.compile(rf"{_REPO}/labels"), "_list_labels"),
            ("POST", re.compile(rf"{_REPO}/labels"), "_create_label"),
            ("GET", re.compile(rf"{_REPO}/labels/(?P<name>[^/]+)"), "_get_label"),
            ("GET", re.compile(rf"{_REPO}/issues/(?P<number>\d+)/labels"), "_list_issue_labels"),
            ("POST", re.compile(rf"{_REPO}/issues/(?P<number>\d+)/labels"), "_add_issue_labels"),
            (
                "DELETE",
                re.compile(rf"{_REPO}/issues/(?P<number>\d+)/labels/(?P<name>[^/]+)"),
                "_remove_issue_label",
            ),
            ("GET", re.compile(rf"{_REPO}/issues/(?P<number>\d+)/comments"), "_list_comments"),
            ("POST", re.compile(rf"{_REPO}/issues/(?P<number>\d+)/comments"), "_create_comment"),
            ("GET", re.compile(rf"{_REPO}/issues/comments/(?P<id>\d+)"), "_get_comment"),
            ("PATCH", re.compile(rf"{_REPO}/issues/comments/(?P<id>\d+)"), "_update_comment"),
            (
                "POST",
                re.compile(rf"{_REPO}/issues/comments/(?P<id>\d+)/reactions"),
                "_react_to_issue_comment",
            ),
            (
                "POST",
                re.compile(rf"{_REPO}/pulls/comments/(?P<id>\d+)/reactions"),
                "_react_to_review_comment",
            ),
            (
                "GET",
                re.compile(rf"{_REPO}/pulls/comments/(?P<id>\d+)/reactions"),
                "_list_review_comment_reactions",
            ),
            ("GET", re.compile(rf"{_REPO}/pulls/comments/(?P<id>\d+)"), "_get_review_comment"),
            (
                "PATCH",
                re.compile(rf"{_REPO}/pulls/comments/(?P<id>\d+)"),
                "_update_review_comment",
            ),
            (
                "GET",
                re.compile(rf"{_REPO}/pulls/(?P<number>\d+)/comments"),
                "_list_review_comments",
            ),
            (
                "POST",
                re.compile(rf"{_REPO}/pulls/(?P<number>\d+)/comments/(?P<id>\d+)/replies"),
                "_create_reply",
            ),
            (
                "GET",
                re.compile(rf"{_REPO}/collaborators/(?P<username>[^/]+)/permission"),
                "_get_permission",
            ),
            ("GET", re.compile(rf"{_REPO}/git/ref/(?P<ref>.+)"), "_get_ref"),
            ("PATCH", re.compile(rf"{_REPO}/git/refs/(?P<ref>.+)"), "_update_ref"),
            ("GET", re.compile(rf"{_REPO}/git/commits/(?P<sha>[^/]+)"), "_get_commit"),
            ("POST", re.compile(rf"{_REPO}/git/commits"), "_create_commit"),
            ("GET", re.compile(rf"{_REPO}/git/trees/(?P<sha>.+)"), "_get_tree"),
            ("POST", re.compile(rf"{_REPO}/git/trees"), "_create_tree"),
            ("GET", re.compile(rf"{_REPO}/git/blobs/(?P<sha>[^/]+)"), "_get_blob"),
            ("POST", re.compile(rf"{_REPO}/git/blobs"), "_create_blob"),
            ("GET", re.compile(rf"{_REPO}/compare/(?P<basehead>.+)"), "_compare"),
            ("GET", re.compile(rf"{_REPO}/tarball(?:/(?P<ref>.+))?"), "_get_tarball"),
        ]
        # What a token may reach in a fork through an open pull request from it.
        self._fork_routes = {
            "_get_contents",
            "_get_tarball",
            "_get_ref",
            "_update_ref",
            "_get_commit",
            "_create_commit",
            "_get_tree",
            "_create_tree",
            "_get_blob",
            "_create_blob",
        }
        self._repo_routes += ACTIONS_ROUTES
        self._setup_actions()
        self._token_route = re.compile(r"/app/installations/(?P<installation>\d+)/access_tokens")
        self._manifests = AppManifests(self.app_id, lambda: self.base_url)

    # -- lifecycle (the rest is LoopbackFake's) -----------------------------------------------

    description = "the fake GitHub API"
    thread_name = "fake-github-api"
    methods = ("GET", "POST", "PATCH", "PUT", "DELETE")

    def _problems_error(self) -> Exception:
        return FakeGitHubError("\n\n".join(self.problems))

    def stop(self) -> None:
        self._end_runs()
        super().stop()

    # -- answering ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def holding(self, method: str, path_regex: str) -> Iterator[threading.Event]:
        """Keep each request whose method is `method` and whose path (fully) matches
        unanswered until the block ends, as a slow GitHub would; the event is set as the first
        one comes."""
        hold = _Hold(method.upper(), re.compile(path_regex), threading.Event(), threading.Event())
        with self._lock:
            self._holds.append(hold)
        try:
            yield hold.came
        finally:
            with self._lock:
                self._holds.remove(hold)
            hold.released.set()

    def handle(self, method: str, target: str, headers: Mapping[str, str], raw: bytes) -> _Answer:
        """Answer one HTTP request (the server's threads call this)."""
        if self.latency:
            time.sleep(self.latency)
        split = urlsplit(target)
        with self._lock:
            holds = [h for h in self._holds if h.holds(method, split.path)]
        for hold in holds:
            hold.came.set()
            hold.released.wait(HOLD_LIMIT)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        body: Any = None
        malformed = False
        if raw and headers.get("content-type", "").startswith(FORM_TYPE):
            # A browser's form: only GitHub's web pages take one (the API wants JSON).
            body = dict(parse_qsl(raw.decode(errors="replace"), keep_blank_values=True))
            malformed = not AppManifests.takes_form(split.path)
        elif raw:
            try:
                body = json.loads(raw)
            except ValueError:
                malformed = True
        request = _Request(method, split.path, query, dict(headers), body)
        with self._lock:
            fault = self._take_fault(method, split.path, headers.get("accept"))
            if fault is None:
                answer = self._answer(request, malformed)
            else:
                if fault.processed:
                    self._answer(request, malformed)
                answer = _Answer(fault.status, fault.body, headers=fault.headers)
            if unknown := description().route_problem(method, split.path, answer.status):
                self.problems.append(unknown)
            self.requests.append(
                Recorded(
                    method=method,
                    path=split.path,
                    query=query,
                    headers=dict(headers),
                    body=body,
                    status=answer.status,
                    response=answer.recorded(),
                )
            )
            return answer

    def _respond(
        self, method: str, target: str, headers: Mapping[str, str], raw: bytes
    ) -> Response:
        answer = self.handle(method, target, headers, raw)
        headers_out = [("x-github-media-type", "github.v3; format=json"), *answer.headers.items()]
        return Response(answer.status, answer.content_type, answer.payload(), headers_out)

    def _take_fault(self, method: str, path: str, accept: str | None) -> _Fault | None:
        for fault in self._faults:
            if fault.accept is not None and fault.accept != accept:
                continue
            if fault.every:
                if method not in fault.methods or not fault.pattern.fullmatch(path):
                    continue
                fault.seen += 1
                if fault.seen % fault.every == 0:
                    return fault
                continue
            if fault.method == method and fault.pattern.fullmatch(path):
                fault.remaining -= 1
                if fault.remaining <= 0:
                    self._faults.remove(fault)
                return fault
        return None

    def _answer(self, request: _Request, malformed: bool) -> _Answer:
        try:
            if malformed:
                raise _error(400, "Problems parsing JSON")
            self._check_body(request)
            return self._route(request)
        except _HTTPError as exc:
            return exc.answer
        except Exception as exc:
            self.problems.append(
                f"{request.method} {request.path} raised "
                + "".join(traceback.format_exception(exc)).rstrip()
            )
            return _Answer(500, {"message": f"fake GitHub: {exc!r}", "status": "500"})

    def _check_body(self, request: _Request) -> None:
        """Refuse a body GitHub's description refuses (422, as GitHub answers), and note it
        and any field GitHub would ignore in `problems`, where they fail the test."""
        operation = description().find(request.method, request.path)
        form = request.headers.get("content-type", "").startswith(FORM_TYPE)
        if operation is None or form:
            return
        refused, ignored = description().body_problems(operation, request.body)
        for said, what in ((refused, "refuses"), (ignored, "ignores")):
            if said and self.bodies_checked:
                self.problems.append(
                    f"{request.method} {request.path} is {operation}: a body GitHub's "
                    f"description {what}, {'; '.join(said)}"
                )
        if refused:
            raise _invalid("; ".join(refused), operation.documentation)

    def routes(self) -> list[Route]:
        """Every route the fake answers, method and path pattern: those `_route` answers
        before its table (keep them in step with it), then the table."""
        return [
            ("POST", NEW_APP),
            ("POST", CONVERSION),
            ("POST", self._token_route),
            ("GET", re.compile(r"/app")),
            GRAPHQL,
            ("GET", DOWNLOAD),
            CODELOAD_DOWNLOAD,
            *((method, pattern) for method, pattern, _ in self._repo_routes),
        ]

    def _route(self, request: _Request) -> _Answer:
        flow = self._manifests.answer(request.method, request.path, request.query, request.body)
        if flow is not None:
            return _manifest_answer(flow)
        if request.method == "POST" and (match := self._token_route.fullmatch(request.path)):
            return self._create_token(request, int(match["installation"]))
        if request.method == "GET" and request.path == "/app":
            return self._get_app(request)
        if request.method == "POST" and request.path == "/graphql":
            return self._graphql(request)
        if (stored := self._storage_download(request)) is not None:
            return stored
        if request.method == "GET" and request.path.startswith(f"{CODELOAD}/"):
            return self._download(request)
        for method, pattern, name in self._repo_routes:
            match = pattern.fullmatch(request.path)
            if match is None or method != request.method:
                continue
            params = {k: unquote(v) for k, v in match.groupdict().items() if v is not None}
            repo = self._authorised_repo(
                request,
                f"{params['owner']}/{params['repo']}",
                via_pull=name in self._fork_routes,
            )
            handler: Callable[[_Request, _Repo, dict[str, str]], _Answer] = getattr(self, name)
            return handler(request, repo, params)
        raise _not_found()


def _manifest_answer(answer: ManifestAnswer) -> _Answer:
    if answer.html is None:
        return _Answer(answer.status, answer.body, headers=answer.headers)
    return _Answer(
        answer.status,
        data=answer.html.encode(),
        content_type="text/html; charset=utf-8",
        headers=answer.headers,
    )
