"""GitHub Actions, for findings' tests run in a repository's own CI: whether the App may run
a workflow there, dispatching it, finding the run a dispatch started, and its result artifact.

A dispatch answers 204 without the run it started (GitHub's `return_run_details` is newer than
some GitHub Enterprise Servers), so a run is found by its title: the template's `run-name`
carries Tiebreak's run token. An artifact's zip is downloaded through the redirect GitHub
answers with, streamed and cut at a size: what is in it is the repository's, untrusted.
"""

from typing import Any

from githubkit import GitHub

from app.events import PullKey
from app.github.answers import read
from app.github.errors import GitHubError, translating
from app.github.models import Read, WorkflowRun

RUNS_LOOKED_AT = 100
"""The latest dispatched runs of the workflow a run is looked for among."""


class _Runs(Read):
    workflow_runs: list[WorkflowRun]


class _Artifact(Read):
    id: int
    name: str
    size_in_bytes: int = 0
    expired: bool = False


class _Artifacts(Read):
    artifacts: list[_Artifact]


class Actions:
    """Actions calls on behalf of one installation (:attr:`Installation.actions`)."""

    def __init__(self, github: GitHub[Any]) -> None:
        # Held, not just its `rest`: githubkit's namespaces keep only a weak reference, and
        # a verifier outlives the installation client it was made from.
        self._github = github
        self._rest = github.rest

    @translating
    async def check_workflow(self, ref: PullKey, workflow: str) -> None:
        """Raise :class:`GitHubError` unless the App may see `workflow` in the repository:
        403 without the Actions permission, 404 without the workflow file."""
        await self._rest.actions.async_get_workflow(ref.owner, ref.repo, workflow)

    @translating
    async def dispatch(
        self, ref: PullKey, workflow: str, branch: str, inputs: dict[str, str]
    ) -> None:
        """Start `workflow` from `branch` with `inputs`."""
        await self._rest.actions.async_create_workflow_dispatch(
            ref.owner, ref.repo, workflow, ref=branch, inputs=inputs
        )

    @translating
    async def find_run(self, ref: PullKey, workflow: str, title: str) -> WorkflowRun | None:
        """The dispatched run of `workflow` titled `title`, if GitHub lists it yet."""
        response = await self._rest.actions.async_list_workflow_runs(
            ref.owner, ref.repo, workflow, event="workflow_dispatch", per_page=RUNS_LOOKED_AT
        )
        runs = read(_Runs, response).workflow_runs
        return next((run for run in runs if run.display_title == title), None)

    @translating
    async def run(self, ref: PullKey, run_id: int) -> WorkflowRun:
        response = await self._rest.actions.async_get_workflow_run(ref.owner, ref.repo, run_id)
        return read(WorkflowRun, response)

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
