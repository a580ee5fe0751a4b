"""GitHub Actions, for findings' tests run in a repository's own CI: whether the App may run
a workflow there, dispatching it, finding the run a dispatch started, and its result artifact.

A run's title (`Tiebreak <token>`) is public in the repository's Actions tab, and anyone who
may push a workflow, or run one by hand, can title a run so. The run a dispatch started is
therefore known by its id where GitHub answers the dispatch with it (`return_run_details`,
since February 2026), else by all the dispatch asked for: the title, the workflow's path,
the event `workflow_dispatch`, the branch, the App's bot user as its actor and a creation
after the dispatch (:class:`app.github.models.Dispatch`). A GitHub Enterprise Server older than
`return_run_details` ignores it (204) or refuses the key (400 or 422, "not a permitted key"):
the dispatch is then sent again without it. githubkit's own call validates the body against a
schema that lacks the key and drops it, so the dispatch is sent as JSON written here.

An artifact's zip is downloaded through the redirect GitHub answers with, streamed and cut at
a size: what is in it is the repository's, untrusted.
"""

from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.events import PullKey
from app.github.answers import read
from app.github.errors import GitHubError, translating
from app.github.identity import Authorship
from app.github.models import Dispatch, Read, WorkflowRun

API_VERSION = "2026-03-10"
"""The REST API version the dispatch is sent with, as githubkit's generated calls send theirs."""
RUNS_LOOKED_AT = 100
"""The latest dispatched runs of the workflow a run is looked for among."""


class _Runs(Read):
    workflow_runs: list[WorkflowRun]


class _Dispatched(Read):
    """A dispatch's answer with `return_run_details`."""

    workflow_run_id: int


class _Artifact(Read):
    id: int
    name: str
    size_in_bytes: int = 0
    expired: bool = False


class _Artifacts(Read):
    artifacts: list[_Artifact]


class Actions:
    """Actions calls on behalf of one installation (:attr:`Installation.actions`)."""

    def __init__(self, github: GitHub[Any], identity: Authorship) -> None:
        # Held, not just its `rest`: githubkit's namespaces keep only a weak reference, and
        # a verifier outlives the installation client it was made from.
        self._github = github
        self._rest = github.rest
        self._identity = identity
        """Who the App's bot user is: the actor of every run the App dispatched."""

    @translating
    async def check_workflow(self, ref: PullKey, workflow: str) -> None:
        """Raise :class:`GitHubError` unless the App may see `workflow` in the repository:
        403 without the Actions permission, 404 without the workflow file."""
        await self._rest.actions.async_get_workflow(ref.owner, ref.repo, workflow)

    @translating
    async def dispatch(
        self, ref: PullKey, workflow: str, branch: str, inputs: dict[str, str]
    ) -> int | None:
        """Start `workflow` from `branch` with `inputs`; the id of the run it started, if
        GitHub says it."""
        url = f"/repos/{ref.owner}/{ref.repo}/actions/workflows/{workflow}/dispatches"
        body = {"ref": branch, "inputs": inputs}
        try:
            response = await self._github.arequest(
                "POST",
                url,
                json={**body, "return_run_details": True},
                headers={"X-GitHub-Api-Version": API_VERSION},
            )
        except RequestFailed as exc:
            refused = exc.response
            if refused.status_code not in (400, 422) or "return_run_details" not in refused.text:
                raise
            # Sent again without the key; a version of the API that answers every dispatch
            # with its run's details (the key then gone from its schema) still says the id.
            response = await self._rest.actions.async_create_workflow_dispatch(
                ref.owner, ref.repo, workflow, ref=branch, inputs=inputs
            )
        if response.status_code == 204:
            return None
        return read(_Dispatched, response).workflow_run_id

    @translating
    async def find_run(
        self, ref: PullKey, dispatch: Dispatch, run_id: int | None = None
    ) -> WorkflowRun | None:
        """The run `dispatch` started: run `run_id` if it is that run (a delivery named it),
        else the one GitHub lists among the latest of the workflow. None when it is not (or
        not yet) there, or run `run_id` is another: another workflow's, someone else's, of
        another branch or repository, or older."""
        wanted = dispatch.run_id if run_id is None else run_id
        if dispatch.run_id is not None and wanted != dispatch.run_id:
            return None
        runs = await (self._latest(ref, dispatch) if wanted is None else self._run(ref, wanted))
        for run in runs:
            if dispatch.shows(run) and await self._identity.authored(run.actor):
                return run
        return None

    async def _run(self, ref: PullKey, run_id: int) -> list[WorkflowRun]:
        """Run `run_id` of the repository (none: the repository has no such run)."""
        try:
            response = await self._rest.actions.async_get_workflow_run(ref.owner, ref.repo, run_id)
        except RequestFailed as exc:
            if exc.response.status_code == 404:
                return []
            raise
        return [read(WorkflowRun, response)]

    async def _latest(self, ref: PullKey, dispatch: Dispatch) -> list[WorkflowRun]:
        """The latest dispatched runs of the workflow from the dispatch's branch."""
        response = await self._rest.actions.async_list_workflow_runs(
            ref.owner,
            ref.repo,
            dispatch.workflow,
            event="workflow_dispatch",
            branch=dispatch.branch,
            per_page=RUNS_LOOKED_AT,
        )
        return read(_Runs, response).workflow_runs

    @translating
    async def artifact(self, ref: PullKey, run_id: int, name: str, cap: int) -> bytes | None:
        """The zip of run `run_id`'s artifact `name` (None: it has none); a
        :class:`GitHubError` if it is larger than `cap` bytes."""
        response = await self._rest.actions.async_list_workflow_run_artifacts(
            ref.owner, ref.repo, run_id, name=name
        )
        found = [a for a in read(_Artifacts, response).artifacts if a.name == name]
        if not found or found[0].expired:
            return None
        if found[0].size_in_bytes > cap:
            raise GitHubError(f"the artifact {name} is larger than {cap} bytes")
        download = await self._rest.actions.async_download_artifact(
            ref.owner, ref.repo, found[0].id, "zip", stream=True
        )
        raw = download.raw_response
        try:
            data = bytearray()
            # The listed size is GitHub's word; what arrives is counted as it arrives.
            async for chunk in raw.aiter_bytes():
                data += chunk
                if len(data) > cap:
                    raise GitHubError(f"the artifact {name} is larger than {cap} bytes")
        finally:
            await raw.aclose()
        return bytes(data)
