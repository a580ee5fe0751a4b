"""Whether a review's findings' tests run in the repository's GitHub Actions, decided once as
the review is planned: the config asks for it (`verify.workflow`), the pull request is not
from a fork (unless `verify.forks`) nor from a repository GitHub no longer names (a deleted
fork, whatever `verify.forks` says), and GitHub lets the App see the workflow (403 without the
Actions permission, 404 without the file). When the config asks and the tests cannot run, the
review goes on unverified and its summary says why, once. The workflow runs from the
repository's default branch, as the config reference says: a pull request's base branch may
hold another copy of the workflow file, stale or edited by whoever may push there.
"""

from app.events import PullRequestRef
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.github.models import HeadOrigin, PullRequest
from app.store.plans import ActionsTesting
from policies.config import RepoConfig

NOT_RUN = "Findings' tests were not run: {why}."
FORK = (
    "the pull request comes from a fork, whose code would run on this repository's runners"
    " (verify.forks is off)"
)
UNKNOWN_HEAD = (
    "the repository of the pull request's head is unknown (GitHub names none: a fork since"
    " deleted), and code of unknown origin never runs on this repository's runners"
)
NO_DEFAULT_BRANCH = "GitHub did not say which branch is the repository's default branch"
NO_PERMISSION = (
    "the App may not run workflows in this repository (it needs the actions: write permission)"
)


async def tests_in_actions(
    github: InstallationClient, ref: PullRequestRef, pull: PullRequest, config: RepoConfig
) -> tuple[ActionsTesting | None, str]:
    """How the review's tests run, or None and why not (empty: the config asks for none)."""
    verify = config.verify
    if not verify.in_actions or verify.workflow is None or verify.command is None:
        return None, ""
    origin = pull.head_origin
    if origin is HeadOrigin.UNKNOWN:
        return None, NOT_RUN.format(why=UNKNOWN_HEAD)
    if origin is HeadOrigin.FORK and not verify.forks:
        return None, NOT_RUN.format(why=FORK)
    if not pull.default_branch:
        return None, NOT_RUN.format(why=NO_DEFAULT_BRANCH)
    try:
        await github.actions.check_workflow(ref, verify.workflow)
    except GitHubError as exc:
        if exc.status == 403:
            why = NO_PERMISSION
        elif exc.status == 404:
            why = f"the workflow .github/workflows/{verify.workflow} is not in the repository"
        else:
            why = f"GitHub did not show the workflow {verify.workflow} ({exc})"
        return None, NOT_RUN.format(why=why)
    tests = ActionsTesting(
        workflow=verify.workflow,
        branch=pull.default_branch,
        base_sha=pull.base_sha,
        command=verify.command,
        setup=verify.setup,
        max_attempts=verify.max_attempts,
        max_runs=verify.max_runs,
        timeout_minutes=verify.timeout_minutes,
    )
    return tests, ""
