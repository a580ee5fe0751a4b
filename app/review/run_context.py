"""One review run as its steps read it, never changed once made.

A run starts knowing the worker's deps, the installation's client, the pull request's head and
its own id (:class:`RunStart`); planning reads the repository's config and its problems, and
opening the check run gives its id (:class:`RunContext`, what planning hands the later steps).
A step that learns more returns a new value; none writes into another's state.
"""

from dataclasses import dataclass, field

from app.events import PullRequestRef
from app.github.installation_client import InstallationClient
from app.publishing.publication import RunInfo
from app.review.dependencies import ReviewDeps
from policies.config import RepoConfig
from policies.config_file import ConfigProblem


@dataclass(frozen=True, kw_only=True)
class RunStart:
    """A review run before its check run is open: what it is given, and the repository's
    config and its problems once planning read them (the defaults until then)."""

    deps: ReviewDeps
    github: InstallationClient
    ref: PullRequestRef
    run_id: str
    config: RepoConfig = field(default_factory=RepoConfig)
    config_problems: tuple[ConfigProblem, ...] = ()
    """What is wrong with the config, shown beside whatever the check run comes to."""

    @property
    def run_info(self) -> RunInfo:
        return RunInfo.of(self.config, run_id=self.run_id, head_sha=self.ref.head_sha)

    def with_check_run(self, check_run_id: int) -> "RunContext":
        """This run, its check run open."""
        return RunContext(
            deps=self.deps,
            github=self.github,
            ref=self.ref,
            run_id=self.run_id,
            config=self.config,
            config_problems=self.config_problems,
            check_run_id=check_run_id,
        )


@dataclass(frozen=True, kw_only=True)
class RunContext(RunStart):
    """A review run with its check run open: what its later steps read."""

    check_run_id: int
