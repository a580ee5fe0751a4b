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


class PullRequestRef(BaseModel):
    """One pull request at one head commit, as it travels through the queue."""

    model_config = ConfigDict(frozen=True)

    installation_id: int
    owner: Name
    repo: Name
    number: int
    head_sha: Sha

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def key(self) -> str:
        """The pull request, whatever its head: `owner/repo#7`."""
        return f"{self.full_name}#{self.number}"

    @classmethod
    def of(cls, payload: PullRequestPayload) -> "PullRequestRef":
        return cls(
            installation_id=payload.installation.id,
            owner=payload.repository.owner.login,
            repo=payload.repository.name,
            number=payload.pull_request.number,
            head_sha=payload.pull_request.head.sha,
        )


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
