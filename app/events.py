"""Narrow models of the webhook payloads Tiebreak acts on.

A handler turns a payload into one of these, and only these enter the queue: the worker
never sees a raw payload, and a payload that lacks what we need is refused at the door.
"""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

# Names and shas end up in API paths: anything else is refused at the door.
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,100}$")]
Sha = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")]


class _Payload(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Id(_Payload):
    id: int


class _Owner(_Payload):
    login: Name


class _Repository(_Payload):
    id: int
    """GitHub's id of the repository: a repository deleted and created again under the same
    name is another repository, with another id."""
    name: Name
    owner: _Owner


class _Head(_Payload):
    sha: Sha


class _Base(_Payload):
    ref: str
    sha: Sha


class _PullRequest(_Payload):
    number: int
    draft: bool = False
    head: _Head
    base: _Base


class PullRequestPayload(_Payload):
    """The part of a `pull_request` delivery a review needs."""

    action: str
    installation: _Id
    repository: _Repository
    pull_request: _PullRequest
    before: Sha | None = None
    """The head a push replaced (`synchronize` only)."""


class PullKey(BaseModel):
    """One pull request, whatever its head, and the installation that may act on it."""

    model_config = ConfigDict(frozen=True)

    installation_id: int
    owner: Name
    repo: Name
    number: int
    repository_id: int | None = None
    """GitHub's id of the repository, which what Tiebreak keeps for good is keyed by (a
    name can be taken again by another repository); None only where no payload said it: a
    request an older Tiebreak queued, or a pull request `tiebreak review` reads."""

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def key(self) -> str:
        """`owner/repo#7`."""
        return f"{self.full_name}#{self.number}"

    def at(self, head_sha: str) -> "PullRequestRef":
        return PullRequestRef(**self.model_dump(), head_sha=head_sha)


class PullRequestRef(PullKey):
    """One pull request at one head commit, as it travels through the queue."""

    head_sha: Sha

    @classmethod
    def of(cls, payload: PullRequestPayload) -> "PullRequestRef":
        return cls(
            installation_id=payload.installation.id,
            owner=payload.repository.owner.login,
            repo=payload.repository.name,
            number=payload.pull_request.number,
            repository_id=payload.repository.id,
            head_sha=payload.pull_request.head.sha,
        )


class QueuedRef(PullRequestRef):
    """A pull request head as its review is queued, with the base commit the event that asked
    for it named: the config is read there while GitHub is asked for the pull request, and
    again at the pull request's own base should that differ. A worker that does not know the
    field reads the head alone."""

    base_sha: Sha | None = None

    @property
    def ref(self) -> PullRequestRef:
        return PullRequestRef(**self.model_dump(exclude={"base_sha"}))


class _Account(_Payload):
    login: str


class _Installation(_Payload):
    id: int
    account: _Account


class _RepoName(_Payload):
    full_name: str


class InstallationPayload(_Payload):
    """An `installation` or `installation_repositories` delivery."""

    action: str
    installation: _Installation
    repositories: list[_RepoName] = []
    repositories_added: list[_RepoName] = []
    repositories_removed: list[_RepoName] = []


class User(_Payload):
    login: str
    type: str = "User"


class Comment(_Payload):
    id: int
    body: str | None = ""
    user: User
    author_association: str = "NONE"
    in_reply_to_id: int | None = None


class _IssueRef(_Payload):
    number: int
    pull_request: dict[str, object] | None = None


class _PullNumber(_Payload):
    number: int


class IssueCommentPayload(_Payload):
    """An `issue_comment` delivery: a comment on a pull request's conversation (or an issue)."""

    action: str
    installation: _Id
    repository: _Repository
    issue: _IssueRef
    comment: Comment
    sender: User


class ReviewCommentPayload(_Payload):
    """A `pull_request_review_comment` delivery: a comment in a review thread."""

    action: str
    installation: _Id
    repository: _Repository
    pull_request: _PullNumber
    comment: Comment
    sender: User


class _CheckPull(_Payload):
    number: int


class _CheckRun(_Payload):
    id: int
    head_sha: Sha
    pull_requests: list[_CheckPull] = []
    """Empty for a pull request from a fork: GitHub names only those of the repository."""
    external_id: str | None = None
    """Set by the App that made the check run: Tiebreak's name its review run."""


class _RequestedAction(_Payload):
    identifier: str


class CheckRunPayload(_Payload):
    """A `check_run` delivery: a button on Tiebreak's check run, or "Re-run"."""

    action: str
    installation: _Id
    repository: _Repository
    check_run: _CheckRun
    requested_action: _RequestedAction | None = None
    sender: User


class _CheckSuite(_Payload):
    head_sha: Sha
    pull_requests: list[_CheckPull] = []


class CheckSuitePayload(_Payload):
    action: str
    installation: _Id
    repository: _Repository
    check_suite: _CheckSuite


class CommentRef(BaseModel):
    """A comment that carried commands: on the conversation (`issue`) or in a review thread."""

    model_config = ConfigDict(frozen=True)

    id: int
    kind: str
    """`issue` or `review`."""
    thread_id: int
    """The review thread's first comment (replies go there); the comment itself otherwise."""


class CommandCall(BaseModel):
    """One parsed command; `name` None for a line Tiebreak did not understand."""

    model_config = ConfigDict(frozen=True)

    name: str | None
    argument: int | None = None
    text: str = ""


class CommandRequest(BaseModel):
    """Commands from one comment (or one check-run button), as they travel to the worker."""

    model_config = ConfigDict(frozen=True)

    pull: PullKey
    login: str
    association: str = "NONE"
    comment: CommentRef | None = None
    """None for a check-run button, which GitHub only shows to people with write access."""
    calls: list[CommandCall]


def is_bot(user: User) -> bool:
    return user.type == "Bot" or user.login.lower().endswith("[bot]")


class HearingRequest(BaseModel):
    """A person's reply in a review thread (no command in it), as it travels to the worker:
    whether the thread is one of Tiebreak's findings, and whether the person may be heard,
    is the worker's to check."""

    model_config = ConfigDict(frozen=True)

    pull: PullKey
    login: str
    comment: CommentRef
    """The reply; its `thread_id` is the thread's first comment."""
    text: Annotated[str, StringConstraints(max_length=65_536)]


class _WorkflowRun(_Payload):
    id: int
    display_title: str = ""
    status: str = ""
    conclusion: str | None = None


class WorkflowRunPayload(_Payload):
    """A `workflow_run` delivery: a run of one of the repository's workflows changed state;
    Tiebreak's own are titled with their run token."""

    action: str
    installation: _Id
    repository: _Repository
    workflow_run: _WorkflowRun


class CompletedRun(BaseModel):
    """A workflow run a `workflow_run` delivery says completed, and where it ran: what the job
    that takes a test's result compares with the run it waits for. Anyone may title a run as
    Tiebreak titles its own."""

    model_config = ConfigDict(frozen=True)

    installation_id: int
    owner: Name
    repo: Name
    run_id: int
    repository_id: int | None = None

    @classmethod
    def of(cls, payload: WorkflowRunPayload) -> "CompletedRun":
        return cls(
            installation_id=payload.installation.id,
            owner=payload.repository.owner.login,
            repo=payload.repository.name,
            run_id=payload.workflow_run.id,
            repository_id=payload.repository.id,
        )

    def ran_in(self, pull: PullKey) -> bool:
        """Whether it ran in `pull`'s repository, for `pull`'s installation: the same
        repository by its id where both say it (a name is taken again by a repository made
        anew), else by its name, which GitHub compares case-insensitively."""
        if self.installation_id != pull.installation_id:
            return False
        if self.repository_id is not None and pull.repository_id is not None:
            return self.repository_id == pull.repository_id
        return (self.owner.lower(), self.repo.lower()) == (pull.owner.lower(), pull.repo.lower())
