"""What the gateway reads from GitHub, as the rest of Tiebreak uses it: narrow, frozen models."""

from typing import Literal

from pydantic import BaseModel, ConfigDict

REGULAR_FILE_MODES = ("100644", "100755")
"""Git's modes of a regular file and of an executable one (not a symlink, not a submodule)."""


Reaction = Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]


class GitFile(BaseModel):
    """A regular file of a commit: its path, its mode and its exact bytes."""

    model_config = ConfigDict(frozen=True)

    path: str
    mode: str
    """One of `REGULAR_FILE_MODES`: a commit keeps an executable file executable."""
    content: bytes


class Comparison(BaseModel):
    """How one commit relates to another, and which files differ between them."""

    model_config = ConfigDict(frozen=True)

    status: Literal["identical", "ahead", "behind", "diverged"]
    """`ahead`: the later commit descends from the earlier one."""
    paths: frozenset[str]
    """The files changed from the merge base to the later commit (old and new names)."""
    complete: bool
    """False when GitHub listed as many files as it ever lists: some may be missing."""


class PullRequest(BaseModel):
    """The pull request as the review needs it."""

    model_config = ConfigDict(frozen=True)

    number: int
    state: str
    draft: bool
    title: str
    body: str
    author: str
    """The login of whoever opened it."""
    head_sha: str
    head_ref: str
    head_repo: str
    """`owner/name` of the repository holding the head branch: another one for a fork."""
    base_sha: str
    base_ref: str
    base_repo: str
    maintainer_can_modify: bool
    html_url: str

    @property
    def from_fork(self) -> bool:
        return self.head_repo.lower() != self.base_repo.lower()
