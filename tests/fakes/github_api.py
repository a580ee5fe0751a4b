"""A local fake of the slice of GitHub's API that Tiebreak uses, for tests over real HTTP.

`FakeGitHub` is a real HTTP server on 127.0.0.1 (an ephemeral port, a background thread), so
a test drives the production client — githubkit with GitHub App authentication — over
loopback with no mocking library, and a `tiebreak serve` subprocess can use the same fake
through `GITHUB_API_URL`:

    key = new_app_key()
    with FakeGitHub(app_id=42, public_key_pem=key.public_pem) as fake:
        fake.add_installation(7, repos=["octo/app"])
        fake.add_pull("octo/app", 1, head_sha="h1", base_sha="b1", diff=DIFF)
        client = GitHub(AppAuthStrategy(42, key.private_pem), base_url=fake.base_url + "/", ...)
        ...
    fake.reviews("octo/app", 1)

State lives in memory: tests set it up (`add_installation`, `add_repo`, `set_file`,
`add_pull`, `add_label`, `add_issue_comment`, `add_review_comment`, `add_reaction`,
`resolve_thread`, `set_permission`) and inspect it (`requests`, `check_runs`, `reviews`,
`review_comments`, `issue_comments`, `reactions`, `thread_resolved`, `labels`,
`issue_labels`, `branch_files`, `branch_sha`, `commit`, `ref_updates`, and the credentials
that went by: `issued_tokens`, `app_jwts`).
Every change happens under one lock, since requests arrive on the server's threads.

Files live in a git-like store: blobs and trees are content-addressed with git's own SHA-1
(a blob's SHA is `git hash-object`'s), a commit has a tree and parents, and a branch names a
commit. A pull request's base and head are commits (with the SHAs the test chose), its head
branch points at its head (in the head repository: a fork's branches are the fork's), and a
push (`add_pull` again with a new head) adds a commit on top of the previous head, or with
`parent` on top of another commit (a force-push: the previous head stays in the store).
`set_file` edits a commit's snapshot in place: setup is not history. The contents API and the
Git Data API (refs, commits, trees, blobs) read and write this store.

Requests are checked the way GitHub checks them, so a test fails exactly where GitHub would
answer an error:

* `POST /app/installations/{id}/access_tokens` wants an RS256 JWT signed with the App's key,
  `iss` equal to the App id and `exp` at most ten minutes ahead; every other endpoint wants an
  installation token (`Authorization: token …`, `ghs_` and 36 letters and digits, as GitHub's
  look) that covers the repository. A missing or
  unknown token is 401; a valid token for another repository is 404, as GitHub hides
  repositories a token cannot see.
* Review comments are placed on the pull request's diff: a path not in it, a line that is not
  a line of the diff on its side (RIGHT: added and context lines of the new file; LEFT:
  removed and context lines of the old one), a range across hunks or not ascending fails the
  whole review with 422 and GitHub's own error strings. A COMMENT or REQUEST_CHANGES review
  needs a body or at least one comment; `commit_id` must be one of the pull request's heads;
  a pending review (no `event`) blocks any other review on the pull request.
* Check runs: `head_sha` must be a commit the fake knows (a pull request's head or base, a
  ref given to `set_file`); the status and conclusion vocabularies an App may use,
  `completed_at` only with a conclusion, at most 50 annotations and 3 actions a request,
  annotations of successive updates appended.
* Labels: names are case-insensitive; creating an existing one is 422 `already_exists`;
  adding a missing one to an issue creates it with color `ededed`; removing one the issue
  lacks is 404.
* Comments: an issue comment's body is at most 65,536 characters (GitHub's 422 `Body is too
  long`); the App may edit only its own issue comments (403 `Resource not accessible by
  integration` otherwise). A reply goes to a review comment of that pull request (404
  otherwise) and to the top of its thread: GitHub's docs say replies to replies are not
  supported, and the fake refuses one with 422. A reaction is one of GitHub's eight
  contents; the same reaction by the same user again answers 200 with the existing one
  instead of 201.
* Collaborator permission: `permission` is the role folded to admin/write/read/none
  (maintain → write, triage → read). A login never given to `set_permission` is 404, as
  GitHub answers for a user it does not know (for a known user without access it answers
  200 with `none`; give the fake that role to get that answer).
* Git Data: a ref update that is not a fast-forward (the new commit does not descend from
  the branch's commit) is 422 `Update is not a fast forward` unless `force` is true; every
  update of an existing branch a token may write is kept in `ref_updates` with its `force`
  flag, refused or not. A branch that moves
  moves the open pull requests whose head it is. A fork (a pull request's `head_repo` other
  than its repository) is readable through the base repository's token while the pull
  request is open, writable only if the pull request has `maintainer_can_modify` (and only
  its head branch), and otherwise 403 `Resource not accessible by integration`.
* Compare (`GET .../compare/BASE...HEAD`, two dots taken alike): each side a branch or a
  commit's full SHA (404 otherwise, and for unrelated histories); `status`, `ahead_by` and
  `behind_by` from the commit graph, the newest 250 commits oldest first, and `files` from
  the merge base to HEAD (at most 300, patches computed from the snapshots). Not modelled:
  paging, the diff media types, another repository's `owner:ref`.
* GraphQL (`POST /graphql`) answers one query, the review threads of a pull request
  (`repository.pullRequest.reviewThreads`: `pageInfo`, and per thread `isResolved` and its
  comments' `databaseId`s), recognised by `reviewThreads` in it rather than parsed. A thread
  is a review comment that is no reply, in the order made; `resolve_thread` resolves one.
  The token is checked as for REST (401 without a valid one); a repository it does not
  cover or a pull request the repository lacks is 200 with `NOT_FOUND` errors, as GitHub
  answers. Any other query is 200 with an error and is noted in `problems`.
* The diff media type answers 406 `too_large` above 300 files or 20,000 lines (or when the
  pull request was added with `too_large=True`).
* The App manifest flow (:mod:`tests.fakes.app_manifests`): GitHub's "new App" form, which
  registers this fake's App and redirects with a code, and `POST /app-manifests/{code}/
  conversions`, which trades a code once, within an hour, for the App's credentials. Call
  `allow_registration` with the App's private key first.

Error bodies follow GitHub's shape (`message`, `documentation_url`, `status`, and `errors`
where GitHub gives them). The review error strings are GitHub's, as observed in public bug
reports; the wording of the schema-style messages (`Invalid request. …`) is approximate, so
assert on the status and the key phrase, not on a whole message. Not modelled: GitHub's
implicit review around a lone reply (a reply gets a `pull_request_review_id`, but `reviews`
and the reviews API list only the reviews created through `POST .../reviews`), a diff
recomputed when a branch moves (the pull request keeps the diff the test gave), and token
permissions (every installation token may write).

A handler that raises answers 500 and notes the failure in `problems`; with `strict` (the
default) leaving the `with` block with problems noted raises :class:`FakeGitHubError`.
`fail_next` makes matching requests answer an error instead (a 502, a secondary rate limit
with `retry-after`), optionally after the request took effect.
"""

import base64
import binascii
import copy
import difflib
import hashlib
import itertools
import json
import math
import re
import secrets
import string
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from unidiff.patch import PatchedFile, PatchSet

from tests.fakes.app_manifests import AppManifests, ManifestAnswer, RegisteredApp
from tests.fakes.loopback import LoopbackFake, Response

DOCS = "https://docs.github.com/rest"

TOKEN_ALPHABET = string.ascii_letters + string.digits
TOKEN_EXPIRES_AT = "2099-01-01T00:00:00Z"
"""githubkit parses `expires_at` with `strptime("%Y-%m-%dT%H:%M:%SZ")`: exactly this format."""

JWT_MAX_LIFETIME = 600
"""GitHub refuses an App JWT whose `exp` is more than ten minutes ahead."""

CLOCK_SKEW = 60
"""Leeway for `iat`/`exp`, as GitHub allows for clock drift (and githubkit backdates `iat`)."""

FORM_TYPE = "application/x-www-form-urlencoded"

DIFF_MEDIA_TYPES = ("application/vnd.github.diff", "application/vnd.github.v3.diff")
RAW_MEDIA_TYPE = re.compile(r"application/vnd\.github(?:\.v3)?\.raw")

MAX_DIFF_FILES = 300
MAX_DIFF_LINES = 20_000
MAX_LISTED_FILES = 3000
"""`GET /pulls/{n}/files` lists at most this many files."""
MAX_COMPARED_COMMITS = 250
"""`GET /compare/{basehead}` without paging lists at most this many commits: the newest."""
MAX_COMPARED_FILES = 300
"""`GET /compare/{basehead}` lists at most this many files."""

DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100

MAX_INLINE_CONTENT = 1024 * 1024
"""Above this size the contents API answers `encoding: "none"` and empty `content`."""

CHECK_STATUSES = ("queued", "in_progress", "completed")
"""The statuses an App may set (`waiting`, `requested`, `pending` are for GitHub Actions)."""

CHECK_CONCLUSIONS = (
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "timed_out",
)
"""The conclusions an App may set (only GitHub sets `stale`)."""

ANNOTATION_LEVELS = ("notice", "warning", "failure")
MAX_ANNOTATIONS = 50
MAX_ACTIONS = 3
MAX_OUTPUT_TEXT = 65535
ACTION_LIMITS = {"label": 20, "description": 40, "identifier": 20}

REVIEW_STATES = {
    "APPROVE": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
    "COMMENT": "COMMENTED",
}

AUTO_LABEL_COLOR = "ededed"
"""The color GitHub gives a label it creates because an issue was labelled with it."""

MAX_LABEL_DESCRIPTION = 100

MAX_COMMENT_BODY = 65536
"""The longest issue or review comment body GitHub takes, in characters."""

REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")

MAX_GRAPHQL_PAGE = 100
"""The largest `first` a GraphQL connection takes."""

ROLE_PERMISSIONS = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}
"""A repository role → the `permission` GitHub reports for it (the older, coarser scale)."""

SETUP_DATE = "2026-01-01T00:00:00Z"
"""The author and committer date of the commits tests set up."""

FILE_MODE = "100644"
BLOB_MODES = ("100644", "100755", "120000")
TREE_MODE = "040000"
GITLINK_MODE = "160000"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""Git's SHA of the empty tree."""

# GitHub's review errors, word for word as public reports quote them.
PATH_INVALID = "Pull request review thread path is invalid"
LINE_NOT_IN_DIFF = "Pull request review thread line must be part of the diff"
HUNK_BLANK = "Pull request review thread diff hunk can't be blank"
START_NOT_IN_HUNK = (
    "Pull request review thread start line must be part of the same hunk as the line."
)
START_NOT_BEFORE_LINE = "Pull request review thread start line must precede the end line."
LINE_UNRESOLVED = "Line could not be resolved"
NEEDS_COMMENT = "You need to leave a comment indicating the requested changes."
ONE_PENDING_REVIEW = "User can only have one pending review per pull request"
COMMIT_NOT_IN_PULL = "The commitOID is not part of the pull request"
POSITION_INVALID = "Pull request review thread position is invalid"
"""Not seen in a report: the fake's wording for a `position` outside the file's diff."""

# Other errors GitHub answers, word for word as public reports quote them.
BODY_TOO_LONG = "Body is too long (maximum is 65536 characters)"
NOT_FAST_FORWARD = "Update is not a fast forward"
NOT_ACCESSIBLE = "Resource not accessible by integration"
REF_MISSING = "Reference does not exist"
OBJECT_MISSING = "Object does not exist"
"""The fake's wording for a ref update to a commit the repository lacks; GitHub was reported
to answer that with a bare 500 (github/rest-api-description#714), which would only make
clients retry."""
REPLY_TO_REPLY = "Replies to replies are not supported."
"""The docs' sentence; not seen as an error in a report: the fake's wording."""
GRAPHQL_UNSUPPORTED = "the fake GitHub answers only the reviewThreads query"
"""The fake's GraphQL error for any other query (which it also notes in `problems`)."""

_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"


# -- keys ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppKey:
    """A GitHub App's RSA key pair (PEM): the App signs with one, the fake checks with the other."""

    private_pem: str
    public_pem: str


def new_app_key() -> AppKey:
    """A fresh 2048-bit RSA key pair (about 50 ms: make one per test session)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return AppKey(private.decode(), public.decode())


# -- what tests inspect ----------------------------------------------------------------------


class FakeGitHubError(AssertionError):
    """A handler of the fake raised: the fake or the request has a bug no test may ignore."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """One request the fake received and what it answered."""

    method: str
    path: str
    """The path without the query, as sent (percent-encoding kept)."""
    query: dict[str, str]
    """The query parameters (the last value of a repeated one)."""
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The parsed JSON body, or None if there was none or it was not JSON."""
    status: int
    response: Any
    """The JSON answered, or the text for a diff or raw file."""


@dataclass(slots=True)
class Label:
    id: int
    name: str
    color: str
    description: str | None


@dataclass(slots=True)
class CheckRun:
    """A check run as the fake holds it; `history` has its JSON after every create or update."""

    id: int
    repo: str
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    external_id: str | None
    details_url: str | None
    started_at: str | None
    completed_at: str | None
    output: dict[str, Any]
    """`title`, `summary`, `text` as last set."""
    annotations: list[dict[str, Any]]
    """Every annotation sent, in order (updates append, as on GitHub)."""
    actions: list[dict[str, Any]]
    history: list[dict[str, Any]] = field(default_factory=list)
    """The run's JSON after each request that created or changed it, oldest first."""

    @property
    def states(self) -> list[tuple[str, str | None]]:
        """(status, conclusion) after each create or update."""
        return [(h["status"], h["conclusion"]) for h in self.history]


@dataclass(slots=True)
class ReviewComment:
    """A review comment: one of a review's, or one a person wrote, or a reply."""

    id: int
    path: str
    body: str
    line: int | None
    side: str | None
    start_line: int | None
    start_side: str | None
    position: int | None
    """The diff position it was placed by, if it was placed by one (not by `line`)."""
    author: str = ""
    author_type: str = "Bot"
    in_reply_to: int | None = None
    """The first comment of its thread, for a reply."""
    review_id: int | None = None
    commit_id: str = ""
    diff_hunk: str = ""
    """Its hunk of the file's patch, from the `@@` header down to its line."""
    created_at: str = ""


@dataclass(slots=True)
class Review:
    id: int
    number: int
    body: str
    event: str | None
    """The event asked for; None for a pending review."""
    state: str
    commit_id: str
    comments: list[ReviewComment]
    submitted_at: str | None


@dataclass(slots=True)
class IssueComment:
    """A comment in a pull request's conversation."""

    id: int
    number: int
    body: str
    author: str
    author_type: str
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class Commit:
    """A commit of the fake's git store, with the files of its tree."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    message: str
    author: dict[str, str]
    """`name`, `email`, `date`."""
    committer: dict[str, str]
    files: dict[str, str]
    """Path → text (bytes that are not UTF-8 decoded with replacement characters)."""


@dataclass(slots=True)
class RefUpdate:
    """One update of an existing branch the fake was asked for (`PATCH .../git/refs/heads/…`
    by a token that may write it), refused or not."""

    ref: str
    """`refs/heads/<branch>`."""
    before: str
    """The branch's commit when asked."""
    after: str
    force: bool
    """Whether the request asked to force the update (whatever came of it)."""
    accepted: bool = False


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a file's patch below its first hunk header."""

    position: int
    """GitHub's diff position: 1 is the line just below the first `@@` header."""
    hunk: int
    left: int | None
    """Its line in the old file (removed and context lines)."""
    right: int | None
    """Its line in the new file (added and context lines)."""


# -- internal state --------------------------------------------------------------------------


@dataclass(slots=True)
class _Commit:
    sha: str
    tree: str
    parents: list[str]
    message: str
    author: dict[str, str]
    committer: dict[str, str]
    placeholder: bool = False
    """Made by `set_file` for a branch no pull request has named yet; the first pull request
    that names the branch takes its files."""


@dataclass(slots=True)
class _Reaction:
    id: int
    content: str
    user: str
    user_type: str
    created_at: str


@dataclass(slots=True)
class _Repo:
    full_name: str
    id: int
    default_branch: str
    branches: dict[str, str] = field(default_factory=dict)
    """Branch name → commit SHA."""
    commits: dict[str, _Commit] = field(default_factory=dict)
    """The commits the repository has, by SHA. A fork and its parent share commit objects,
    so a snapshot edited through one is seen through the other."""
    labels: dict[str, Label] = field(default_factory=dict)
    """Lower-cased name → label (GitHub matches label names case-insensitively)."""
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    issue_comments: dict[int, IssueComment] = field(default_factory=dict)
    reactions: dict[int, list[_Reaction]] = field(default_factory=dict)
    """Comment id (issue or review comment: the fake's ids are unique) → its reactions."""
    permissions: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Lower-cased login → (login, role name)."""
    ref_updates: list[RefUpdate] = field(default_factory=list)


@dataclass(slots=True)
class _Pull:
    number: int
    id: int
    head_sha: str
    head_ref: str
    head_repo: str
    base_sha: str
    base_ref: str
    draft: bool
    title: str
    body: str | None
    author: str
    author_type: str
    state: str
    maintainer_can_modify: bool
    diff: str
    files: list[dict[str, Any]]
    too_large: bool
    heads: list[str]
    """Every head SHA the pull request had, oldest first (reviews may name an older one)."""
    labels: list[str] = field(default_factory=list)
    """Lower-cased names of the repository labels on it, in the order added."""
    reviews: list[Review] = field(default_factory=list)
    comments: list[ReviewComment] = field(default_factory=list)
    """Every review comment on it (of reviews, of people, replies), oldest first."""
    resolved: set[int] = field(default_factory=set)
    """The first comments of the review threads someone resolved."""


@dataclass(slots=True)
class _Token:
    installation_id: int
    repos: frozenset[str] | None
    """Lower-cased full names the token was narrowed to; None for all of the installation's."""


def _error_body(status: int) -> dict[str, str]:
    """GitHub's error body for a status with no more to say."""
    phrase = HTTPStatus(status).phrase
    return {"message": phrase, "documentation_url": DOCS, "status": str(status)}


@dataclass(slots=True)
class _Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    body: Any
    headers: dict[str, str]
    remaining: int
    processed: bool
    every: int = 0
    """For a lasting fault: answer every `every`-th matching request (0: the next ones)."""
    methods: frozenset[str] = frozenset()
    """A lasting fault's methods (`method` is unused then)."""
    seen: int = 0


@dataclass(frozen=True, slots=True)
class _Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    body: Any = None
    """Sent as JSON unless `data` is set."""
    data: bytes | None = None
    """Sent as is (a diff, a raw file)."""
    content_type: str = "application/json; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)

    def payload(self) -> bytes:
        return self.data if self.data is not None else json.dumps(self.body).encode()

    def recorded(self) -> Any:
        return self.body if self.data is None else self.data.decode(errors="replace")


class _HTTPError(Exception):
    """Ends a request with this answer (a validation failure, a missing resource)."""

    def __init__(self, answer: _Answer) -> None:
        super().__init__(answer.status)
        self.answer = answer


def _error(
    status: int, message: str, docs: str = DOCS, errors: list[Any] | None = None
) -> _HTTPError:
    body: dict[str, Any] = {"message": message}
    if errors is not None:
        body["errors"] = errors
    body["documentation_url"] = docs
    body["status"] = str(status)
    return _HTTPError(_Answer(status, body))


def _not_found(docs: str = DOCS) -> _HTTPError:
    return _error(404, "Not Found", docs)


def _invalid(message: str, docs: str) -> _HTTPError:
    """A body GitHub's schema validation refuses."""
    return _error(422, f"Invalid request.\n\n{message}", docs)


def _unprocessable(messages: Sequence[str], docs: str) -> _HTTPError:
    """GitHub's model-validation 422: one error string, the messages joined as a sentence."""
    return _error(422, "Unprocessable Entity", docs, [_sentence(messages)])


def _sentence(parts: Sequence[str]) -> str:
    # Rails' Array#to_sentence, which GitHub uses to join validation messages.
    if len(parts) <= 1:
        return "".join(parts)
    if len(parts) == 2:
        return f"{parts[0]} and {parts[1]}"
    return f"{', '.join(parts[:-1])}, and {parts[-1]}"


_CHECKS_DOCS = f"{DOCS}/checks/runs"
_REVIEWS_DOCS = f"{DOCS}/pulls/reviews#create-a-review-for-a-pull-request"
_LABELS_DOCS = f"{DOCS}/issues/labels"
_ISSUE_COMMENTS_DOCS = f"{DOCS}/issues/comments"
_REVIEW_COMMENTS_DOCS = f"{DOCS}/pulls/comments"
_REACTIONS_DOCS = f"{DOCS}/reactions/reactions"
_GIT_DOCS = f"{DOCS}/git"
_COMMITS_DOCS = f"{DOCS}/commits/commits"
_GRAPHQL_DOCS = "https://docs.github.com/graphql"

_SHA_LIKE = re.compile(r"[0-9a-f]{7,40}")


# -- the fake --------------------------------------------------------------------------------


class FakeGitHub(LoopbackFake):
    """A fake of GitHub's REST API (and one GraphQL query) on 127.0.0.1, for one GitHub App.

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
        self._lock = threading.RLock()
        self._ids = itertools.count(1001)
        self._installations: dict[int, set[str]] = {}
        self._repos: dict[str, _Repo] = {}
        self._pulls: dict[tuple[str, int], _Pull] = {}
        self._tokens: dict[str, _Token] = {}
        self._faults: list[_Fault] = []
        # Content-addressed, so shared by every repository (as a fork network shares them).
        self._blobs: dict[str, bytes] = {}
        self._trees: dict[str, dict[str, tuple[str, str, str]]] = {EMPTY_TREE: {}}
        """Tree SHA → name → (mode, type, SHA), in git's order."""
        self._repo_routes: list[tuple[str, re.Pattern[str], str]] = [
            ("GET", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)"), "_get_pull"),
            ("GET", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)/files"), "_list_files"),
            ("GET", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)/reviews"), "_list_reviews"),
            ("POST", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)/reviews"), "_create_review"),
            ("GET", re.compile(rf"{_REPO}/contents(?:/(?P<path>.*))?"), "_get_contents"),
            ("POST", re.compile(rf"{_REPO}/check-runs"), "_create_check_run"),
            ("GET", re.compile(rf"{_REPO}/check-runs/(?P<id>\d+)"), "_get_check_run"),
            ("PATCH", re.compile(rf"{_REPO}/check-runs/(?P<id>\d+)"), "_update_check_run"),
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
            ("GET", re.compile(rf"{_REPO}/pulls/comments/(?P<id>\d+)"), "_get_review_comment"),
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
            ("GET", re.compile(rf"{_REPO}/git/refs/(?P<ref>.+)"), "_get_refs"),
            ("PATCH", re.compile(rf"{_REPO}/git/refs/(?P<ref>.+)"), "_update_ref"),
            ("GET", re.compile(rf"{_REPO}/git/commits/(?P<sha>[^/]+)"), "_get_commit"),
            ("POST", re.compile(rf"{_REPO}/git/commits"), "_create_commit"),
            ("GET", re.compile(rf"{_REPO}/git/trees/(?P<sha>.+)"), "_get_tree"),
            ("POST", re.compile(rf"{_REPO}/git/trees"), "_create_tree"),
            ("GET", re.compile(rf"{_REPO}/git/blobs/(?P<sha>[^/]+)"), "_get_blob"),
            ("POST", re.compile(rf"{_REPO}/git/blobs"), "_create_blob"),
            ("GET", re.compile(rf"{_REPO}/compare/(?P<basehead>.+)"), "_compare"),
        ]
        # What a token may reach in a fork through an open pull request from it.
        self._fork_routes = {
            "_get_contents",
            "_get_ref",
            "_get_refs",
            "_update_ref",
            "_get_commit",
            "_create_commit",
            "_get_tree",
            "_create_tree",
            "_get_blob",
            "_create_blob",
        }
        self._token_route = re.compile(r"/app/installations/(?P<installation>\d+)/access_tokens")
        self._manifests = AppManifests(self.app_id, lambda: self.base_url)

    # -- lifecycle (the rest is LoopbackFake's) -----------------------------------------------

    description = "the fake GitHub API"
    thread_name = "fake-github-api"
    methods = ("GET", "POST", "PATCH", "PUT", "DELETE")

    def _problems_error(self) -> Exception:
        return FakeGitHubError("\n\n".join(self.problems))

    # -- setting up ---------------------------------------------------------------------------

    def add_repo(self, full_name: str, *, default_branch: str = "main") -> None:
        """Add a repository (or change its default branch). Other setup methods add a
        repository they name on first use, with default branch `main`."""
        with self._lock:
            self._repo_for_setup(full_name).default_branch = default_branch

    def add_installation(self, installation_id: int, *, repos: Iterable[str]) -> None:
        """Install the App on these repositories (replacing an installation with this id)."""
        with self._lock:
            names = {self._repo_for_setup(name).full_name.lower() for name in repos}
            self._installations[installation_id] = names

    def set_file(self, full_name: str, ref: str, path: str, text: str | bytes) -> None:
        """Put a file at `path` in the commit `ref` names: a branch or a commit SHA.

        The commit's snapshot is edited in place (its SHA stays), so a file set on a pull
        request's head branch is seen through its head SHA and the other way round. A ref the
        repository lacks is a new commit if it looks like a SHA (7 to 40 hex digits), else a
        new branch, whose files the first pull request naming that branch takes over.
        """
        with self._lock:
            repo = self._repo_for_setup(full_name)
            commit = self._setup_ref(repo, ref)
            content = text.encode() if isinstance(text, str) else text
            files = self._flatten(commit.tree)
            files[path.strip("/")] = (FILE_MODE, "blob", self._store_blob(content))
            commit.tree = self._write_tree(files)

    def add_pull(
        self,
        full_name: str,
        number: int,
        *,
        head_sha: str,
        base_sha: str,
        diff: str = "",
        files: Sequence[Mapping[str, Any]] | None = None,
        base_ref: str = "main",
        head_ref: str | None = None,
        head_repo: str | None = None,
        draft: bool = False,
        title: str = "A pull request",
        body: str | None = None,
        author: str = "octocat",
        author_type: str = "User",
        state: str = "open",
        maintainer_can_modify: bool = True,
        too_large: bool = False,
        base_files: Mapping[str, str | bytes] | None = None,
        head_files: Mapping[str, str | bytes] | None = None,
        parent: str | None = None,
    ) -> None:
        """Open a pull request, or move an existing one to a new head (a push).

        Its files come from `diff` (a unified diff, as `git diff` prints it) unless `files`
        lists them explicitly (dicts as `GET /pulls/{n}/files` answers them; `filename`
        required, `patch` optional); with `files` and no `diff`, the diff is built from the
        files' patches. `too_large` makes the diff media type answer 406, as GitHub does for
        a diff above 300 files or 20,000 lines (which also answers 406 by itself).
        Re-adding a number keeps its reviews, comments and labels and remembers the earlier
        heads.

        `base_files` and `head_files` are the whole snapshots (path → content) of the base and
        head commits; the fake does not check them against the diff, keep them consistent.
        Without them a new head has its parent's files (the base's, or on a push the previous
        head's). The head branch `head_ref` points at `head_sha` in `head_repo`: for a fork,
        the fork (added as a repository of the fake) holds the branch, and the base
        repository only knows the head commit (as GitHub keeps it under `refs/pull/N/head`).

        `parent` names the new head's parent instead: a commit the repository has, such as
        the base for a force-push of a rebased branch, so that the previous head is no
        longer an ancestor of the new one (compare answers `diverged`). The previous head
        stays in the store, as GitHub keeps it. A head the store already has keeps its
        parents.
        """
        with self._lock:
            repo = self._repo_for_setup(full_name)
            fork = self._repo_for_setup(head_repo) if head_repo else repo
            head_ref = head_ref or f"pull-{number}"
            key = (repo.full_name.lower(), number)
            old = self._pulls.get(key)
            self._place_base(repo, base_ref, base_sha, base_files, author)
            if parent is None:
                parent = old.head_sha if old else base_sha
            elif parent not in repo.commits:
                raise KeyError(f"{full_name} has no commit {parent}")
            self._place_head(repo, fork, head_ref, head_sha, parent, head_files, author)
            if files is None:
                entries = [self._entry(repo, head_sha, e) for e in _entries_from_diff(diff)]
            else:
                entries = [self._entry(repo, head_sha, dict(f)) for f in files]
                diff = diff or _diff_from_entries(entries)
            self._pulls[key] = _Pull(
                number=number,
                id=old.id if old else next(self._ids),
                head_sha=head_sha,
                head_ref=head_ref,
                head_repo=fork.full_name,
                base_sha=base_sha,
                base_ref=base_ref,
                draft=draft,
                title=title,
                body=body,
                author=author,
                author_type=author_type,
                state=state,
                maintainer_can_modify=maintainer_can_modify,
                diff=diff,
                files=entries,
                too_large=too_large,
                heads=[*(old.heads if old else []), head_sha],
                labels=old.labels if old else [],
                reviews=old.reviews if old else [],
                comments=old.comments if old else [],
                resolved=old.resolved if old else set(),
            )

    def add_issue_comment(
        self,
        full_name: str,
        number: int,
        body: str,
        *,
        author: str = "octocat",
        author_type: str = "User",
    ) -> int:
        """A comment someone wrote in the pull request's conversation; answers its id."""
        with self._lock:
            repo = self._existing_repo(full_name)
            pull = self._existing_pull(full_name, number)
            now = _now()
            comment = IssueComment(
                next(self._ids), pull.number, body, author, author_type, now, now
            )
            repo.issue_comments[comment.id] = comment
            return comment.id

    def add_review_comment(
        self,
        full_name: str,
        number: int,
        path: str,
        line: int,
        body: str,
        *,
        author: str = "octocat",
        author_type: str = "User",
        side: str = "RIGHT",
        in_reply_to: int | None = None,
    ) -> int:
        """A review comment someone wrote on a line of the diff; answers its id.

        With `in_reply_to` it is a reply in that comment's thread (given a reply, in the
        thread the reply is in), and `path` and `line` must be the thread's. A place that is
        not a line of the diff raises ValueError: GitHub would not have taken it either.
        """
        with self._lock:
            pull = self._existing_pull(full_name, number)
            if in_reply_to is not None:
                root = self._thread_root(pull, in_reply_to)
                if root is None:
                    raise KeyError(f"no review comment {in_reply_to} on {full_name}#{number}")
                if (root.path, root.line) != (path, line):
                    raise ValueError(
                        f"comment {root.id} is on {root.path}:{root.line}, not {path}:{line}"
                    )
                reply = self._reply(pull, root, body, author, author_type)
                return reply.id
            entry = next((f for f in pull.files if f["filename"] == path), None)
            placed = _find_line(_diff_lines(entry.get("patch", "")), side, line) if entry else None
            if entry is None or placed is None:
                raise ValueError(f"{path}:{line} ({side}) is not a line of {full_name}#{number}")
            comment = ReviewComment(
                id=next(self._ids),
                path=path,
                body=body,
                line=line,
                side=side,
                start_line=None,
                start_side=None,
                position=None,
                author=author,
                author_type=author_type,
                review_id=next(self._ids),
                commit_id=pull.head_sha,
                diff_hunk=_diff_hunk(entry.get("patch", ""), placed.position),
                created_at=_now(),
            )
            pull.comments.append(comment)
            return comment.id

    def add_reaction(
        self,
        full_name: str,
        comment_id: int,
        content: str,
        *,
        user: str = "octocat",
        user_type: str = "User",
    ) -> int:
        """A reaction someone made to an issue or review comment; answers its id.

        `content` is one of GitHub's eight (ValueError otherwise). The same reaction by the
        same user again is the one already made, as on GitHub.
        """
        if content not in REACTIONS:
            raise ValueError(f"{content!r} is not one of {list(REACTIONS)}")
        with self._lock:
            repo = self._existing_repo(full_name)
            review_comment = self._find_review_comment(repo, comment_id)
            if comment_id not in repo.issue_comments and review_comment is None:
                raise KeyError(f"no comment {comment_id} in {full_name}")
            reaction, _ = self._add_reaction(repo, comment_id, content, user, user_type)
            return reaction.id

    def resolve_thread(
        self, full_name: str, number: int, comment_id: int, *, resolved: bool = True
    ) -> None:
        """A person resolved the review thread of `comment_id` (or of the thread the reply
        `comment_id` is in); with `resolved=False`, unresolved it."""
        with self._lock:
            pull = self._existing_pull(full_name, number)
            root = self._thread_root(pull, comment_id)
            if root is None:
                raise KeyError(f"no review comment {comment_id} on {full_name}#{number}")
            if resolved:
                pull.resolved.add(root.id)
            else:
                pull.resolved.discard(root.id)

    def set_permission(self, full_name: str, login: str, role_name: str) -> None:
        """Give `login` a role on the repository: admin, maintain, write, triage, read, none."""
        if role_name not in ROLE_PERMISSIONS:
            raise ValueError(f"{role_name!r} is not one of {list(ROLE_PERMISSIONS)}")
        with self._lock:
            repo = self._repo_for_setup(full_name)
            repo.permissions[login.lower()] = (login, role_name)

    def add_label(
        self,
        full_name: str,
        name: str,
        *,
        color: str = AUTO_LABEL_COLOR,
        description: str | None = None,
    ) -> None:
        """A label the repository already has."""
        with self._lock:
            repo = self._repo_for_setup(full_name)
            repo.labels[name.lower()] = Label(next(self._ids), name, color, description)

    def allow_registration(self, private_pem: str, *, webhook_secret: str | None = None) -> None:
        """Let the manifest flow register this fake's App (see :mod:`tests.fakes.app_manifests`):
        the conversion answers its id, `private_pem` (the key whose public half the fake
        checks) and `webhook_secret` (a random one by default)."""
        with self._lock:
            self._manifests.private_pem = private_pem
            if webhook_secret is not None:
                self._manifests.webhook_secret = webhook_secret

    def expire_manifest_codes(self) -> None:
        """Age every manifest flow code past GitHub's hour."""
        with self._lock:
            self._manifests.expire()

    def registered_apps(self) -> list[RegisteredApp]:
        """Copies of the Apps the manifest flow registered, with their manifests."""
        with self._lock:
            return copy.deepcopy(self._manifests.registered)

    @property
    def registration_webhook_secret(self) -> str:
        return self._manifests.webhook_secret

    def issue_token(self, installation_id: int, *, repos: Iterable[str] | None = None) -> str:
        """An installation token without the JWT exchange (for a raw client or a subprocess)."""
        with self._lock:
            if installation_id not in self._installations:
                raise KeyError(f"installation {installation_id} is not set up")
            narrowed = None if repos is None else frozenset(r.lower() for r in repos)
            return self._new_token(installation_id, narrowed)

    def revoke_tokens(self) -> None:
        """Make every token issued so far invalid (401), as when tokens expire early."""
        with self._lock:
            self._tokens.clear()

    def fail_every(self, every: int, methods: Iterable[str], path_regex: str, status: int) -> None:
        """From now on, answer every `every`-th request whose method is one of `methods` and
        whose path matches with `status` (in GitHub's shape), unprocessed, as a flaky gateway
        would."""
        body = _error_body(status)
        with self._lock:
            self._faults.append(
                _Fault(
                    "",
                    re.compile(path_regex),
                    status,
                    body,
                    {},
                    remaining=0,
                    processed=False,
                    every=every,
                    methods=frozenset(m.upper() for m in methods),
                )
            )

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        times: int = 1,
        *,
        processed: bool = False,
    ) -> None:
        """Answer the next `times` requests whose method and path (without the query, as
        sent) match with this error instead, before authentication or validation.

        `body` defaults to GitHub's shape for the status. With `processed`, the request
        first takes effect as usual and only the answer is replaced: a write that succeeded
        although the client saw it fail. For a secondary rate limit give 403 (or 429) with
        `{"retry-after": "<seconds>"}`.
        """
        with self._lock:
            if body is None:
                body = _error_body(status)
            self._faults.append(
                _Fault(
                    method.upper(),
                    re.compile(path_regex),
                    status,
                    body,
                    dict(headers or {}),
                    times,
                    processed,
                )
            )

    # -- inspecting ---------------------------------------------------------------------------

    def requests_to(self, method: str, path_regex: str) -> list[Recorded]:
        """The recorded requests whose method and path (fully) match, in order."""
        pattern = re.compile(path_regex)
        with self._lock:
            return [
                r for r in self.requests if r.method == method.upper() and pattern.fullmatch(r.path)
            ]

    def check_runs(self, full_name: str) -> list[CheckRun]:
        """Copies of the repository's check runs, oldest first."""
        with self._lock:
            return copy.deepcopy(list(self._existing_repo(full_name).check_runs.values()))

    def reviews(self, full_name: str, number: int) -> list[Review]:
        """Copies of the reviews the pull request received, oldest first."""
        with self._lock:
            return copy.deepcopy(self._existing_pull(full_name, number).reviews)

    def labels(self, full_name: str) -> list[Label]:
        """Copies of the repository's labels."""
        with self._lock:
            return copy.deepcopy(list(self._existing_repo(full_name).labels.values()))

    def issue_labels(self, full_name: str, number: int) -> list[str]:
        """The names of the labels on the issue or pull request, in the order added."""
        with self._lock:
            repo = self._existing_repo(full_name)
            pull = self._existing_pull(full_name, number)
            return [repo.labels[key].name for key in pull.labels]

    def diff_lines(self, full_name: str, number: int, path: str) -> list[DiffLine]:
        """The lines of one file's patch as the fake places review comments on them."""
        with self._lock:
            pull = self._existing_pull(full_name, number)
            entry = next((f for f in pull.files if f["filename"] == path), None)
            if entry is None:
                raise KeyError(f"{path} is not in the diff of {full_name}#{number}")
            return _diff_lines(entry.get("patch", ""))

    def review_comments(self, full_name: str, number: int) -> list[ReviewComment]:
        """Copies of every review comment on the pull request (of reviews, of people,
        replies), oldest first."""
        with self._lock:
            return copy.deepcopy(self._existing_pull(full_name, number).comments)

    def issue_comments(self, full_name: str, number: int) -> list[IssueComment]:
        """Copies of the comments in the pull request's conversation, oldest first."""
        with self._lock:
            repo = self._existing_repo(full_name)
            pull = self._existing_pull(full_name, number)
            comments = [c for c in repo.issue_comments.values() if c.number == pull.number]
            return copy.deepcopy(comments)

    def reactions(self, full_name: str, comment_id: int) -> list[str]:
        """The contents of the reactions to an issue or review comment, in the order made."""
        with self._lock:
            repo = self._existing_repo(full_name)
            return [r.content for r in repo.reactions.get(comment_id, [])]

    def thread_resolved(self, full_name: str, number: int, comment_id: int) -> bool:
        """Whether the review thread of `comment_id` (its first comment or a reply) is
        resolved."""
        with self._lock:
            pull = self._existing_pull(full_name, number)
            root = self._thread_root(pull, comment_id)
            if root is None:
                raise KeyError(f"no review comment {comment_id} on {full_name}#{number}")
            return root.id in pull.resolved

    def branch_sha(self, full_name: str, branch: str) -> str:
        """The commit the branch points at."""
        with self._lock:
            repo = self._existing_repo(full_name)
            if branch not in repo.branches:
                raise KeyError(f"{full_name} has no branch {branch}")
            return repo.branches[branch]

    def branch_files(self, full_name: str, branch: str) -> dict[str, str]:
        """The files of the branch's commit: path → text."""
        with self._lock:
            return self.commit(full_name, self.branch_sha(full_name, branch)).files

    def commit(self, full_name: str, sha: str) -> Commit:
        """A commit of the repository, with its files."""
        with self._lock:
            repo = self._existing_repo(full_name)
            found = repo.commits.get(sha)
            if found is None:
                raise KeyError(f"{full_name} has no commit {sha}")
            files = {
                path: self._blobs[blob].decode(errors="replace")
                for path, (_, kind, blob) in self._flatten(found.tree).items()
                if kind == "blob"
            }
            return Commit(
                sha=found.sha,
                tree=found.tree,
                parents=tuple(found.parents),
                message=found.message,
                author=dict(found.author),
                committer=dict(found.committer),
                files=files,
            )

    def ref_updates(self, full_name: str) -> list[RefUpdate]:
        """Copies of the ref updates the repository was asked for, refused ones included."""
        with self._lock:
            return copy.deepcopy(self._existing_repo(full_name).ref_updates)

    # -- answering ----------------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: Mapping[str, str], raw: bytes) -> _Answer:
        """Answer one HTTP request (the server's threads call this)."""
        split = urlsplit(target)
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
            fault = self._take_fault(method, split.path)
            if fault is None:
                answer = self._answer(request, malformed)
            else:
                if fault.processed:
                    self._answer(request, malformed)
                answer = _Answer(fault.status, fault.body, headers=fault.headers)
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

    def _take_fault(self, method: str, path: str) -> _Fault | None:
        for fault in self._faults:
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
            return self._route(request)
        except _HTTPError as exc:
            return exc.answer
        except Exception as exc:
            self.problems.append(
                f"{request.method} {request.path} raised "
                + "".join(traceback.format_exception(exc)).rstrip()
            )
            return _Answer(500, {"message": f"fake GitHub: {exc!r}", "status": "500"})

    def _route(self, request: _Request) -> _Answer:
        flow = self._manifests.answer(request.method, request.path, request.query, request.body)
        if flow is not None:
            return _manifest_answer(flow)
        if request.method == "POST" and (match := self._token_route.fullmatch(request.path)):
            return self._create_token(request, int(match["installation"]))
        if request.method == "POST" and request.path == "/graphql":
            return self._graphql(request)
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

    # -- authentication -----------------------------------------------------------------------

    def _create_token(self, request: _Request, installation_id: int) -> _Answer:
        self._verify_jwt(request.headers.get("authorization", ""))
        installed = self._installations.get(installation_id)
        if installed is None:
            raise _not_found(f"{DOCS}/apps/apps#create-an-installation-access-token-for-an-app")
        body = request.body if isinstance(request.body, dict) else {}
        narrowed: set[str] | None = None
        if body.get("repositories") or body.get("repository_ids"):
            narrowed = set()
            for name in body.get("repositories") or []:
                matches = {r for r in installed if r.split("/", 1)[1] == str(name).lower()}
                if not matches:
                    raise _inaccessible()
                narrowed |= matches
            ids = {self._repos[r].id: r for r in installed}
            for repo_id in body.get("repository_ids") or []:
                if repo_id not in ids:
                    raise _inaccessible()
                narrowed.add(ids[repo_id])
        token = self._new_token(installation_id, None if narrowed is None else frozenset(narrowed))
        return _Answer(
            201,
            {
                "token": token,
                "expires_at": TOKEN_EXPIRES_AT,
                "permissions": body.get("permissions")
                or {"checks": "write", "contents": "read", "issues": "write", "metadata": "read"},
                "repository_selection": "selected",
            },
        )

    def _verify_jwt(self, authorization: str) -> None:
        scheme, _, token = authorization.partition(" ")
        if token:
            self.app_jwts.append(token)
        if scheme.lower() != "bearer" or not token:
            raise _error(401, "A JSON web token could not be decoded")
        try:
            claims = jwt.decode(
                token,
                self._public_key,
                algorithms=["RS256"],
                options={"require": ["iat", "exp", "iss"]},
                leeway=CLOCK_SKEW,
            )
        except jwt.ExpiredSignatureError as exc:
            raise _error(
                401,
                "'Expiration time' claim ('exp') must be a numeric value representing the "
                "future time at which the assertion expires",
            ) from exc
        except jwt.InvalidTokenError as exc:
            raise _error(401, "A JSON web token could not be decoded") from exc
        if claims["exp"] > time.time() + JWT_MAX_LIFETIME + CLOCK_SKEW:
            raise _error(401, "'Expiration time' claim ('exp') is too far in the future")
        if str(claims["iss"]) != self.app_id:
            raise _error(401, "A JSON web token could not be decoded: unknown issuer")

    def _new_token(self, installation_id: int, repos: frozenset[str] | None) -> str:
        token = "ghs_" + "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(36))
        self._tokens[token] = _Token(installation_id, repos)
        self.issued_tokens.append(token)
        return token

    def _authorised_repo(self, request: _Request, full_name: str, *, via_pull: bool) -> _Repo:
        """The repository, if the request's token may see it: a repository it covers or, with
        `via_pull`, a fork an open pull request into one of those comes from."""
        covered = self._covered(request)
        key = full_name.lower()
        repo = self._repos.get(key)
        if repo is not None and (key in covered or (via_pull and self._pulls_from(covered, key))):
            return repo
        # GitHub answers 404, not 403, for a repository the token cannot see.
        raise _not_found()

    def _covered(self, request: _Request) -> frozenset[str]:
        """The lower-cased names of the repositories the request's token covers."""
        authorization = request.headers.get("authorization", "")
        if not authorization:
            raise _error(401, "Requires authentication")
        scheme, _, credential = authorization.partition(" ")
        token = self._tokens.get(credential) if scheme.lower() in ("token", "bearer") else None
        if token is None:
            raise _error(401, "Bad credentials")
        if token.repos is not None:
            return token.repos
        return frozenset(self._installations.get(token.installation_id, ()))

    def _pulls_from(self, covered: frozenset[str], key: str) -> list[_Pull]:
        """The open pull requests into covered repositories whose head lives in fork `key`."""
        return [
            pull
            for (base, _), pull in self._pulls.items()
            if base in covered
            and base != key
            and pull.head_repo.lower() == key
            and pull.state == "open"
        ]

    def _check_writable(
        self, request: _Request, repo: _Repo, docs: str, branch: str | None = None
    ) -> None:
        """Refuse a write to a fork unless a pull request from it lets maintainers modify it
        (and, for a ref, unless the branch is that pull request's head)."""
        covered = self._covered(request)
        key = repo.full_name.lower()
        if key in covered:
            return
        for pull in self._pulls_from(covered, key):
            if pull.maintainer_can_modify and branch in (None, pull.head_ref):
                return
        raise _error(403, NOT_ACCESSIBLE, docs)

    # -- pull requests ------------------------------------------------------------------------

    def _pull(self, repo: _Repo, number: str) -> _Pull:
        pull = self._pulls.get((repo.full_name.lower(), int(number)))
        if pull is None:
            raise _not_found()
        return pull

    def _get_pull(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        accept = request.headers.get("accept", "")
        if any(media in accept for media in DIFF_MEDIA_TYPES):
            return self._diff_answer(pull)
        return _Answer(200, self._pull_json(repo, pull))

    def _diff_answer(self, pull: _Pull) -> _Answer:
        docs = f"{DOCS}/pulls/pulls#list-pull-requests-files"
        lines = pull.diff.count("\n")
        if pull.too_large or len(pull.files) > MAX_DIFF_FILES:
            reason = f"the maximum number of files ({MAX_DIFF_FILES})"
        elif lines > MAX_DIFF_LINES:
            reason = f"the maximum number of lines ({MAX_DIFF_LINES})"
        else:
            return _Answer(200, data=pull.diff.encode(), content_type="text/plain; charset=utf-8")
        raise _error(
            406,
            f"Sorry, the diff exceeded {reason}. Consider using 'List pull requests files' "
            "API or locally cloning the repository instead.",
            docs,
            [{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
        )

    def _pull_json(self, repo: _Repo, pull: _Pull) -> dict[str, Any]:
        base = self.base_url
        url = f"{base}/repos/{repo.full_name}/pulls/{pull.number}"
        html = f"https://github.com/{repo.full_name}/pull/{pull.number}"
        author = _user(pull.author, pull.author_type, self._user_id(pull.author))
        head_owner = pull.head_repo.split("/", 1)[0]
        return {
            "url": url,
            "id": pull.id,
            "node_id": f"PR_{pull.id}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": f"{base}/repos/{repo.full_name}/issues/{pull.number}",
            "number": pull.number,
            "state": pull.state,
            "locked": False,
            "title": pull.title,
            "user": author,
            "body": pull.body,
            "labels": [self._label_json(repo, repo.labels[key]) for key in pull.labels],
            "draft": pull.draft,
            "head": {
                "label": f"{head_owner}:{pull.head_ref}",
                "ref": pull.head_ref,
                "sha": pull.head_sha,
                "user": _user(head_owner, "User", self._user_id(head_owner)),
                "repo": self._repo_json(pull.head_repo, fork=pull.head_repo != repo.full_name),
            },
            "base": {
                "label": f"{repo.full_name.split('/', 1)[0]}:{pull.base_ref}",
                "ref": pull.base_ref,
                "sha": pull.base_sha,
                "user": self._repo_json(repo.full_name)["owner"],
                "repo": self._repo_json(repo.full_name),
            },
            "author_association": "CONTRIBUTOR",
            "merged": False,
            "mergeable": None,
            "maintainer_can_modify": pull.maintainer_can_modify,
            "commits": len(pull.heads),
            "additions": sum(f["additions"] for f in pull.files),
            "deletions": sum(f["deletions"] for f in pull.files),
            "changed_files": len(pull.files),
            "comments": sum(1 for c in repo.issue_comments.values() if c.number == pull.number),
            "review_comments": len(pull.comments),
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "closed_at": None,
            "merged_at": None,
        }

    def _list_files(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        # contents_url is built here: the port is unknown when a test adds the pull request.
        contents = f"{self.base_url}/repos/{repo.full_name}/contents"
        files = [
            {**f, "contents_url": f"{contents}/{quote(f['filename'])}?ref={pull.head_sha}"}
            for f in pull.files[:MAX_LISTED_FILES]
        ]
        return self._page(request, files)

    def _entry(self, repo: _Repo, head_sha: str, raw: dict[str, Any]) -> dict[str, Any]:
        """A `GET /pulls/{n}/files` item with the fields GitHub always sends filled in."""
        filename = raw.get("filename")
        if not isinstance(filename, str) or not filename:
            raise ValueError(f"a pull request file needs a filename: {raw!r}")
        status = raw.get("status", "modified")
        allowed = ("added", "removed", "modified", "renamed", "copied", "changed", "unchanged")
        if status not in allowed:
            raise ValueError(f"{filename}: status {status!r} is not one of {allowed}")
        patch = raw.get("patch")
        counted = _diff_lines(patch) if isinstance(patch, str) else []
        additions = raw.get("additions")
        if additions is None:
            additions = sum(1 for d in counted if d.left is None and d.right is not None)
        deletions = raw.get("deletions")
        if deletions is None:
            deletions = sum(1 for d in counted if d.right is None and d.left is not None)
        quoted = quote(filename)
        entry: dict[str, Any] = {
            "sha": raw.get("sha") or hashlib.sha1(f"{head_sha}:{filename}".encode()).hexdigest(),
            "filename": filename,
            "status": status,
            "additions": additions,
            "deletions": deletions,
            "changes": raw.get("changes", additions + deletions),
            "blob_url": f"https://github.com/{repo.full_name}/blob/{head_sha}/{quoted}",
            "raw_url": f"https://github.com/{repo.full_name}/raw/{head_sha}/{quoted}",
        }
        if isinstance(patch, str):
            entry["patch"] = patch
        if raw.get("previous_filename"):
            entry["previous_filename"] = raw["previous_filename"]
        return entry

    # -- reviews ------------------------------------------------------------------------------

    def _list_reviews(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        return self._page(request, [self._review_json(repo, pull, r) for r in pull.reviews])

    def _create_review(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        body = _object_body(request, _REVIEWS_DOCS)
        if any(r.state == "PENDING" for r in pull.reviews):
            raise _unprocessable([ONE_PENDING_REVIEW], _REVIEWS_DOCS)
        event = body.get("event")
        if event is not None and event not in REVIEW_STATES:
            raise _invalid(
                f"For 'properties/event', {json.dumps(event)} is not one of "
                f"{json.dumps(list(REVIEW_STATES))}.",
                _REVIEWS_DOCS,
            )
        text = body.get("body", "")
        if not isinstance(text, str):
            raise _invalid(
                f"For 'properties/body', {json.dumps(text)} is not a string.", _REVIEWS_DOCS
            )
        commit_id = body.get("commit_id") or pull.head_sha
        if commit_id not in pull.heads:
            raise _unprocessable([COMMIT_NOT_IN_PULL], _REVIEWS_DOCS)
        raw_comments = body.get("comments") or []
        if not isinstance(raw_comments, list):
            raise _invalid("For 'properties/comments', it is not an array.", _REVIEWS_DOCS)
        # A verdict needs something said: a body, or at least one inline comment.
        if event in ("COMMENT", "REQUEST_CHANGES") and not text.strip() and not raw_comments:
            raise _unprocessable([NEEDS_COMMENT], _REVIEWS_DOCS)
        files = {f["filename"]: f for f in pull.files}
        # GitHub refuses the whole review when any one comment cannot be placed.
        comments = [self._review_comment(files, c) for c in raw_comments]
        review = Review(
            id=next(self._ids),
            number=pull.number,
            body=text,
            event=event,
            state=REVIEW_STATES[event] if event else "PENDING",
            commit_id=commit_id,
            comments=comments,
            submitted_at=_now() if event else None,
        )
        for comment in comments:
            comment.author = f"{self.app_slug}[bot]"
            comment.review_id = review.id
            comment.commit_id = commit_id
            comment.created_at = _now()
        pull.reviews.append(review)
        # The same objects: a review's comments are among the pull request's.
        pull.comments.extend(comments)
        return _Answer(200, self._review_json(repo, pull, review))

    def _review_comment(self, files: dict[str, dict[str, Any]], raw: Any) -> ReviewComment:
        if not isinstance(raw, dict):
            raise _invalid("For 'items', it is not an object.", _REVIEWS_DOCS)
        for key in ("path", "body"):
            if not isinstance(raw.get(key), str):
                raise _invalid(f'"{key}" wasn\'t supplied.', _REVIEWS_DOCS)
        path: str = raw["path"]
        entry = files.get(path)
        if entry is None:
            raise _unprocessable([PATH_INVALID, HUNK_BLANK], _REVIEWS_DOCS)
        lines = _diff_lines(entry.get("patch", ""))
        comment = ReviewComment(
            id=next(self._ids),
            path=path,
            body=raw["body"],
            line=None,
            side=None,
            start_line=None,
            start_side=None,
            position=None,
        )
        if raw.get("line") is None:
            position = raw.get("position")
            if position is None:
                raise _unprocessable([LINE_UNRESOLVED], _REVIEWS_DOCS)
            placed = next((d for d in lines if d.position == position), None)
            if placed is None:
                raise _unprocessable([POSITION_INVALID, HUNK_BLANK], _REVIEWS_DOCS)
            comment.position = position
            comment.side = "RIGHT" if placed.right is not None else "LEFT"
            comment.line = placed.right if placed.right is not None else placed.left
            comment.diff_hunk = _diff_hunk(entry.get("patch", ""), placed.position)
            return comment
        side = raw.get("side") or "RIGHT"
        start_side = raw.get("start_side") or side
        for key, value in (("side", side), ("start_side", start_side)):
            if value not in ("LEFT", "RIGHT"):
                raise _invalid(
                    f"For 'properties/{key}', {json.dumps(value)} is not one of "
                    '["LEFT", "RIGHT"].',
                    _REVIEWS_DOCS,
                )
        end = _find_line(lines, side, raw["line"])
        if end is None:
            raise _unprocessable([LINE_NOT_IN_DIFF, HUNK_BLANK], _REVIEWS_DOCS)
        comment.line, comment.side = raw["line"], side
        comment.diff_hunk = _diff_hunk(entry.get("patch", ""), end.position)
        if raw.get("start_line") is not None:
            start = _find_line(lines, start_side, raw["start_line"])
            if start is None or start.hunk != end.hunk:
                raise _unprocessable([START_NOT_IN_HUNK], _REVIEWS_DOCS)
            if start.position >= end.position:
                raise _unprocessable([START_NOT_BEFORE_LINE], _REVIEWS_DOCS)
            comment.start_line, comment.start_side = raw["start_line"], start_side
        return comment

    def _review_json(self, repo: _Repo, pull: _Pull, review: Review) -> dict[str, Any]:
        pull_url = f"{self.base_url}/repos/{repo.full_name}/pulls/{pull.number}"
        html = (
            f"https://github.com/{repo.full_name}/pull/{pull.number}#pullrequestreview-{review.id}"
        )
        bot = f"{self.app_slug}[bot]"
        answer: dict[str, Any] = {
            "id": review.id,
            "node_id": f"PRR_{review.id}",
            "user": _user(bot, "Bot", self._user_id(bot)),
            "body": review.body,
            "state": review.state,
            "html_url": html,
            "pull_request_url": pull_url,
            "_links": {"html": {"href": html}, "pull_request": {"href": pull_url}},
            "commit_id": review.commit_id,
            "author_association": "NONE",
        }
        if review.submitted_at is not None:
            answer["submitted_at"] = review.submitted_at
        return answer

    # -- contents -----------------------------------------------------------------------------

    def _get_contents(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{DOCS}/repos/contents#get-repository-content"
        ref = request.query.get("ref") or repo.default_branch
        path = params.get("path", "").strip("/")
        commit = self._resolve(repo, ref)
        if commit is None:
            if ref == repo.default_branch:
                raise _not_found(docs)  # an empty repository
            raise _error(404, f"No commit found for the ref {ref}", docs)
        tree = {
            name: self._blobs[sha]
            for name, (_, kind, sha) in self._flatten(commit.tree).items()
            if kind == "blob"
        }
        if path in tree:
            content = tree[path]
            if RAW_MEDIA_TYPE.search(request.headers.get("accept", "")):
                return _Answer(200, data=content, content_type="text/plain; charset=utf-8")
            return _Answer(200, self._content_json(repo, ref, path, content))
        prefix = f"{path}/" if path else ""
        children: dict[str, bytes | None] = {}
        for name, content in tree.items():
            if name.startswith(prefix):
                child, _, rest = name[len(prefix) :].partition("/")
                children[child] = None if rest else content
        if not children:
            raise _not_found(docs)
        return _Answer(
            200,
            [
                self._dir_entry_json(repo, ref, f"{prefix}{name}", content)
                for name, content in sorted(children.items())
            ],
        )

    def _content_json(self, repo: _Repo, ref: str, path: str, content: bytes) -> dict[str, Any]:
        answer = self._dir_entry_json(repo, ref, path, content)
        if len(content) > MAX_INLINE_CONTENT:
            answer.update(encoding="none", content="")
        else:
            answer.update(encoding="base64", content=_wrapped_base64(content))
        return answer

    def _dir_entry_json(
        self, repo: _Repo, ref: str, path: str, content: bytes | None
    ) -> dict[str, Any]:
        directory = content is None
        sha = _blob_sha(f"tree:{path}".encode() if content is None else content)
        api = f"{self.base_url}/repos/{repo.full_name}"
        url = f"{api}/contents/{quote(path)}?ref={quote(ref)}"
        git_url = f"{api}/git/{'trees' if directory else 'blobs'}/{sha}"
        html = f"https://github.com/{repo.full_name}/{'tree' if directory else 'blob'}/{ref}/{path}"
        raw = f"https://raw.githubusercontent.com/{repo.full_name}/{ref}/{path}"
        return {
            "type": "dir" if directory else "file",
            "size": 0 if content is None else len(content),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "url": url,
            "git_url": git_url,
            "html_url": html,
            "download_url": None if directory else raw,
            "_links": {"self": url, "git": git_url, "html": html},
        }

    # -- check runs ---------------------------------------------------------------------------

    def _check_run(self, repo: _Repo, run_id: str) -> CheckRun:
        run = repo.check_runs.get(int(run_id))
        if run is None:
            raise _not_found(f"{_CHECKS_DOCS}#get-a-check-run")
        return run

    def _get_check_run(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        return _Answer(200, self._check_run_json(repo, self._check_run(repo, params["id"])))

    def _create_check_run(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_CHECKS_DOCS}#create-a-check-run"
        body = _object_body(request, docs)
        for key in ("name", "head_sha"):
            if not isinstance(body.get(key), str) or not body[key]:
                raise _invalid(f'"{key}" wasn\'t supplied.', docs)
        if body["head_sha"] not in repo.commits:
            raise _error(422, f"No commit found for SHA: {body['head_sha']}", docs)
        run = CheckRun(
            id=next(self._ids),
            repo=repo.full_name,
            name=body["name"],
            head_sha=body["head_sha"],
            status="queued",
            conclusion=None,
            external_id=None,
            details_url=None,
            started_at=_now(),
            completed_at=None,
            output={"title": None, "summary": None, "text": None},
            annotations=[],
            actions=[],
        )
        self._apply_check_run(run, body, docs)
        repo.check_runs[run.id] = run
        return _Answer(201, self._record_check_run(repo, run))

    def _update_check_run(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_CHECKS_DOCS}#update-a-check-run"
        run = self._check_run(repo, params["id"])
        body = _object_body(request, docs)
        if "name" in body and (not isinstance(body["name"], str) or not body["name"]):
            raise _invalid("For 'properties/name', it must be a non-empty string.", docs)
        # Validated on a copy: a refused update changes nothing.
        updated = copy.deepcopy(run)
        if "name" in body:
            updated.name = body["name"]
        self._apply_check_run(updated, body, docs)
        repo.check_runs[run.id] = updated
        return _Answer(200, self._record_check_run(repo, updated))

    def _apply_check_run(self, run: CheckRun, body: dict[str, Any], docs: str) -> None:
        status, conclusion = body.get("status"), body.get("conclusion")
        if status is not None and status not in CHECK_STATUSES:
            raise _invalid(
                f"For 'properties/status', {json.dumps(status)} is not one of "
                f"{json.dumps(list(CHECK_STATUSES))}.",
                docs,
            )
        if conclusion is not None and conclusion not in CHECK_CONCLUSIONS:
            raise _invalid(
                f"For 'properties/conclusion', {json.dumps(conclusion)} is not one of "
                f"{json.dumps(list(CHECK_CONCLUSIONS))}.",
                docs,
            )
        if body.get("completed_at") is not None and conclusion is None:
            raise _invalid('"conclusion" wasn\'t supplied.', docs)
        if status == "completed" and conclusion is None and run.conclusion is None:
            raise _invalid('"conclusion" wasn\'t supplied.', docs)
        for key in ("details_url", "external_id", "started_at"):
            if key in body:
                setattr(run, key, body[key])
        if conclusion is not None:
            # A conclusion completes the run whatever status was sent.
            run.status, run.conclusion = "completed", conclusion
            run.completed_at = body.get("completed_at") or _now()
        elif status is not None:
            run.status = status
            if status != "completed":
                # Unverified on GitHub: a run sent back to queued/in_progress is taken as
                # reopened, so a stale conclusion cannot linger beside the new status.
                run.conclusion = run.completed_at = None
        if "output" in body:
            self._apply_output(run, body["output"], docs)
        if "actions" in body:
            run.actions = _actions(body["actions"], docs)

    def _apply_output(self, run: CheckRun, output: Any, docs: str) -> None:
        if not isinstance(output, dict):
            raise _invalid("For 'properties/output', it is not an object.", docs)
        for key in ("title", "summary"):
            if not isinstance(output.get(key), str):
                raise _invalid(f'"{key}" wasn\'t supplied.', docs)
        for key in ("summary", "text"):
            value = output.get(key)
            if isinstance(value, str) and len(value) > MAX_OUTPUT_TEXT:
                raise _invalid(
                    f"For 'properties/{key}', it is longer than {MAX_OUTPUT_TEXT} characters.",
                    docs,
                )
        annotations = output.get("annotations") or []
        if not isinstance(annotations, list):
            raise _invalid("For 'properties/annotations', it is not an array.", docs)
        if len(annotations) > MAX_ANNOTATIONS:
            raise _invalid(
                f"For 'properties/annotations', {len(annotations)} items is more than the "
                f"maximum of {MAX_ANNOTATIONS}.",
                docs,
            )
        checked = [_annotation(a, docs) for a in annotations]
        run.output = {"title": output["title"], "summary": output["summary"]}
        run.output["text"] = output.get("text")
        run.annotations.extend(checked)

    def _record_check_run(self, repo: _Repo, run: CheckRun) -> dict[str, Any]:
        answer = self._check_run_json(repo, run)
        run.history.append({**copy.deepcopy(answer), "annotations": copy.deepcopy(run.annotations)})
        return answer

    def _check_run_json(self, repo: _Repo, run: CheckRun) -> dict[str, Any]:
        url = f"{self.base_url}/repos/{repo.full_name}/check-runs/{run.id}"
        return {
            "id": run.id,
            "node_id": f"CR_{run.id}",
            "name": run.name,
            "head_sha": run.head_sha,
            "external_id": run.external_id,
            "url": url,
            "html_url": f"https://github.com/{repo.full_name}/runs/{run.id}",
            "details_url": run.details_url,
            "status": run.status,
            "conclusion": run.conclusion,
            "started_at": run.started_at,
            "completed_at": run.completed_at,
            "output": {
                **run.output,
                "annotations_count": len(run.annotations),
                "annotations_url": f"{url}/annotations",
            },
            "check_suite": None,
            "app": None,
            "pull_requests": [],
            "actions": copy.deepcopy(run.actions),
        }

    # -- labels -------------------------------------------------------------------------------

    def _label_json(self, repo: _Repo, label: Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "node_id": f"LA_{label.id}",
            "url": f"{self.base_url}/repos/{repo.full_name}/labels/{quote(label.name, safe='')}",
            "name": label.name,
            "color": label.color,
            "default": False,
            "description": label.description,
            # Required (if null) by the 2026-03-10 schema githubkit validates against.
            "archived_at": None,
            "archived_by": None,
        }

    def _list_labels(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        return self._page(request, [self._label_json(repo, x) for x in repo.labels.values()])

    def _get_label(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        label = repo.labels.get(params["name"].lower())
        if label is None:
            raise _not_found(f"{_LABELS_DOCS}#get-a-label")
        return _Answer(200, self._label_json(repo, label))

    def _create_label(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_LABELS_DOCS}#create-a-label"
        body = _object_body(request, docs)
        name, color = body.get("name"), body.get("color", AUTO_LABEL_COLOR)
        description = body.get("description")
        if not isinstance(name, str) or not name.strip():
            raise _invalid('"name" wasn\'t supplied.', docs)
        errors: list[dict[str, Any]] = []
        if not isinstance(color, str) or not re.fullmatch(r"[0-9a-fA-F]{6}", color):
            errors.append({"resource": "Label", "code": "invalid", "field": "color"})
        if description is not None and (
            not isinstance(description, str) or len(description) > MAX_LABEL_DESCRIPTION
        ):
            errors.append(
                {
                    "resource": "Label",
                    "code": "custom",
                    "field": "description",
                    "message": "description is too long (maximum is 100 characters)",
                }
            )
        if name.lower() in repo.labels:
            errors.append({"resource": "Label", "code": "already_exists", "field": "name"})
        if errors:
            raise _error(422, "Validation Failed", docs, errors)
        label = Label(next(self._ids), name, str(color).lower(), description)
        repo.labels[name.lower()] = label
        return _Answer(201, self._label_json(repo, label))

    def _list_issue_labels(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        return self._page(request, [self._label_json(repo, repo.labels[k]) for k in pull.labels])

    def _add_issue_labels(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_LABELS_DOCS}#add-labels-to-an-issue"
        pull = self._pull(repo, params["number"])
        body = request.body
        # GitHub takes {"labels": [...]}, a bare list, and names or {"name": ...} objects.
        raw = body.get("labels") if isinstance(body, dict) else body
        if not isinstance(raw, list):
            raise _invalid("For 'properties/labels', it is not an array.", docs)
        names: list[str] = []
        for item in raw:
            name = item.get("name") if isinstance(item, dict) else item
            if not isinstance(name, str) or not name.strip():
                raise _invalid(f"For 'items', {json.dumps(item)} is not a label name.", docs)
            names.append(name)
        for name in names:
            key = name.lower()
            if key not in repo.labels:
                # Undocumented but observed: a missing label is created, grey, undescribed.
                repo.labels[key] = Label(next(self._ids), name, AUTO_LABEL_COLOR, None)
            if key not in pull.labels:
                pull.labels.append(key)
        return _Answer(200, [self._label_json(repo, repo.labels[k]) for k in pull.labels])

    def _remove_issue_label(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        pull = self._pull(repo, params["number"])
        key = params["name"].lower()
        if key not in pull.labels:
            raise _error(
                404, "Label does not exist", f"{_LABELS_DOCS}#remove-a-label-from-an-issue"
            )
        pull.labels.remove(key)
        return _Answer(200, [self._label_json(repo, repo.labels[k]) for k in pull.labels])

    # -- issue comments -----------------------------------------------------------------------

    def _issue_comment(self, repo: _Repo, comment_id: str, docs: str) -> IssueComment:
        comment = repo.issue_comments.get(int(comment_id))
        if comment is None:
            raise _not_found(docs)
        return comment

    def _list_comments(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        comments = [c for c in repo.issue_comments.values() if c.number == pull.number]
        return self._page(request, [self._issue_comment_json(repo, c) for c in comments])

    def _create_comment(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_ISSUE_COMMENTS_DOCS}#create-an-issue-comment"
        pull = self._pull(repo, params["number"])
        text = _comment_body(request, "IssueComment", docs)
        now = _now()
        bot = f"{self.app_slug}[bot]"
        comment = IssueComment(next(self._ids), pull.number, text, bot, "Bot", now, now)
        repo.issue_comments[comment.id] = comment
        return _Answer(201, self._issue_comment_json(repo, comment))

    def _get_comment(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_ISSUE_COMMENTS_DOCS}#get-an-issue-comment"
        return _Answer(
            200, self._issue_comment_json(repo, self._issue_comment(repo, params["id"], docs))
        )

    def _update_comment(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_ISSUE_COMMENTS_DOCS}#update-an-issue-comment"
        comment = self._issue_comment(repo, params["id"], docs)
        if comment.author != f"{self.app_slug}[bot]":
            # The fake's rule, unverified on GitHub (where write access may edit any comment):
            # the App edits only its own comments, so a test notices one that edits a person's.
            raise _error(403, NOT_ACCESSIBLE, docs)
        comment.body = _comment_body(request, "IssueComment", docs)
        comment.updated_at = _now()
        return _Answer(200, self._issue_comment_json(repo, comment))

    def _issue_comment_json(self, repo: _Repo, comment: IssueComment) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo.full_name}"
        url = f"{api}/issues/comments/{comment.id}"
        return {
            "id": comment.id,
            "node_id": f"IC_{comment.id}",
            "url": url,
            "html_url": (
                f"https://github.com/{repo.full_name}/pull/{comment.number}"
                f"#issuecomment-{comment.id}"
            ),
            "body": comment.body,
            "user": _user(comment.author, comment.author_type, self._user_id(comment.author)),
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "issue_url": f"{api}/issues/{comment.number}",
            "author_association": self._association(repo, comment.author),
            "reactions": self._rollup(repo, comment.id, f"{url}/reactions"),
        }

    def _association(self, repo: _Repo, login: str) -> str:
        role = repo.permissions.get(login.lower(), (login, "none"))[1]
        return "NONE" if role == "none" else "COLLABORATOR"

    # -- reactions ----------------------------------------------------------------------------

    def _react_to_issue_comment(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        docs = f"{_REACTIONS_DOCS}#create-reaction-for-an-issue-comment"
        comment = self._issue_comment(repo, params["id"], docs)
        return self._react(request, repo, comment.id, docs)

    def _react_to_review_comment(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        docs = f"{_REACTIONS_DOCS}#create-reaction-for-a-pull-request-review-comment"
        _, comment = self._review_comment_by_id(repo, params["id"], docs)
        return self._react(request, repo, comment.id, docs)

    def _react(self, request: _Request, repo: _Repo, comment_id: int, docs: str) -> _Answer:
        body = _object_body(request, docs)
        content = body.get("content")
        if content is None:
            raise _invalid('"content" wasn\'t supplied.', docs)
        if content not in REACTIONS:
            raise _invalid(
                f"For 'properties/content', {json.dumps(content)} is not one of "
                f"{json.dumps(list(REACTIONS))}.",
                docs,
            )
        bot = f"{self.app_slug}[bot]"
        reaction, created = self._add_reaction(repo, comment_id, content, bot, "Bot")
        # Documented: "A response with an HTTP 200 status means that you already added the
        # reaction type to this issue comment."
        return _Answer(201 if created else 200, self._reaction_json(reaction))

    def _add_reaction(
        self, repo: _Repo, comment_id: int, content: str, user: str, user_type: str
    ) -> tuple[_Reaction, bool]:
        """The user's reaction of this content to the comment, and whether it is new."""
        reactions = repo.reactions.setdefault(comment_id, [])
        existing = next((r for r in reactions if (r.user, r.content) == (user, content)), None)
        if existing is not None:
            return existing, False
        reaction = _Reaction(next(self._ids), content, user, user_type, _now())
        reactions.append(reaction)
        return reaction, True

    def _reaction_json(self, reaction: _Reaction) -> dict[str, Any]:
        return {
            "id": reaction.id,
            "node_id": f"REA_{reaction.id}",
            "user": _user(reaction.user, reaction.user_type, self._user_id(reaction.user)),
            "content": reaction.content,
            "created_at": reaction.created_at,
        }

    def _rollup(self, repo: _Repo, comment_id: int, url: str) -> dict[str, Any]:
        contents = [r.content for r in repo.reactions.get(comment_id, [])]
        return {
            "url": url,
            "total_count": len(contents),
            **{content: contents.count(content) for content in REACTIONS},
        }

    # -- review comments ----------------------------------------------------------------------

    def _review_comment_by_id(
        self, repo: _Repo, comment_id: str, docs: str
    ) -> tuple[_Pull, ReviewComment]:
        found = self._find_review_comment(repo, int(comment_id))
        if found is None:
            raise _not_found(docs)
        return found

    def _find_review_comment(
        self, repo: _Repo, comment_id: int
    ) -> tuple[_Pull, ReviewComment] | None:
        for (base, _), pull in self._pulls.items():
            if base != repo.full_name.lower():
                continue
            for comment in pull.comments:
                if comment.id == comment_id:
                    return pull, comment
        return None

    def _thread_root(self, pull: _Pull, comment_id: int) -> ReviewComment | None:
        comment = next((c for c in pull.comments if c.id == comment_id), None)
        if comment is None or comment.in_reply_to is None:
            return comment
        return next(c for c in pull.comments if c.id == comment.in_reply_to)

    def _reply(
        self, pull: _Pull, root: ReviewComment, body: str, author: str, author_type: str
    ) -> ReviewComment:
        # A reply takes its thread's place in the diff, as on GitHub.
        reply = ReviewComment(
            id=next(self._ids),
            path=root.path,
            body=body,
            line=root.line,
            side=root.side,
            start_line=root.start_line,
            start_side=root.start_side,
            position=root.position,
            author=author,
            author_type=author_type,
            in_reply_to=root.id,
            review_id=next(self._ids),
            commit_id=root.commit_id,
            diff_hunk=root.diff_hunk,
            created_at=_now(),
        )
        pull.comments.append(reply)
        return reply

    def _get_review_comment(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        docs = f"{_REVIEW_COMMENTS_DOCS}#get-a-review-comment-for-a-pull-request"
        pull, comment = self._review_comment_by_id(repo, params["id"], docs)
        return _Answer(200, self._review_comment_json(repo, pull, comment))

    def _list_review_comments(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        pull = self._pull(repo, params["number"])
        return self._page(
            request, [self._review_comment_json(repo, pull, c) for c in pull.comments]
        )

    def _create_reply(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_REVIEW_COMMENTS_DOCS}#create-a-reply-for-a-review-comment"
        pull = self._pull(repo, params["number"])
        comment = next((c for c in pull.comments if c.id == int(params["id"])), None)
        if comment is None:
            raise _not_found(docs)
        text = _comment_body(request, "PullRequestReviewComment", docs)
        if comment.in_reply_to is not None:
            raise _unprocessable([REPLY_TO_REPLY], docs)
        reply = self._reply(pull, comment, text, f"{self.app_slug}[bot]", "Bot")
        return _Answer(201, self._review_comment_json(repo, pull, reply))

    def _review_comment_json(
        self, repo: _Repo, pull: _Pull, comment: ReviewComment
    ) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo.full_name}"
        url = f"{api}/pulls/comments/{comment.id}"
        html = f"https://github.com/{repo.full_name}/pull/{pull.number}#discussion_r{comment.id}"
        pull_url = f"{api}/pulls/{pull.number}"
        entry = next((f for f in pull.files if f["filename"] == comment.path), None)
        lines = _diff_lines(entry.get("patch", "")) if entry else []
        placed = _find_line(lines, comment.side or "RIGHT", comment.line)
        position = placed.position if placed else comment.position
        answer: dict[str, Any] = {
            "url": url,
            "pull_request_review_id": comment.review_id,
            "id": comment.id,
            "node_id": f"PRRC_{comment.id}",
            "diff_hunk": comment.diff_hunk,
            "path": comment.path,
            "position": position,
            "original_position": position,
            "commit_id": comment.commit_id,
            "original_commit_id": comment.commit_id,
            "user": _user(comment.author, comment.author_type, self._user_id(comment.author)),
            "body": comment.body,
            "created_at": comment.created_at,
            "updated_at": comment.created_at,
            "html_url": html,
            "pull_request_url": pull_url,
            "author_association": self._association(repo, comment.author),
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "pull_request": {"href": pull_url},
            },
            "start_line": comment.start_line,
            "original_start_line": comment.start_line,
            "start_side": comment.start_side,
            "line": comment.line,
            "original_line": comment.line,
            "side": comment.side,
            "subject_type": "line",
            "reactions": self._rollup(repo, comment.id, f"{url}/reactions"),
        }
        if comment.in_reply_to is not None:
            answer["in_reply_to_id"] = comment.in_reply_to
        return answer

    # -- GraphQL ------------------------------------------------------------------------------

    def _graphql(self, request: _Request) -> _Answer:
        """`POST /graphql`, for the one query Tiebreak sends: a pull request's review threads.

        No parser: the query is recognised by `reviewThreads` in it, its pages by the
        `first:` arguments, and its subject by the variables `owner`, `name`, `number` and
        `cursor`. Errors are shaped as GitHub's: 200 with `errors` beside the `data` that
        resolved.
        """
        if not request.headers.get("authorization"):
            raise _error(401, "This endpoint requires you to be authenticated.", _GRAPHQL_DOCS)
        covered = self._covered(request)
        body = request.body if isinstance(request.body, dict) else {}
        query, variables = body.get("query"), body.get("variables") or {}
        if not isinstance(query, str):
            message = "A query attribute must be specified and must be a string."
            return _graphql_answer(None, [{"message": message}])
        if "reviewThreads" not in query:
            self.problems.append(f"POST /graphql: {GRAPHQL_UNSUPPORTED}, not:\n{query}")
            return _graphql_answer(
                None, [{"type": "FAKE_UNSUPPORTED", "message": GRAPHQL_UNSUPPORTED}]
            )
        if not isinstance(variables, dict):
            variables = {}
        return self._review_threads(covered, query, variables)

    def _review_threads(
        self, covered: frozenset[str], query: str, variables: dict[str, Any]
    ) -> _Answer:
        owner, name = variables.get("owner"), variables.get("name")
        number: Any = variables.get("number")  # an int once the checks below passed
        cursor = variables.get("cursor")
        invalid = [
            _invalid_variable(key, kind, value)
            for key, kind, value in (
                ("owner", "String!", owner),
                ("name", "String!", name),
                ("number", "Int!", number),
                ("cursor", "String", cursor),
            )
            if not _graphql_value(kind, value)
        ]
        if invalid:
            return _graphql_answer(None, invalid)
        pages = {"comments": 0}  # a query that asks for no comments gets none
        for connection in ("reviewThreads", "comments"):
            if not re.search(rf"\b{connection}\b", query):
                continue
            first = _first(query, connection)
            if first is None or first > MAX_GRAPHQL_PAGE:
                return _graphql_answer(None, [_pagination_error(connection, first)])
            pages[connection] = first
        key = f"{owner}/{name}".lower()
        repo = self._repos.get(key)
        if repo is None or key not in covered:
            # A repository the token cannot see is one that does not exist, as in REST.
            message = f"Could not resolve to a Repository with the name '{owner}/{name}'."
            error = _not_resolved(query, ["repository"], message)
            return _graphql_answer({"repository": None}, [error])
        pull = self._pulls.get((key, number))
        if pull is None:
            message = f"Could not resolve to a PullRequest with the number of {number}."
            error = _not_resolved(query, ["repository", "pullRequest"], message)
            return _graphql_answer({"repository": {"pullRequest": None}}, [error])
        roots = [c for c in pull.comments if c.in_reply_to is None]
        start = _after(cursor) if cursor is not None else 0
        if start is None:
            error = {
                "type": "INVALID_CURSOR_ARGUMENTS",
                "path": ["repository", "pullRequest", "reviewThreads"],
                "locations": [_location(query, "reviewThreads")],
                "message": f"`{cursor}` does not appear to be a valid cursor.",
            }
            data = {"repository": {"pullRequest": {"reviewThreads": None}}}
            return _graphql_answer(data, [error])
        chunk = roots[start : start + pages["reviewThreads"]]
        nodes = [
            {
                "isResolved": root.id in pull.resolved,
                "comments": {
                    "nodes": [
                        {"databaseId": comment.id}
                        for comment in pull.comments
                        if root.id in (comment.id, comment.in_reply_to)
                    ][: pages["comments"]]
                },
            }
            for root in chunk
        ]
        end = start + len(chunk)
        threads = {
            "pageInfo": {
                "hasNextPage": end < len(roots),
                "endCursor": _cursor(end) if chunk else None,
            },
            "nodes": nodes,
        }
        return _graphql_answer({"repository": {"pullRequest": {"reviewThreads": threads}}})

    # -- collaborators ------------------------------------------------------------------------

    def _get_permission(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{DOCS}/collaborators/collaborators#get-repository-permissions-for-a-user"
        entry = repo.permissions.get(params["username"].lower())
        if entry is None:
            raise _not_found(docs)
        login, role = entry
        rank = list(ROLE_PERMISSIONS).index(role)  # admin first, none last
        grants = ("admin", "maintain", "push", "triage", "pull")
        user = {
            **_user(login, "User", self._user_id(login)),
            "permissions": {grant: rank <= i for i, grant in enumerate(grants)},
            "role_name": role,
        }
        return _Answer(200, {"permission": ROLE_PERMISSIONS[role], "role_name": role, "user": user})

    # -- git data -----------------------------------------------------------------------------

    def _get_ref(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        branch = _branch_of(params["ref"])
        if branch is None or branch not in repo.branches:
            raise _not_found(f"{_GIT_DOCS}/refs#get-a-reference")
        return _Answer(200, self._ref_json(repo, branch))

    def _get_refs(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        # The older form: one ref when it matches exactly, else the refs it is a prefix of.
        branch = _branch_of(params["ref"])
        if branch is not None and branch in repo.branches:
            return _Answer(200, self._ref_json(repo, branch))
        prefix = params["ref"].removeprefix("heads/")
        if params["ref"].startswith("heads/"):
            matching = [b for b in sorted(repo.branches) if b.startswith(prefix)]
            if matching:
                return _Answer(200, [self._ref_json(repo, b) for b in matching])
        raise _not_found(f"{_GIT_DOCS}/refs#get-a-reference")

    def _update_ref(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_GIT_DOCS}/refs#update-a-reference"
        body = _object_body(request, docs)
        sha, force = body.get("sha"), body.get("force", False)
        if not isinstance(sha, str) or not sha:
            raise _invalid('"sha" wasn\'t supplied.', docs)
        if not isinstance(force, bool):
            raise _invalid(f"For 'properties/force', {json.dumps(force)} is not a boolean.", docs)
        branch = _branch_of(params["ref"])
        self._check_writable(request, repo, docs, branch or "")
        if branch is None or branch not in repo.branches:
            raise _error(422, REF_MISSING, docs)
        update = RefUpdate(f"refs/heads/{branch}", repo.branches[branch], sha, force)
        repo.ref_updates.append(update)
        if sha not in repo.commits:
            raise _error(422, OBJECT_MISSING, docs)
        if not force and not self._descends(repo, sha, repo.branches[branch]):
            raise _error(422, NOT_FAST_FORWARD, docs)
        update.accepted = True
        repo.branches[branch] = sha
        self._branch_moved(repo, branch)
        return _Answer(200, self._ref_json(repo, branch))

    def _ref_json(self, repo: _Repo, branch: str) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo.full_name}/git"
        sha = repo.branches[branch]
        return {
            "ref": f"refs/heads/{branch}",
            "node_id": f"REF_{hashlib.sha1(f'{repo.full_name}:{branch}'.encode()).hexdigest()}",
            "url": f"{api}/refs/heads/{quote(branch)}",
            "object": {"type": "commit", "sha": sha, "url": f"{api}/commits/{sha}"},
        }

    def _get_commit(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        commit = repo.commits.get(params["sha"])
        if commit is None:
            raise _not_found(f"{_GIT_DOCS}/commits#get-a-commit-object")
        return _Answer(200, self._commit_json(repo, commit))

    def _create_commit(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_GIT_DOCS}/commits#create-a-commit"
        body = _object_body(request, docs)
        self._check_writable(request, repo, docs)
        message, tree, parents = body.get("message"), body.get("tree"), body.get("parents", [])
        if not isinstance(message, str):
            raise _invalid('"message" wasn\'t supplied.', docs)
        if not isinstance(tree, str):
            raise _invalid('"tree" wasn\'t supplied.', docs)
        if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
            raise _invalid("For 'properties/parents', it is not an array of strings.", docs)
        if tree not in self._trees:
            raise _error(422, "Tree SHA does not exist", docs)
        if any(parent not in repo.commits for parent in parents):
            raise _error(422, "Parent SHA does not exist or is not a commit object", docs)
        bot = f"{self.app_slug}[bot]"
        default = {
            "name": bot,
            "email": f"{self._user_id(bot)}+{bot}@users.noreply.github.com",
            "date": _now(),
        }
        author = _person(body.get("author"), default, "author", docs)
        committer = _person(body.get("committer"), author, "committer", docs)
        sha = _commit_sha(tree, parents, author, committer, message)
        commit = repo.commits.setdefault(
            sha, _Commit(sha, tree, list(parents), message, author, committer)
        )
        return _Answer(201, self._commit_json(repo, commit))

    def _commit_json(self, repo: _Repo, commit: _Commit) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo.full_name}/git"
        html = f"https://github.com/{repo.full_name}/commit"
        return {
            "sha": commit.sha,
            "node_id": f"C_{commit.sha}",
            "url": f"{api}/commits/{commit.sha}",
            "html_url": f"{html}/{commit.sha}",
            "author": dict(commit.author),
            "committer": dict(commit.committer),
            "message": commit.message,
            "tree": {"sha": commit.tree, "url": f"{api}/trees/{commit.tree}"},
            "parents": [
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{html}/{p}"}
                for p in commit.parents
            ],
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        }

    def _get_tree(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        # A tree SHA, or (as GitHub takes) a commit SHA or a branch for the commit's tree.
        sha = params["sha"]
        if sha not in self._trees:
            commit = self._resolve(repo, sha)
            if commit is None:
                raise _not_found(f"{_GIT_DOCS}/trees#get-a-tree")
            sha = commit.tree
        # GitHub recurses for any value of `recursive`, "0" and "false" included.
        recursive = "recursive" in request.query
        return _Answer(200, self._tree_json(repo, sha, recursive=recursive))

    def _create_tree(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_GIT_DOCS}/trees#create-a-tree"
        body = _object_body(request, docs)
        self._check_writable(request, repo, docs)
        items, base = body.get("tree"), body.get("base_tree")
        if not isinstance(items, list):
            raise _invalid('"tree" wasn\'t supplied.', docs)
        if base is not None and (not isinstance(base, str) or base not in self._trees):
            raise _error(422, f"base_tree {base} is not a valid tree", docs)
        files = self._flatten(base) if base else {}
        for item in items:
            self._apply_tree_item(files, item, docs)
        return _Answer(201, self._tree_json(repo, self._write_tree(files), recursive=False))

    def _apply_tree_item(
        self, files: dict[str, tuple[str, str, str]], item: Any, docs: str
    ) -> None:
        if not isinstance(item, dict):
            raise _invalid("For 'items', it is not an object.", docs)
        path, mode, kind = item.get("path"), item.get("mode"), item.get("type")
        if not isinstance(path, str) or not _valid_path(path):
            raise _error(422, f"tree.path {json.dumps(path)} is not a valid path", docs)
        modes = {"blob": BLOB_MODES, "tree": (TREE_MODE,), "commit": (GITLINK_MODE,)}
        if kind not in modes:
            raise _invalid(
                f"For 'properties/type', {json.dumps(kind)} is not one of "
                '["blob", "tree", "commit"].',
                docs,
            )
        if mode not in modes[kind]:
            raise _error(422, f"tree.mode {json.dumps(mode)} is not valid for a {kind}", docs)
        has_sha, content = "sha" in item, item.get("content")
        if has_sha == (content is not None):
            raise _error(422, "Must supply exactly one of tree.sha or tree.content", docs)
        under = f"{path}/"
        present = [p for p in files if p == path or p.startswith(under)]
        if content is not None:
            if kind != "blob" or not isinstance(content, str):
                raise _error(422, "tree.content is only for a blob, as a string", docs)
            added = {path: (mode, "blob", self._store_blob(content.encode()))}
        elif item["sha"] is None:
            if not present:
                raise _error(422, f"tree.path {path} does not exist in base_tree", docs)
            added = {}
        elif kind == "tree":
            if item["sha"] not in self._trees:
                raise _error(422, f"tree.sha {item['sha']} is not a valid tree", docs)
            added = {f"{under}{p}": e for p, e in self._flatten(item["sha"]).items()}
        else:
            if kind == "blob" and item["sha"] not in self._blobs:
                raise _error(422, f"tree.sha {item['sha']} is not a valid blob", docs)
            added = {path: (mode, kind, str(item["sha"]))}
        for old in present:
            del files[old]
        # A file where a directory of the new path was (or the other way round) goes.
        parts = path.split("/")
        for depth in range(1, len(parts)):
            files.pop("/".join(parts[:depth]), None)
        files.update(added)

    def _tree_json(self, repo: _Repo, sha: str, *, recursive: bool) -> dict[str, Any]:
        return {
            "sha": sha,
            "url": f"{self.base_url}/repos/{repo.full_name}/git/trees/{sha}",
            "tree": self._tree_items(repo, sha, recursive, ""),
            "truncated": False,
        }

    def _tree_items(
        self, repo: _Repo, sha: str, recursive: bool, prefix: str
    ) -> list[dict[str, Any]]:
        api = f"{self.base_url}/repos/{repo.full_name}/git"
        items: list[dict[str, Any]] = []
        for name, (mode, kind, child) in self._trees[sha].items():
            item: dict[str, Any] = {"path": f"{prefix}{name}", "mode": mode, "type": kind}
            item["sha"] = child
            if kind == "blob":
                item["size"] = len(self._blobs[child])
            if kind != "commit":
                item["url"] = f"{api}/{kind}s/{child}"
            items.append(item)
            if kind == "tree" and recursive:
                items += self._tree_items(repo, child, recursive, f"{prefix}{name}/")
        return items

    def _get_blob(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        content = self._blobs.get(params["sha"])
        if content is None:
            raise _not_found(f"{_GIT_DOCS}/blobs#get-a-blob")
        if RAW_MEDIA_TYPE.search(request.headers.get("accept", "")):
            return _Answer(200, data=content, content_type="application/octet-stream")
        sha = params["sha"]
        return _Answer(
            200,
            {
                "sha": sha,
                "node_id": f"B_{sha}",
                "size": len(content),
                "url": f"{self.base_url}/repos/{repo.full_name}/git/blobs/{sha}",
                "content": _wrapped_base64(content),
                "encoding": "base64",
            },
        )

    def _create_blob(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_GIT_DOCS}/blobs#create-a-blob"
        body = _object_body(request, docs)
        self._check_writable(request, repo, docs)
        content, encoding = body.get("content"), body.get("encoding", "utf-8")
        if not isinstance(content, str):
            raise _invalid('"content" wasn\'t supplied.', docs)
        if encoding in ("utf-8", "utf8"):
            data = content.encode()
        elif encoding == "base64":
            try:
                data = base64.b64decode(content)
            except (binascii.Error, ValueError) as exc:
                raise _error(422, "content is not valid Base64", docs) from exc
        else:
            raise _error(
                422,
                f"encoding must be either 'utf-8' or 'base64', not {json.dumps(encoding)}",
                docs,
            )
        sha = self._store_blob(data)
        url = f"{self.base_url}/repos/{repo.full_name}/git/blobs/{sha}"
        return _Answer(201, {"sha": sha, "url": url})

    # -- comparing commits --------------------------------------------------------------------

    def _compare(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_COMMITS_DOCS}#compare-two-commits"
        basehead = params["basehead"]
        base_ref, dots, head_ref = basehead.partition("...")
        if not dots:
            # GitHub takes two dots too, and still compares from the merge base.
            base_ref, dots, head_ref = basehead.partition("..")
        base = self._resolve(repo, base_ref) if dots else None
        head = self._resolve(repo, head_ref) if dots else None
        if base is None or head is None:
            raise _not_found(docs)
        merge_base = self._merge_base(repo, base.sha, head.sha)
        if merge_base is None:
            raise _error(404, f"No common ancestor between {base_ref} and {head_ref}.", docs)
        theirs = set(self._ancestors(repo, base.sha))
        ours = set(self._ancestors(repo, head.sha))
        ahead = self._oldest_first(repo, head.sha, ours - theirs)
        behind_by = len(theirs - ours)
        if not ahead and not behind_by:
            status = "identical"
        elif not behind_by:
            status = "ahead"
        elif not ahead:
            status = "behind"
        else:
            status = "diverged"
        owner = repo.full_name.split("/", 1)[0]
        html = f"https://github.com/{repo.full_name}/compare"
        return _Answer(
            200,
            {
                "url": f"{self.base_url}/repos/{repo.full_name}/compare/{quote(basehead)}",
                "html_url": f"{html}/{quote(basehead)}",
                "permalink_url": f"{html}/{owner}:{base.sha}...{owner}:{head.sha}",
                "diff_url": f"{html}/{quote(basehead)}.diff",
                "patch_url": f"{html}/{quote(basehead)}.patch",
                "base_commit": self._listed_commit_json(repo, base),
                "merge_base_commit": self._listed_commit_json(repo, repo.commits[merge_base]),
                "status": status,
                "ahead_by": len(ahead),
                "behind_by": behind_by,
                "total_commits": len(ahead),
                "commits": [
                    self._listed_commit_json(repo, repo.commits[sha])
                    for sha in ahead[-MAX_COMPARED_COMMITS:]
                ],
                # Three dots: what the head changed since the merge base, not since the base.
                "files": self._compared_files(repo, repo.commits[merge_base], head),
            },
        )

    def _listed_commit_json(self, repo: _Repo, commit: _Commit) -> dict[str, Any]:
        """A commit as the commits API lists it (GitHub's `commit` schema, without stats and
        files)."""
        api = f"{self.base_url}/repos/{repo.full_name}"
        html = f"https://github.com/{repo.full_name}/commit"
        git = self._commit_json(repo, commit)
        return {
            "url": f"{api}/commits/{commit.sha}",
            "sha": commit.sha,
            "node_id": git["node_id"],
            "html_url": git["html_url"],
            "comments_url": f"{api}/commits/{commit.sha}/comments",
            "commit": {
                "url": git["url"],
                "author": git["author"],
                "committer": git["committer"],
                "message": git["message"],
                "comment_count": 0,
                "tree": git["tree"],
                "verification": git["verification"],
            },
            "author": self._account(commit.author),
            "committer": self._account(commit.committer),
            "parents": [
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{html}/{p}"}
                for p in commit.parents
            ],
        }

    def _account(self, person: Mapping[str, str]) -> dict[str, Any] | None:
        """The GitHub user of a commit's author or committer, known here only by a noreply
        address (`login@…` or `id+login@users.noreply.github.com`); None for another one."""
        local, _, domain = person["email"].partition("@")
        if domain != "users.noreply.github.com":
            return None
        login = local.partition("+")[2] or local
        kind = "Bot" if login.endswith("[bot]") else "User"
        return _user(login, kind, self._user_id(login))

    def _compared_files(self, repo: _Repo, before: _Commit, after: _Commit) -> list[dict[str, Any]]:
        """The `files` of a comparison: what differs between two snapshots, by path."""
        old, new = self._flatten(before.tree), self._flatten(after.tree)
        contents = f"{self.base_url}/repos/{repo.full_name}/contents"
        entries: list[dict[str, Any]] = []
        for path in sorted(old.keys() | new.keys()):
            was, now = old.get(path), new.get(path)
            if was == now:
                continue
            if was is None:
                status, sha = "added", new[path][2]
            elif now is None:
                status, sha = "removed", was[2]
            else:
                # "changed": the same content with another mode.
                status, sha = ("changed" if was[2] == now[2] else "modified"), now[2]
            raw: dict[str, Any] = {"filename": path, "status": status, "sha": sha}
            patch = _patch(self._file_content(was), self._file_content(now))
            if patch is not None:
                raw["patch"] = patch
            entry = self._entry(repo, after.sha, raw)
            entry["contents_url"] = f"{contents}/{quote(path)}?ref={after.sha}"
            entries.append(entry)
        return entries[:MAX_COMPARED_FILES]

    def _file_content(self, entry: tuple[str, str, str] | None) -> bytes:
        if entry is None:
            return b""
        _, kind, sha = entry
        # A submodule's text in a diff, as git prints it.
        return f"Subproject commit {sha}\n".encode() if kind == "commit" else self._blobs[sha]

    # -- the git store ------------------------------------------------------------------------

    def _store_blob(self, content: bytes) -> str:
        sha = _blob_sha(content)
        self._blobs.setdefault(sha, content)
        return sha

    def _write_tree(self, files: Mapping[str, tuple[str, str, str]]) -> str:
        """Store the trees of a path → (mode, type, SHA) mapping; answer the root's SHA."""
        entries: dict[str, tuple[str, str, str]] = {}
        directories: dict[str, dict[str, tuple[str, str, str]]] = {}
        for path, entry in files.items():
            name, slash, rest = path.partition("/")
            if slash:
                directories.setdefault(name, {})[rest] = entry
            else:
                entries[name] = entry
        for name, inside in directories.items():
            entries[name] = (TREE_MODE, "tree", self._write_tree(inside))
        # Git sorts a tree's entries by name, a directory's as if it ended in "/".
        ordered = dict(sorted(entries.items(), key=lambda e: _tree_key(e[0], e[1][1])))
        sha = _tree_sha(ordered)
        self._trees.setdefault(sha, ordered)
        return sha

    def _flatten(self, tree: str, prefix: str = "") -> dict[str, tuple[str, str, str]]:
        """Path → (mode, type, SHA) of every file (blob or submodule) under the tree."""
        files: dict[str, tuple[str, str, str]] = {}
        for name, (mode, kind, sha) in self._trees[tree].items():
            if kind == "tree":
                files.update(self._flatten(sha, f"{prefix}{name}/"))
            else:
                files[f"{prefix}{name}"] = (mode, kind, sha)
        return files

    def _tree_of(self, texts: Mapping[str, str | bytes]) -> str:
        return self._write_tree(
            {
                path.strip("/"): (
                    FILE_MODE,
                    "blob",
                    self._store_blob(text.encode() if isinstance(text, str) else text),
                )
                for path, text in texts.items()
            }
        )

    def _overlay(self, tree: str, on_top: str) -> str:
        files = self._flatten(tree)
        files.update(self._flatten(on_top))
        return self._write_tree(files)

    def _resolve(self, repo: _Repo, ref: str) -> _Commit | None:
        """The commit a ref names: a branch (`main`, `heads/main`, `refs/heads/main`) or a SHA."""
        branch = ref.removeprefix("refs/").removeprefix("heads/")
        if branch in repo.branches:
            return repo.commits[repo.branches[branch]]
        return repo.commits.get(ref)

    def _setup_commit(
        self, repo: _Repo, sha: str, parents: list[str], tree: str, author: str
    ) -> _Commit:
        """The repository's commit `sha`, made with this tree and parents if it lacks it."""
        commit = repo.commits.get(sha)
        if commit is None:
            person = {"name": author, "email": f"{author}@users.noreply.github.com"}
            person["date"] = SETUP_DATE
            commit = _Commit(sha, tree, parents, "Set up by a test", person, dict(person))
            repo.commits[sha] = commit
        return commit

    def _setup_ref(self, repo: _Repo, ref: str) -> _Commit:
        commit = self._resolve(repo, ref)
        if commit is not None:
            return commit
        branch = ref.removeprefix("refs/").removeprefix("heads/")
        if branch != repo.default_branch and _SHA_LIKE.fullmatch(ref):
            return self._setup_commit(repo, ref, [], EMPTY_TREE, "octocat")
        # A branch no pull request named yet: a stand-in commit holds its files until one does.
        sha = hashlib.sha1(f"{repo.full_name}\0{branch}".encode()).hexdigest()
        commit = self._setup_commit(repo, sha, [], EMPTY_TREE, "octocat")
        commit.placeholder = True
        repo.branches[branch] = sha
        return commit

    def _place_base(
        self,
        repo: _Repo,
        branch: str,
        sha: str,
        files: Mapping[str, str | bytes] | None,
        author: str,
    ) -> None:
        commit = self._setup_commit(repo, sha, [], EMPTY_TREE, author)
        current = repo.commits.get(repo.branches.get(branch, ""))
        # A base branch stays where it is (the base moves only by the repository's pushes),
        # unless only a stand-in commit of set_file held it.
        if current is None or (current.placeholder and current is not commit):
            if current is not None:
                commit.tree = self._overlay(commit.tree, current.tree)
            repo.branches[branch] = sha
        if files is not None:
            commit.tree = self._tree_of(files)

    def _place_head(
        self,
        repo: _Repo,
        fork: _Repo,
        branch: str,
        sha: str,
        parent: str,
        files: Mapping[str, str | bytes] | None,
        author: str,
    ) -> None:
        commit = repo.commits.get(sha) or fork.commits.get(sha)
        if commit is None:
            before = repo.commits[parent]
            commit = self._setup_commit(repo, sha, [parent], before.tree, author)
        current = fork.commits.get(fork.branches.get(branch, ""))
        if current is not None and current.placeholder and current is not commit:
            commit.tree = self._overlay(commit.tree, current.tree)
        if files is not None:
            commit.tree = self._tree_of(files)
        # The base repository keeps a pull request's head (GitHub's refs/pull/N/head); the
        # branch is the head repository's.
        repo.commits[sha] = commit
        self._share(repo, fork, sha)
        fork.branches[branch] = sha

    def _share(self, source: _Repo, target: _Repo, sha: str) -> None:
        """Give `target` the commit and its ancestors `source` has (the same objects)."""
        pending = [sha]
        while pending:
            current = pending.pop()
            commit = source.commits.get(current)
            if commit is None or target.commits.get(current) is commit:
                continue
            target.commits.setdefault(current, commit)
            pending += commit.parents

    def _descends(self, repo: _Repo, sha: str, ancestor: str) -> bool:
        """Whether `ancestor` is `sha` or one of its ancestors."""
        seen: set[str] = set()
        pending = [sha]
        while pending:
            current = pending.pop()
            if current == ancestor:
                return True
            commit = repo.commits.get(current)
            if commit is None or current in seen:
                continue
            seen.add(current)
            pending += commit.parents
        return False

    def _ancestors(self, repo: _Repo, sha: str) -> list[str]:
        """`sha` and the commits it descends from that the repository has, nearest first."""
        order: list[str] = []
        seen = {sha}
        pending = [sha]
        while pending:
            current = pending.pop(0)
            commit = repo.commits.get(current)
            if commit is None:
                continue
            order.append(current)
            for parent in commit.parents:
                if parent not in seen:
                    seen.add(parent)
                    pending.append(parent)
        return order

    def _merge_base(self, repo: _Repo, one: str, other: str) -> str | None:
        """A best common ancestor of two commits (one no other common ancestor descends
        from), the nearest to `other` if there are several; None for unrelated histories."""
        common = set(self._ancestors(repo, one)) & set(self._ancestors(repo, other))
        below = {
            older
            for sha in common
            for parent in repo.commits[sha].parents
            for older in self._ancestors(repo, parent)
        }
        return next((sha for sha in self._ancestors(repo, other) if sha in common - below), None)

    def _oldest_first(self, repo: _Repo, sha: str, among: set[str]) -> list[str]:
        """The commits of `among` that `sha` is or descends from, parents before children
        (GitHub's chronological order)."""
        order: list[str] = []
        visited: set[str] = set()
        pending: list[tuple[str, bool]] = [(sha, False)]
        while pending:
            current, expanded = pending.pop()
            if expanded:
                order.append(current)
                continue
            if current in visited or current not in among:
                continue
            visited.add(current)
            pending.append((current, True))
            # Reversed, so that the first parent's history comes first.
            pending += [(parent, False) for parent in reversed(repo.commits[current].parents)]
        return order

    def _branch_moved(self, repo: _Repo, branch: str) -> None:
        """Move the open pull requests whose head is this branch, as a push does."""
        sha = repo.branches[branch]
        for (base, _), pull in self._pulls.items():
            if pull.head_repo.lower() != repo.full_name.lower() or pull.head_ref != branch:
                continue
            if pull.state != "open" or pull.head_sha == sha:
                continue
            self._share(repo, self._repos[base], sha)
            pull.head_sha = sha
            pull.heads.append(sha)

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
            repo = _Repo(full_name=full_name, id=next(self._ids), default_branch="main")
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


# -- pure helpers ----------------------------------------------------------------------------


def _graphql_answer(
    data: dict[str, Any] | None, errors: list[dict[str, Any]] | None = None
) -> _Answer:
    """GitHub's GraphQL answer: 200, with the `data` that resolved and the `errors`."""
    body: dict[str, Any] = {"data": data} if data is not None else {}
    if errors:
        body["errors"] = errors
    return _Answer(200, body)


def _graphql_value(kind: str, value: Any) -> bool:
    if value is None:
        return not kind.endswith("!")
    if kind.startswith("Int"):
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str)


def _invalid_variable(name: str, kind: str, value: Any) -> dict[str, Any]:
    explanation = "Expected value to not be null" if value is None else "Could not coerce value"
    return {
        "extensions": {"value": value, "problems": [{"path": [], "explanation": explanation}]},
        "message": f"Variable ${name} of type {kind} was provided invalid value",
    }


def _pagination_error(connection: str, first: int | None) -> dict[str, Any]:
    if first is None:
        return {
            "type": "MISSING_PAGINATION_BOUNDARIES",
            "message": f"You must provide a `first` or `last` value to properly paginate the "
            f"`{connection}` connection.",
        }
    return {
        "type": "EXCESSIVE_PAGINATION",
        "message": f"Requesting {first} records on the `{connection}` connection exceeds the "
        f"`first` limit of {MAX_GRAPHQL_PAGE} records.",
    }


def _first(query: str, connection: str) -> int | None:
    """The `first: N` argument of a connection in the query; None if it has none."""
    arguments = re.search(rf"\b{connection}\s*\(([^)]*)\)", query)
    first = re.search(r"\bfirst\s*:\s*(\d+)", arguments[1]) if arguments else None
    return int(first[1]) if first else None


def _location(query: str, field_name: str) -> dict[str, int]:
    """Where a field first appears in the query: GitHub's `locations` item (from 1)."""
    found = re.search(rf"\b{field_name}\b", query)
    offset = found.start() if found else 0
    line = query.count("\n", 0, offset) + 1
    return {"line": line, "column": offset - (query.rfind("\n", 0, offset) + 1) + 1}


def _not_resolved(query: str, path: list[str], message: str) -> dict[str, Any]:
    return {
        "type": "NOT_FOUND",
        "path": path,
        "locations": [_location(query, path[-1])],
        "message": message,
    }


def _cursor(position: int) -> str:
    """An opaque cursor: the page after it starts at `position`."""
    return base64.b64encode(f"cursor:{position}".encode()).decode()


def _after(cursor: str) -> int | None:
    """The position a cursor of `_cursor` stands for; None for any other string."""
    try:
        text = base64.b64decode(cursor, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    prefix, _, position = text.partition(":")
    return int(position) if prefix == "cursor" and position.isdigit() else None


def _manifest_answer(answer: ManifestAnswer) -> _Answer:
    if answer.html is None:
        return _Answer(answer.status, answer.body, headers=answer.headers)
    return _Answer(
        answer.status,
        data=answer.html.encode(),
        content_type="text/html; charset=utf-8",
        headers=answer.headers,
    )


def _inaccessible() -> _HTTPError:
    return _error(
        422,
        "There is at least one repository that does not exist or is not accessible to the "
        "parent installation.",
        f"{DOCS}/apps/apps#create-an-installation-access-token-for-an-app",
    )


def _object_body(request: _Request, docs: str) -> dict[str, Any]:
    if not isinstance(request.body, dict):
        raise _invalid("The request body is not a JSON object.", docs)
    return request.body


def _positive(value: str | None, default: int) -> int:
    # GitHub ignores a page or per_page that is not a positive number.
    try:
        number = int(value) if value is not None else default
    except ValueError:
        return default
    return number if number > 0 else default


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _blob_sha(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def _wrapped_base64(content: bytes) -> str:
    # GitHub wraps base64 at 60 characters, each line ending in a newline.
    encoded = base64.b64encode(content).decode()
    return "".join(f"{encoded[i : i + 60]}\n" for i in range(0, len(encoded), 60))


def _raw_sha(sha: str) -> bytes:
    # A SHA a test made up ("h1") still needs 20 bytes in a tree object.
    try:
        raw = bytes.fromhex(sha)
    except ValueError:
        raw = b""
    return raw if len(raw) == 20 else hashlib.sha1(sha.encode()).digest()


def _tree_key(name: str, kind: str) -> bytes:
    return f"{name}/".encode() if kind == "tree" else name.encode()


def _tree_sha(entries: Mapping[str, tuple[str, str, str]]) -> str:
    """Git's SHA of a tree object with these (already ordered) entries."""
    data = b"".join(
        f"{mode.lstrip('0')} {name}".encode() + b"\0" + _raw_sha(sha)
        for name, (mode, _, sha) in entries.items()
    )
    return hashlib.sha1(b"tree %d\0" % len(data) + data).hexdigest()


def _commit_sha(
    tree: str,
    parents: Sequence[str],
    author: Mapping[str, str],
    committer: Mapping[str, str],
    message: str,
) -> str:
    """Git's SHA of a commit object (unsigned)."""

    def signature(person: Mapping[str, str]) -> str:
        seconds = int(datetime.fromisoformat(person["date"]).timestamp())
        return f"{person['name']} <{person['email']}> {seconds} +0000"

    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines += [f"author {signature(author)}", f"committer {signature(committer)}"]
    data = ("\n".join(lines) + "\n\n" + message).encode()
    return hashlib.sha1(b"commit %d\0" % len(data) + data).hexdigest()


def _person(raw: Any, default: Mapping[str, str], key: str, docs: str) -> dict[str, str]:
    """A commit's author or committer from a request: name, email, an optional date."""
    if raw is None:
        return dict(default)
    if not isinstance(raw, dict):
        raise _invalid(f"For 'properties/{key}', it is not an object.", docs)
    person = {**default, **{k: raw[k] for k in ("name", "email", "date") if k in raw}}
    if not all(isinstance(person[k], str) for k in ("name", "email", "date")):
        raise _invalid(f"For 'properties/{key}', name, email and date must be strings.", docs)
    try:
        when = datetime.fromisoformat(person["date"])
    except ValueError as exc:
        raise _invalid(f"For 'properties/{key}/date', it is not an ISO 8601 time.", docs) from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    person["date"] = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return person


def _patch(old: bytes, new: bytes) -> str | None:
    """GitHub's `patch` from one content of a file to another: the hunks of a unified diff
    with three lines of context, no final newline; None for a binary file or no line changed."""
    try:
        before, after = old.decode(), new.decode()
    except UnicodeDecodeError:
        return None
    if "\0" in before or "\0" in after:
        return None
    rows: list[str] = []
    # The first two lines are the file headers (---, +++), which a patch has not.
    for line in itertools.islice(difflib.unified_diff(_lines(before), _lines(after)), 2, None):
        if line.endswith("\n"):
            rows.append(line[:-1])
        else:
            rows += [line, "\\ No newline at end of file"]
    return "\n".join(rows) or None


def _lines(text: str) -> list[str]:
    # Git's lines end at "\n" only (str.splitlines also ends one at "\r" and others).
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def _valid_path(path: str) -> bool:
    parts = path.split("/")
    return all(part not in ("", ".", "..", ".git") for part in parts)


def _branch_of(ref: str) -> str | None:
    """The branch of a `heads/<branch>` ref (the form the refs endpoints take)."""
    branch = ref.removeprefix("heads/")
    return branch if branch != ref and branch else None


def _comment_body(request: _Request, resource: str, docs: str) -> str:
    body = _object_body(request, docs)
    text = body.get("body")
    if not isinstance(text, str):
        raise _invalid('"body" wasn\'t supplied.', docs)
    if len(text) > MAX_COMMENT_BODY:
        # As GitHub answers it today (an older answer had field "body", code "custom").
        raise _error(
            422,
            "Validation Failed",
            docs,
            [
                {
                    "resource": resource,
                    "code": "unprocessable",
                    "field": "data",
                    "message": BODY_TOO_LONG,
                }
            ],
        )
    return text


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


def _annotation(raw: Any, docs: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _invalid("For 'items', it is not an object.", docs)
    for key in ("path", "start_line", "end_line", "annotation_level", "message"):
        if raw.get(key) is None:
            raise _invalid(f'"{key}" wasn\'t supplied.', docs)
    if raw["annotation_level"] not in ANNOTATION_LEVELS:
        raise _invalid(
            f"For 'properties/annotation_level', {json.dumps(raw['annotation_level'])} is not "
            f"one of {json.dumps(list(ANNOTATION_LEVELS))}.",
            docs,
        )
    if raw["start_line"] > raw["end_line"]:
        raise _invalid("For 'properties/end_line', it is before start_line.", docs)
    has_columns = raw.get("start_column") is not None or raw.get("end_column") is not None
    if has_columns and raw["start_line"] != raw["end_line"]:
        raise _invalid("start_column and end_column are only allowed on a single line.", docs)
    if len(str(raw.get("title") or "")) > 255:
        raise _invalid("For 'properties/title', it is longer than 255 characters.", docs)
    return dict(raw)


def _actions(raw: Any, docs: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise _invalid("For 'properties/actions', it is not an array.", docs)
    if len(raw) > MAX_ACTIONS:
        raise _invalid(
            f"For 'properties/actions', {len(raw)} items is more than the maximum of "
            f"{MAX_ACTIONS}.",
            docs,
        )
    for action in raw:
        if not isinstance(action, dict):
            raise _invalid("For 'items', it is not an object.", docs)
        for key, limit in ACTION_LIMITS.items():
            value = action.get(key)
            if not isinstance(value, str):
                raise _invalid(f'"{key}" wasn\'t supplied.', docs)
            if len(value) > limit:
                raise _invalid(
                    f"For 'properties/{key}', it is longer than {limit} characters.", docs
                )
    return [dict(a) for a in raw]


_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _diff_lines(patch: str) -> list[DiffLine]:
    """The lines of a file's patch (hunks only, no file headers) with their positions."""
    lines: list[DiffLine] = []
    position, hunk = 0, -1
    left = right = 0
    for text in patch.split("\n"):
        header = _HUNK_HEADER.match(text)
        if header:
            if hunk >= 0:
                position += 1  # later hunk headers count as diff positions
            hunk += 1
            left, right = int(header[1]), int(header[2])
            continue
        if hunk < 0:
            continue
        position += 1
        kind = text[:1]
        if kind == "+":
            lines.append(DiffLine(position, hunk, None, right))
            right += 1
        elif kind == "-":
            lines.append(DiffLine(position, hunk, left, None))
            left += 1
        elif kind == "\\":
            continue  # "\ No newline at end of file": a position, not a line of either file
        else:
            lines.append(DiffLine(position, hunk, left, right))
            left += 1
            right += 1
    return lines


def _find_line(lines: list[DiffLine], side: str, number: Any) -> DiffLine | None:
    if isinstance(number, bool) or not isinstance(number, int):
        return None
    for line in lines:
        if (line.right if side == "RIGHT" else line.left) == number:
            return line
    return None


def _diff_hunk(patch: str, position: int) -> str:
    """The patch's text from the header of the hunk holding `position` down to that line."""
    rows = patch.split("\n")
    start, current = -1, 0
    for index, text in enumerate(rows):
        if _HUNK_HEADER.match(text):
            if start >= 0:
                current += 1  # later hunk headers count as diff positions
            start = index
            continue
        if start < 0:
            continue
        current += 1
        if current == position:
            return "\n".join(rows[start : index + 1])
    return ""


def _entries_from_diff(diff: str) -> list[dict[str, Any]]:
    """The `GET /pulls/{n}/files` items of a unified diff (without the URL fields)."""
    if not diff.strip():
        return []
    raw_lines = diff.splitlines(keepends=True)
    entries: list[dict[str, Any]] = []
    for patched in PatchSet(diff):
        entry: dict[str, Any] = {
            "filename": patched.path,
            "status": _status(patched),
            "additions": patched.added,
            "deletions": patched.removed,
        }
        if patched.is_rename:
            entry["previous_filename"] = _strip_prefix(patched.source_file)
        if len(patched) and not patched.is_binary_file:
            entry["patch"] = _patch_text(patched, raw_lines)
        entries.append(entry)
    return entries


def _status(patched: PatchedFile) -> str:
    if patched.is_added_file:
        return "added"
    if patched.is_removed_file:
        return "removed"
    if patched.is_rename:
        return "renamed"
    return "modified"


def _strip_prefix(name: str) -> str:
    return name[2:] if name[:2] in ("a/", "b/") else name


def _patch_text(patched: PatchedFile, raw_lines: list[str]) -> str:
    """The file's hunks exactly as the diff has them: GitHub's `patch`, with no final newline."""
    pieces: list[str] = []
    for hunk in patched:
        numbers = [line.diff_line_no for line in hunk if line.diff_line_no is not None]
        first, last = min(numbers), max(numbers)
        end = last
        # unidiff keeps "\ No newline at end of file" without its line number.
        while end < len(raw_lines) and raw_lines[end].startswith("\\"):
            end += 1
        # The header sits just above the hunk's first line (diff_line_no counts from 1).
        pieces.append("".join(raw_lines[first - 2 : end]))
    text = "".join(pieces)
    return text[:-1] if text.endswith("\n") else text


def _diff_from_entries(entries: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for entry in entries:
        new = entry["filename"]
        old = entry.get("previous_filename", new)
        parts.append(f"diff --git a/{old} b/{new}\n")
        if entry["status"] == "added":
            parts.append("new file mode 100644\n")
        elif entry["status"] == "removed":
            parts.append("deleted file mode 100644\n")
        if "patch" in entry:
            source = "/dev/null" if entry["status"] == "added" else f"a/{old}"
            target = "/dev/null" if entry["status"] == "removed" else f"b/{new}"
            parts.append(f"--- {source}\n+++ {target}\n{entry['patch']}\n")
    return "".join(parts)
