"""What Tiebreak sends to GitHub: the body of each request it makes, as a validated model.

Each model is checked against GitHub's own limits when it is made, before anything is sent.
:mod:`app.publishing` decides what they say; the GitHub gateway (:mod:`app.github`) sends
them, and is the only place they become JSON. A leaf, so that both can import it.
"""

from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, PositiveInt, StringConstraints, model_validator

LIMIT = 65_535
"""GitHub's limit on a check run's summary and text, and on a comment's body."""


Text = Annotated[str, StringConstraints(min_length=1, max_length=LIMIT)]


class ReviewEvent(StrEnum):
    """How the review is submitted. There is no APPROVE: Tiebreak never approves."""

    COMMENT = "COMMENT"
    REQUEST_CHANGES = "REQUEST_CHANGES"


class Conclusion(StrEnum):
    SUCCESS = "success"
    NEUTRAL = "neutral"
    ACTION_REQUIRED = "action_required"
    FAILURE = "failure"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"
    TIMED_OUT = "timed_out"


class AnnotationLevel(StrEnum):
    NOTICE = "notice"
    WARNING = "warning"
    FAILURE = "failure"


class Body(BaseModel):
    """A request's body: what is None is left out of what is sent."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ReviewComment(Body):
    """One inline comment of a review, on RIGHT-side lines start_line..line of `path`."""

    path: Annotated[str, StringConstraints(min_length=1)]
    line: PositiveInt
    side: Literal["RIGHT"] = "RIGHT"
    start_line: PositiveInt | None = None
    start_side: Literal["RIGHT"] | None = None
    body: Text

    @model_validator(mode="after")
    def _range(self) -> Self:
        if (self.start_line is None) != (self.start_side is None):
            raise ValueError("start_line and start_side go together")
        if self.start_line is not None and self.start_line >= self.line:
            raise ValueError("start_line must be before line; a one-line comment has none")
        return self


class ReviewDraft(Body):
    """The body of `POST /repos/{owner}/{repo}/pulls/{number}/reviews`."""

    commit_id: str
    body: Text
    event: ReviewEvent
    comments: list[ReviewComment]


class Annotation(Body):
    path: Annotated[str, StringConstraints(min_length=1)]
    start_line: PositiveInt
    end_line: PositiveInt
    annotation_level: AnnotationLevel
    message: Annotated[str, StringConstraints(min_length=1, max_length=LIMIT)]
    title: Annotated[str, StringConstraints(max_length=255)]


class CheckRunOutput(Body):
    """A check run's `output`. The annotations of each request are added to those of the
    requests before it."""

    title: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    summary: Text
    text: Text | None = None
    annotations: list[Annotation] | None = None


class CheckRunAction(Body):
    """A button on the check run's page; GitHub sends back its `identifier` when pressed."""

    label: Annotated[str, StringConstraints(min_length=1, max_length=20)]
    description: Annotated[str, StringConstraints(min_length=1, max_length=40)]
    identifier: Annotated[str, StringConstraints(min_length=1, max_length=20)]


class NewCheckRun(Body):
    """The body of `POST /repos/{owner}/{repo}/check-runs`, less the check run's name and
    head SHA, which the gateway adds."""

    status: Literal["queued", "in_progress"]
    started_at: str | None = None
    """An ISO 8601 time in UTC, `YYYY-MM-DDTHH:MM:SSZ`."""
    external_id: str | None = None


class CheckRunUpdate(Body):
    """The body of `PATCH /repos/{owner}/{repo}/check-runs/{id}`: what it changes."""

    status: Literal["completed"] | None = None
    conclusion: Conclusion | None = None
    completed_at: str | None = None
    """An ISO 8601 time in UTC, `YYYY-MM-DDTHH:MM:SSZ`."""
    output: CheckRunOutput | None = None
    actions: list[CheckRunAction] | None = None
    """The buttons it offers (an empty list takes them all away)."""
    details_url: str | None = None
