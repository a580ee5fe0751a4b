"""The fake GitHub's check runs: created on a commit it knows, updated with the statuses and
conclusions an App may set (a refused update changing nothing), the output's annotations
checked and appended and its actions checked, and every create or update kept in the
run's history; listed for a commit, newest first, filtered as GitHub's query asks.
"""

import copy
import json
from typing import Any

from tests.fakes.github_api.base import _Base
from tests.fakes.github_api.constants import (
    _CHECKS_DOCS,
    ACTION_LIMITS,
    ANNOTATION_LEVELS,
    CHECK_CONCLUSIONS,
    CHECK_STATUSES,
    MAX_ACTIONS,
    MAX_ANNOTATIONS,
    MAX_OUTPUT_TEXT,
)
from tests.fakes.github_api.records import CheckRun
from tests.fakes.github_api.state import (
    _Answer,
    _error,
    _invalid,
    _not_found,
    _now,
    _object_body,
    _Repo,
    _Request,
)


class _CheckRuns(_Base):
    """The check runs endpoints."""

    def _check_run(self, repo: _Repo, run_id: str) -> CheckRun:
        run = repo.check_runs.get(int(run_id))
        if run is None:
            raise _not_found(f"{_CHECKS_DOCS}#get-a-check-run")
        return run

    def _get_check_run(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        return _Answer(200, self._check_run_json(repo, self._check_run(repo, params["id"])))

    def _list_check_runs(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_CHECKS_DOCS}#list-check-runs-for-a-git-reference"
        ref = params["ref"]
        sha = repo.branches.get(ref.removeprefix("heads/"), ref)
        if sha not in repo.commits:
            raise _error(422, f"No commit found for SHA: {ref}", docs)
        query = request.query
        if query.get("filter", "latest") not in ("latest", "all"):
            raise _invalid("filter must be one of latest, all.", docs)
        # Every check run here is the one App's: its installations' tokens made them.
        app_id = query.get("app_id")
        runs = sorted(
            (
                run
                for run in repo.check_runs.values()
                if run.head_sha == sha
                and query.get("check_name") in (None, run.name)
                and query.get("status") in (None, run.status)
                and app_id in (None, self.app_id)
            ),
            key=lambda run: -run.id,
        )
        if query.get("filter", "latest") == "latest":
            # Unverified on GitHub: the latest is taken as the newest run of each name.
            newest = {run.name: run for run in reversed(runs)}
            runs = [run for run in runs if newest[run.name] is run]
        page = self._page(request, [self._check_run_json(repo, run) for run in runs])
        return _Answer(
            200, {"total_count": len(runs), "check_runs": page.body}, headers=page.headers
        )

    def _create_check_run(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_CHECKS_DOCS}#create-a-check-run"
        body = _object_body(request, docs)
        for key in ("name", "head_sha"):
            if not isinstance(body.get(key), str) or not body[key]:
                raise _invalid(f'"{key}" wasn\'t supplied.', docs)
        if body["head_sha"] not in repo.commits:
            raise _error(422, f"No commit found for SHA: {body['head_sha']}", docs)
        run = CheckRun(
            id=next(self._ids),
            repo=repo.full_name,
            name=body["name"],
            head_sha=body["head_sha"],
            status="queued",
            conclusion=None,
            external_id=None,
            details_url=None,
            started_at=_now(),
            completed_at=None,
            output={"title": None, "summary": None, "text": None},
            annotations=[],
            actions=[],
        )
        self._apply_check_run(run, body, docs)
        repo.check_runs[run.id] = run
        return _Answer(201, self._record_check_run(repo, run))

    def _update_check_run(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_CHECKS_DOCS}#update-a-check-run"
        run = self._check_run(repo, params["id"])
        body = _object_body(request, docs)
        if "name" in body and (not isinstance(body["name"], str) or not body["name"]):
            raise _invalid("For 'properties/name', it must be a non-empty string.", docs)
        # Validated on a copy: a refused update changes nothing.
        updated = copy.deepcopy(run)
        if "name" in body:
            updated.name = body["name"]
        self._apply_check_run(updated, body, docs)
        repo.check_runs[run.id] = updated
        return _Answer(200, self._record_check_run(repo, updated))

    def _apply_check_run(self, run: CheckRun, body: dict[str, Any], docs: str) -> None:
        status, conclusion = body.get("status"), body.get("conclusion")
        if status is not None and status not in CHECK_STATUSES:
            raise _invalid(
                f"For 'properties/status', {json.dumps(status)} is not one of "
                f"{json.dumps(list(CHECK_STATUSES))}.",
                docs,
            )
        if conclusion is not None and conclusion not in CHECK_CONCLUSIONS:
            raise _invalid(
                f"For 'properties/conclusion', {json.dumps(conclusion)} is not one of "
                f"{json.dumps(list(CHECK_CONCLUSIONS))}.",
                docs,
            )
        if body.get("completed_at") is not None and conclusion is None:
            raise _invalid('"conclusion" wasn\'t supplied.', docs)
        if status == "completed" and conclusion is None and run.conclusion is None:
            raise _invalid('"conclusion" wasn\'t supplied.', docs)
        for key in ("details_url", "external_id", "started_at"):
            if key in body:
                setattr(run, key, body[key])
        if conclusion is not None:
            # A conclusion completes the run whatever status was sent.
            run.status, run.conclusion = "completed", conclusion
            run.completed_at = body.get("completed_at") or _now()
        elif status is not None:
            run.status = status
            if status != "completed":
                # Unverified on GitHub: a run sent back to queued/in_progress is taken as
                # reopened, so a stale conclusion cannot linger beside the new status.
                run.conclusion = run.completed_at = None
        if "output" in body:
            self._apply_output(run, body["output"], docs)
        if "actions" in body:
            run.actions = _actions(body["actions"], docs)

    def _apply_output(self, run: CheckRun, output: Any, docs: str) -> None:
        if not isinstance(output, dict):
            raise _invalid("For 'properties/output', it is not an object.", docs)
        for key in ("title", "summary"):
            if not isinstance(output.get(key), str):
                raise _invalid(f'"{key}" wasn\'t supplied.', docs)
        for key in ("summary", "text"):
            value = output.get(key)
            if isinstance(value, str) and len(value) > MAX_OUTPUT_TEXT:
                raise _invalid(
                    f"For 'properties/{key}', it is longer than {MAX_OUTPUT_TEXT} characters.",
                    docs,
                )
        annotations = output.get("annotations") or []
        if not isinstance(annotations, list):
            raise _invalid("For 'properties/annotations', it is not an array.", docs)
        if len(annotations) > MAX_ANNOTATIONS:
            raise _invalid(
                f"For 'properties/annotations', {len(annotations)} items is more than the "
                f"maximum of {MAX_ANNOTATIONS}.",
                docs,
            )
        checked = [_annotation(a, docs) for a in annotations]
        run.output = {"title": output["title"], "summary": output["summary"]}
        run.output["text"] = output.get("text")
        run.annotations.extend(checked)

    def _record_check_run(self, repo: _Repo, run: CheckRun) -> dict[str, Any]:
        answer = self._check_run_json(repo, run)
        run.history.append({**copy.deepcopy(answer), "annotations": copy.deepcopy(run.annotations)})
        return answer

    def _check_run_json(self, repo: _Repo, run: CheckRun) -> dict[str, Any]:
        url = f"{self.base_url}/repos/{repo.full_name}/check-runs/{run.id}"
        return {
            "id": run.id,
            "node_id": f"CR_{run.id}",
            "name": run.name,
            "head_sha": run.head_sha,
            "external_id": run.external_id,
            "url": url,
            "html_url": f"https://github.com/{repo.full_name}/runs/{run.id}",
            "details_url": run.details_url,
            "status": run.status,
            "conclusion": run.conclusion,
            "started_at": run.started_at,
            "completed_at": run.completed_at,
            "output": {
                **run.output,
                "annotations_count": len(run.annotations),
                "annotations_url": f"{url}/annotations",
            },
            "check_suite": None,
            "app": None,
            "pull_requests": [],
            "actions": copy.deepcopy(run.actions),
        }


def _annotation(raw: Any, docs: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _invalid("For 'items', it is not an object.", docs)
    for key in ("path", "start_line", "end_line", "annotation_level", "message"):
        if raw.get(key) is None:
            raise _invalid(f'"{key}" wasn\'t supplied.', docs)
    if raw["annotation_level"] not in ANNOTATION_LEVELS:
        raise _invalid(
            f"For 'properties/annotation_level', {json.dumps(raw['annotation_level'])} is not "
            f"one of {json.dumps(list(ANNOTATION_LEVELS))}.",
            docs,
        )
    if raw["start_line"] > raw["end_line"]:
        raise _invalid("For 'properties/end_line', it is before start_line.", docs)
    has_columns = raw.get("start_column") is not None or raw.get("end_column") is not None
    if has_columns and raw["start_line"] != raw["end_line"]:
        raise _invalid("start_column and end_column are only allowed on a single line.", docs)
    if len(str(raw.get("title") or "")) > 255:
        raise _invalid("For 'properties/title', it is longer than 255 characters.", docs)
    return dict(raw)


def _actions(raw: Any, docs: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise _invalid("For 'properties/actions', it is not an array.", docs)
    if len(raw) > MAX_ACTIONS:
        raise _invalid(
            f"For 'properties/actions', {len(raw)} items is more than the maximum of "
            f"{MAX_ACTIONS}.",
            docs,
        )
    for action in raw:
        if not isinstance(action, dict):
            raise _invalid("For 'items', it is not an object.", docs)
        for key, limit in ACTION_LIMITS.items():
            value = action.get(key)
            if not isinstance(value, str):
                raise _invalid(f'"{key}" wasn\'t supplied.', docs)
            if len(value) > limit:
                raise _invalid(
                    f"For 'properties/{key}', it is longer than {limit} characters.", docs
                )
    return [dict(a) for a in raw]
