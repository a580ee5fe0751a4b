"""The fake GitHub's Actions: workflows a test adds, dispatched as GitHub dispatches them, their
runs, logs and artifacts, and the `workflow_run` webhooks a run sends as it goes.

A dispatch is checked as GitHub checks it (the installation's Actions permission: 403
`Resource not accessible by integration`; the workflow: 404; a workflow without a
`workflow_dispatch` trigger: 422; the ref: 422; the inputs against the workflow's own
`workflow_dispatch.inputs`, at most 25 and 65,535 characters: 422). Asked for
`return_run_details`, it answers 200 with the new run's `workflow_run_id`, `run_url` and
`html_url`, as github.com does, else 204 with no body; `serve_run_details` makes it a server
that answers 204 whatever it is asked, or one that refuses the key with 422
(`"return_run_details" is not a permitted key.`), as GitHub Enterprise Servers older than
the parameter do.

What a run does is the test's: `add_workflow` takes a function from the run's inputs and the
files at its `base` and `head` inputs to its JSON result (uploaded as the `tiebreak-result`
artifact, a zip holding `result.json`), the artifact's zip as it is (bytes), `RUN_FAILED` for
a run whose job failed before it uploaded anything (it ends `failure`), or None for a run that
never finishes. A run starts when dispatched, on a thread of its own, and sends `requested`,
`in_progress` and (if it ends) `completed` to the webhook sink, signed with its secret, with
the installation of its repository. Its title is its `run-name` with `${{ inputs.x }}` put
in. A run records who started it and how (`actor`: the App's bot user for an installation's
token, the person for a person's; `event`, `branch`, the workflow's `path`, `created_at`), as
GitHub shows them on the run. `start_run` starts a run the way someone else would (a person
dispatching by hand, another workflow's `pull_request` run, a run in another repository),
titled as the test says. Artifact and log downloads answer 302 to a URL on the fake that
needs no token, as GitHub's short-lived storage links do.
"""

import io
import json
import re
import threading
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import yaml

from tests.fakes.github_api.base import _Base, _user
from tests.fakes.github_api.constants import DOCS
from tests.fakes.github_api.gitstore import _GitStore
from tests.fakes.github_api.state import (
    _Answer,
    _error,
    _not_found,
    _now,
    _object_body,
    _Repo,
    _Request,
)

_ACTIONS_DOCS = f"{DOCS}/actions"
_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
MAX_INPUTS = 25
MAX_INPUT_CHARS = 65_535
ARTIFACT = "tiebreak-result"

Trees = Mapping[str, Mapping[str, str]]


class RunFailed:
    """A run whose job failed (a step exited non-zero) before it uploaded anything."""


RUN_FAILED = RunFailed()
Result = dict[str, Any] | bytes | RunFailed
"""What a run leaves: the result file's JSON, zipped, the artifact's zip as it is, or nothing
(`RUN_FAILED`: it ends `failure`)."""
Runner = Callable[[Mapping[str, str], Trees], Result | None]
"""What a run does: its inputs and the files at its base and head → what it leaves, or None
(it never finishes)."""
Sink = Callable[[str, dict[str, Any]], None]
"""Where webhooks go: the event's name and its payload."""

ROUTES = [
    ("GET", re.compile(rf"{_REPO}/actions/workflows/(?P<workflow>[^/]+)"), "_get_workflow"),
    (
        "POST",
        re.compile(rf"{_REPO}/actions/workflows/(?P<workflow>[^/]+)/dispatches"),
        "_dispatch_workflow",
    ),
    ("GET", re.compile(rf"{_REPO}/actions/workflows/(?P<workflow>[^/]+)/runs"), "_list_runs"),
    ("GET", re.compile(rf"{_REPO}/actions/runs/(?P<id>\d+)"), "_get_run"),
    ("GET", re.compile(rf"{_REPO}/actions/runs/(?P<id>\d+)/artifacts"), "_list_artifacts"),
    ("GET", re.compile(rf"{_REPO}/actions/runs/(?P<id>\d+)/logs"), "_download_logs"),
    ("GET", re.compile(rf"{_REPO}/actions/artifacts/(?P<id>\d+)/zip"), "_download_artifact"),
]
"""The Actions endpoints, added to the fake's repository routes."""

DOWNLOAD = re.compile(r"/_storage/(?P<name>[0-9a-f]{32})\.zip")
NOT_PERMITTED = 'Invalid request.\n\n"return_run_details" is not a permitted key.'
"""What a GitHub Enterprise Server older than `return_run_details` answers it with."""


class RunDetails(StrEnum):
    """How a dispatch answers `return_run_details`."""

    RETURNED = "returned"
    """github.com: 200 with the run's id when asked, 204 when not."""
    IGNORED = "ignored"
    """204 whatever is asked."""
    REFUSED = "refused"
    """422: the key is not permitted (it is newer than the server)."""
    ALWAYS = "always"
    """An API version that answers every dispatch with its run's details, and refuses the key
    its schema no longer has (422)."""


@dataclass
class Workflow:
    id: int
    path: str
    name: str
    run_name: str
    inputs: dict[str, Any]
    runner: Runner
    dispatchable: bool = True
    """Whether it has a `workflow_dispatch` trigger."""


@dataclass
class WorkflowRun:
    id: int
    repo: str
    workflow: Workflow
    branch: str
    head_sha: str
    title: str
    inputs: dict[str, str]
    actor: tuple[str, str]
    """Who started it: login and type (`Bot` for an App's bot user, else `User`)."""
    event: str = "workflow_dispatch"
    runner: Runner | None = None
    """What it does, when not what its workflow's runs do."""
    status: str = "queued"
    conclusion: str | None = None
    created_at: str = field(default_factory=_now)
    artifact: tuple[int, bytes] | None = None
    log: str = ""


class _Actions(_GitStore):
    """The Actions endpoints, and their setup."""

    _workflows: dict[tuple[str, str], Workflow]
    _runs: dict[int, WorkflowRun]
    _storage: dict[str, bytes]
    _no_actions: set[int]
    _sink: Sink | None
    _run_details: RunDetails
    _going: list[threading.Thread]

    def _setup_actions(self) -> None:
        self._workflows, self._runs, self._storage = {}, {}, {}
        self._no_actions, self._sink = set(), None
        self._run_details = RunDetails.RETURNED
        self._going = []

    def _end_runs(self) -> None:
        """Wait for the runs going on to end (their webhooks sent): no run outlives the fake,
        to send its webhooks into a later test."""
        with self._lock:
            going, self._going = self._going, []
        for thread in going:
            thread.join()

    # -- setup and inspection -------------------------------------------------------------

    def add_workflow(self, full_name: str, file: str, text: str, runner: Runner) -> None:
        """Add `.github/workflows/<file>` (its YAML `text`) to the repository; `runner` says
        what each of its runs does."""
        loaded = yaml.safe_load(text)
        triggers = loaded.get("on", loaded.get(True))
        dispatched = triggers.get("workflow_dispatch") if isinstance(triggers, dict) else None
        with self._lock:
            repo = self._repo_for_setup(full_name)
            self._workflows[(repo.full_name.lower(), file)] = Workflow(
                id=next(self._ids),
                path=f".github/workflows/{file}",
                name=loaded.get("name", file),
                run_name=loaded.get("run-name", ""),
                inputs=dict((dispatched or {}).get("inputs") or {}),
                runner=runner,
                dispatchable=dispatched is not None or triggers == "workflow_dispatch",
            )

    def deny_actions(self, installation_id: int) -> None:
        """The installation has no Actions permission."""
        with self._lock:
            self._no_actions.add(installation_id)

    def serve_run_details(self, details: RunDetails) -> None:
        """Answer `return_run_details` as `details` says (github.com's way by default)."""
        with self._lock:
            self._run_details = details

    def start_run(
        self,
        full_name: str,
        file: str,
        *,
        title: str,
        result: Result,
        actor: tuple[str, str] | None = None,
        event: str = "workflow_dispatch",
        branch: str | None = None,
    ) -> WorkflowRun:
        """Start a run of the repository's workflow `file` as someone other than the App
        would: `actor` (login, type; the App's bot user by default), by `event`, on `branch`
        (the default branch by default), titled `title`, uploading `result`."""
        with self._lock:
            repo = self._existing_repo(full_name)
            workflow = self._workflows[(repo.full_name.lower(), file)]
            on = branch or repo.default_branch
            run = WorkflowRun(
                id=next(self._ids),
                repo=repo.full_name.lower(),
                workflow=workflow,
                branch=on,
                head_sha=repo.branches.get(on, ""),
                title=title,
                inputs={},
                actor=actor or (f"{self.app_slug}[bot]", "Bot"),
                event=event,
                runner=lambda given, trees: result,
            )
            self._runs[run.id] = run
        self._start(run)
        return run

    def send_webhooks(self, sink: Sink) -> None:
        """Send the `workflow_run` webhooks to `sink`."""
        with self._lock:
            self._sink = sink

    def workflow_runs(self, full_name: str) -> list[WorkflowRun]:
        with self._lock:
            return [r for r in self._runs.values() if r.repo == full_name.lower()]

    # -- the endpoints --------------------------------------------------------------------

    def _workflow(self, request: _Request, repo: _Repo, name: str) -> Workflow:
        authorization = request.headers.get("authorization", "")
        token = self._tokens.get(authorization.partition(" ")[2])
        if token is not None and token.installation_id in self._no_actions:
            raise _error(403, "Resource not accessible by integration", _ACTIONS_DOCS)
        workflow = self._workflows.get((repo.full_name.lower(), name))
        if workflow is None:
            raise _not_found(f"{_ACTIONS_DOCS}/workflows#get-a-workflow")
        return workflow

    def _get_workflow(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        return _Answer(200, _workflow_json(self._workflow(request, repo, params["workflow"])))

    def _dispatch_workflow(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_ACTIONS_DOCS}/workflows#create-a-workflow-dispatch-event"
        workflow = self._workflow(request, repo, params["workflow"])
        body = _object_body(request, docs)
        details = body.pop("return_run_details", None)
        if details is not None and self._run_details in (RunDetails.REFUSED, RunDetails.ALWAYS):
            raise _error(422, NOT_PERMITTED, docs)
        if details is not None and not isinstance(details, bool):
            raise _error(422, "Invalid request: return_run_details is not a boolean", docs)
        if not workflow.dispatchable:
            raise _error(422, "Workflow does not have 'workflow_dispatch' trigger", docs)
        branch = body.get("ref")
        if not isinstance(branch, str) or branch not in repo.branches:
            raise _error(422, f"No ref found for: {branch}", docs)
        inputs = body.get("inputs") or {}
        _check_inputs(workflow, inputs, docs)
        given = {
            name: str(inputs.get(name, spec.get("default", "")))
            for name, spec in workflow.inputs.items()
        }
        title = re.sub(
            r"\$\{\{\s*inputs\.(\w+)\s*\}\}", lambda m: given.get(m[1], ""), workflow.run_name
        )
        run = WorkflowRun(
            id=next(self._ids),
            repo=repo.full_name.lower(),
            workflow=workflow,
            branch=branch,
            head_sha=repo.branches[branch],
            title=title or workflow.name,
            inputs=given,
            actor=self._poster(request),
        )
        self._runs[run.id] = run
        self._start(run)
        always = self._run_details is RunDetails.ALWAYS
        if (details and self._run_details is RunDetails.RETURNED) or always:
            urls = _run_json(self.base_url, run)
            answer = {"workflow_run_id": run.id, "run_url": urls["url"]}
            return _Answer(200, {**answer, "html_url": urls["html_url"]})
        return _Answer(204, data=b"")

    def _list_runs(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        workflow = self._workflow(request, repo, params["workflow"])
        wanted = {name: request.query.get(name) for name in ("event", "branch", "actor")}
        runs = [
            _run_json(self.base_url, r)
            for r in sorted(self._runs.values(), key=lambda r: -r.id)
            if r.workflow is workflow
            and wanted["event"] in (None, r.event)
            and wanted["branch"] in (None, r.branch)
            and wanted["actor"] in (None, r.actor[0])
        ]
        page = self._page(request, runs)
        return _Answer(
            200, {"total_count": len(runs), "workflow_runs": page.body}, headers=page.headers
        )

    def _get_run(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        return _Answer(200, _run_json(self.base_url, self._the_run(request, repo, params["id"])))

    def _list_artifacts(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        run = self._the_run(request, repo, params["id"])
        name = request.query.get("name")
        found = [] if run.artifact is None or name not in (None, ARTIFACT) else [run]
        artifacts = [_artifact_json(self.base_url, r) for r in found]
        return _Answer(200, {"total_count": len(artifacts), "artifacts": artifacts})

    def _download_artifact(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        run = next(
            (r for r in self._runs.values() if r.artifact and r.artifact[0] == int(params["id"])),
            None,
        )
        if run is None or run.artifact is None or run.repo != repo.full_name.lower():
            raise _not_found(f"{_ACTIONS_DOCS}/artifacts#download-an-artifact")
        self._workflow(request, repo, run.workflow.path.rsplit("/", 1)[1])
        return self._redirect(run.artifact[1])

    def _download_logs(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        run = self._the_run(request, repo, params["id"])
        return self._redirect(_zipped({"test/1_Run the test.txt": run.log.encode()}))

    def _the_run(self, request: _Request, repo: _Repo, run_id: str) -> WorkflowRun:
        run = self._runs.get(int(run_id))
        if run is None or run.repo != repo.full_name.lower():
            raise _not_found(f"{_ACTIONS_DOCS}/workflow-runs#get-a-workflow-run")
        self._workflow(request, repo, run.workflow.path.rsplit("/", 1)[1])
        return run

    def _redirect(self, data: bytes) -> _Answer:
        name = f"{next(self._ids):032x}"
        self._storage[name] = data
        return _Answer(302, data=b"", headers={"location": f"{self.base_url}/_storage/{name}.zip"})

    def _storage_download(self, request: _Request) -> _Answer | None:
        """A storage link, fetched without a token (None: not one)."""
        match = DOWNLOAD.fullmatch(request.path)
        if request.method != "GET" or match is None:
            return None
        data = self._storage.get(match["name"])
        if data is None:
            raise _not_found()
        return _Answer(200, data=data, content_type="application/zip")

    # -- a run ----------------------------------------------------------------------------

    def _start(self, run: WorkflowRun) -> None:
        thread = threading.Thread(target=self._run, args=(run,), name=f"fake-github-run-{run.id}")
        with self._lock:
            self._going.append(thread)
        thread.start()

    def _run(self, run: WorkflowRun) -> None:
        """Run `run` as its workflow's runner says, sending its webhooks as it goes."""
        self._send(run, "requested")
        with self._lock:
            run.status = "in_progress"
            trees = {side: self._files_at(run.inputs.get(side, "")) for side in ("base", "head")}
        self._send(run, "in_progress")
        result = (run.runner or run.workflow.runner)(run.inputs, trees)
        if result is None:
            return  # it never finishes
        with self._lock:
            if isinstance(result, RunFailed):
                run.status, run.conclusion = "completed", "failure"
                run.log = "a step failed"
            else:
                self._upload(run, result)
        self._send(run, "completed")

    def _upload(self, run: WorkflowRun, result: dict[str, Any] | bytes) -> None:
        """`run` ends `success`, having uploaded `result` (under the lock)."""
        if isinstance(result, bytes):
            archive, run.log = result, f"uploaded {len(result)} bytes"
        else:
            archive = _zipped({"result.json": json.dumps(result).encode()})
            run.log = json.dumps(result, indent=2)
        run.artifact = (next(self._ids), archive)
        run.status, run.conclusion = "completed", "success"

    def _files_at(self, sha: str) -> dict[str, str]:
        for repo in self._repos.values():
            commit = repo.commits.get(sha)
            if commit is not None:
                flat = self._flatten(commit.tree)
                return {path: self._blobs[blob].decode() for path, (_, _, blob) in flat.items()}
        return {}

    def _send(self, run: WorkflowRun, action: str) -> None:
        with self._lock:
            sink = self._sink
            installation = next(
                (i for i, repos in self._installations.items() if run.repo in repos), None
            )
            payload = {
                "action": action,
                "workflow_run": _run_json(self.base_url, run),
                "workflow": _workflow_json(run.workflow),
                "repository": self._repo_json(self._repos[run.repo].full_name),
                "installation": {"id": installation},
                "sender": {"login": run.actor[0], "type": run.actor[1]},
            }
        if sink is not None:
            sink("workflow_run", payload)


def _check_inputs(workflow: Workflow, inputs: Any, docs: str) -> None:
    if not isinstance(inputs, dict):
        raise _error(422, "Invalid request: inputs is not an object", docs)
    unexpected = sorted(set(inputs) - set(workflow.inputs))
    if unexpected:
        raise _error(422, f"Unexpected inputs provided: {json.dumps(unexpected)}", docs)
    if len(inputs) > MAX_INPUTS:
        raise _error(422, f"you may only define up to {MAX_INPUTS} inputs", docs)
    if sum(len(str(v)) for v in inputs.values()) > MAX_INPUT_CHARS:
        raise _error(422, "inputs are too large", docs)
    for name, spec in workflow.inputs.items():
        if spec.get("required") and name not in inputs:
            raise _error(422, f"Required input '{name}' not provided", docs)


def _workflow_json(workflow: Workflow) -> dict[str, Any]:
    return {
        "id": workflow.id,
        "node_id": f"W_{workflow.id}",
        "name": workflow.name,
        "path": workflow.path,
        "state": "active",
        "created_at": _now(),
        "updated_at": _now(),
    }


def _run_json(base_url: str, run: WorkflowRun) -> dict[str, Any]:
    url = f"{base_url}/repos/{run.repo}/actions/runs/{run.id}"
    login, kind = run.actor
    actor = _user(login, kind, _Base._user_id(login))
    return {
        "id": run.id,
        "name": run.workflow.name,
        "display_title": run.title,
        "head_branch": run.branch,
        "head_sha": run.head_sha,
        "path": run.workflow.path,
        "event": run.event,
        "actor": actor,
        "triggering_actor": actor,
        "html_url": f"https://github.com/{run.repo}/actions/runs/{run.id}",
        "status": run.status,
        "conclusion": run.conclusion,
        "workflow_id": run.workflow.id,
        "url": url,
        "logs_url": f"{url}/logs",
        "artifacts_url": f"{url}/artifacts",
        "created_at": run.created_at,
        "updated_at": _now(),
    }


def _artifact_json(base_url: str, run: WorkflowRun) -> dict[str, Any]:
    assert run.artifact is not None
    artifact_id, data = run.artifact
    url = f"{base_url}/repos/{run.repo}/actions/artifacts/{artifact_id}"
    return {
        "id": artifact_id,
        "node_id": f"A_{artifact_id}",
        "name": ARTIFACT,
        "size_in_bytes": len(data),
        "url": url,
        "archive_download_url": f"{url}/zip",
        "expired": False,
        "created_at": _now(),
        "expires_at": None,
        "updated_at": _now(),
        "workflow_run": {"id": run.id, "head_branch": run.branch, "head_sha": run.head_sha},
    }


def _zipped(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()
