"""GitHub's numbers and words as the fake GitHub uses them: the limits it enforces (files in
a diff, annotations, comment length, page sizes), the media types and vocabularies it
accepts, git's modes, the documentation URLs its errors point to, and the error strings
GitHub answers, word for word, which tests assert on.
"""

import re
import string

DOCS = "https://docs.github.com/rest"

TOKEN_ALPHABET = string.ascii_letters + string.digits
TOKEN_EXPIRES_AT = "2099-01-01T00:00:00Z"
"""githubkit parses `expires_at` with `strptime("%Y-%m-%dT%H:%M:%SZ")`: exactly this format."""

JWT_MAX_LIFETIME = 600
"""GitHub refuses an App JWT whose `exp` is more than ten minutes ahead."""

CLOCK_SKEW = 60
"""Leeway for `iat`/`exp`, as GitHub allows for clock drift (and githubkit backdates `iat`)."""

EXAMPLE_REPOSITORY_IDS = {
    "codertocat/hello-world": 186853002,
    "octocoders/hello-world": 186853261,
    "octo-org/octo-repo": 300029405,
}
"""The ids GitHub's example deliveries (`tests/fixtures/github-webhooks/`) give the repositories
they name: the fake gives those repositories the same, so that its own deliveries and answers
about one are about the repository an example delivery named."""

APP_OWNER = "octo-org"
"""The account that owns the fake's App."""

APP_PERMISSIONS = {"checks": "write", "contents": "read", "issues": "write", "metadata": "read"}
"""The permissions the fake's App has, and an installation token's unless narrowed."""

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

MAX_BLOB_TEXT = 512_000
"""Bytes of a blob's `text` GraphQL gives: a longer text is cut there, and `isTruncated` says
so. GitHub does not document the figure; it is where GitHub cuts (projects that read texts
through GraphQL without asking for `isTruncated` found their files cut at exactly this)."""

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
GRAPHQL_UNSUPPORTED = (
    "the fake GitHub answers only the reviewThreads query and objects by expression"
)
"""The fake's GraphQL error for any other query (which it also notes in `problems`)."""

_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"


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
