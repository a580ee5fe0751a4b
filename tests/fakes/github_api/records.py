"""The records of the fake GitHub that tests inspect: what `FakeGitHub`'s inspection methods
answer (a request it received, a label, a check run, a review and its comments, an issue
comment, a commit, a ref update, a line of a diff), and the error leaving its `with` block
raises when a handler failed.
"""

from dataclasses import dataclass, field
from typing import Any


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
    updated_at: str = ""
    """When it was last edited (empty: never)."""


@dataclass(slots=True)
class Review:
    """A review: one the App posted, or one a person (or another App) wrote."""

    id: int
    number: int
    body: str
    event: str | None
    """The event asked for; None for a pending review."""
    state: str
    commit_id: str
    comments: list[ReviewComment]
    submitted_at: str | None
    author: str
    """The login of whoever wrote it: the App's bot user (`<slug>[bot]`) for the App's."""
    author_type: str
    """`Bot` for an App's review, `User` for a person's."""


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
