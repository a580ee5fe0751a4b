"""The fake GitHub's labels: a repository's labels (names case-insensitive, creating an
existing one refused with `already_exists`) and the labels on an issue or pull request (a
missing one created grey when added, removing one the issue lacks a 404).
"""

import json
import re
from typing import Any
from urllib.parse import quote

from tests.fakes.github_api.base import _Base
from tests.fakes.github_api.constants import _LABELS_DOCS, AUTO_LABEL_COLOR, MAX_LABEL_DESCRIPTION
from tests.fakes.github_api.records import Label
from tests.fakes.github_api.state import (
    _Answer,
    _error,
    _invalid,
    _not_found,
    _object_body,
    _Repo,
    _Request,
)


class _Labels(_Base):
    """The labels endpoints."""

    def _label_json(self, repo: _Repo, label: Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "node_id": f"LA_{label.id}",
            "url": f"{self.base_url}/repos/{repo.full_name}/labels/{quote(label.name, safe='')}",
            "name": label.name,
            "color": label.color,
            "default": False,
            "description": label.description,
            # Required (if null) by the 2026-03-10 schema githubkit validates against.
            "archived_at": None,
            "archived_by": None,
        }

    def _list_labels(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        return self._page(request, [self._label_json(repo, x) for x in repo.labels.values()])

    def _get_label(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        label = repo.labels.get(params["name"].lower())
        if label is None:
            raise _not_found(f"{_LABELS_DOCS}#get-a-label")
        return _Answer(200, self._label_json(repo, label))

    def _create_label(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_LABELS_DOCS}#create-a-label"
        body = _object_body(request, docs)
        name, color = body.get("name"), body.get("color", AUTO_LABEL_COLOR)
        description = body.get("description")
        if not isinstance(name, str) or not name.strip():
            raise _invalid('"name" wasn\'t supplied.', docs)
        errors: list[dict[str, Any]] = []
        if not isinstance(color, str) or not re.fullmatch(r"[0-9a-fA-F]{6}", color):
            errors.append({"resource": "Label", "code": "invalid", "field": "color"})
        if description is not None and (
            not isinstance(description, str) or len(description) > MAX_LABEL_DESCRIPTION
        ):
            errors.append(
                {
                    "resource": "Label",
                    "code": "custom",
                    "field": "description",
                    "message": "description is too long (maximum is 100 characters)",
                }
            )
        if name.lower() in repo.labels:
            errors.append({"resource": "Label", "code": "already_exists", "field": "name"})
        if errors:
            raise _error(422, "Validation Failed", docs, errors)
        label = Label(next(self._ids), name, str(color).lower(), description)
        repo.labels[name.lower()] = label
        return _Answer(201, self._label_json(repo, label))

    def _list_issue_labels(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        pull = self._pull(repo, params["number"])
        return self._page(request, [self._label_json(repo, repo.labels[k]) for k in pull.labels])

    def _add_issue_labels(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{_LABELS_DOCS}#add-labels-to-an-issue"
        pull = self._pull(repo, params["number"])
        body = request.body
        # GitHub takes {"labels": [...]}, a bare list, and names or {"name": ...} objects.
        raw = body.get("labels") if isinstance(body, dict) else body
        if not isinstance(raw, list):
            raise _invalid("For 'properties/labels', it is not an array.", docs)
        names: list[str] = []
        for item in raw:
            name = item.get("name") if isinstance(item, dict) else item
            if not isinstance(name, str) or not name.strip():
                raise _invalid(f"For 'items', {json.dumps(item)} is not a label name.", docs)
            names.append(name)
        for name in names:
            key = name.lower()
            if key not in repo.labels:
                # Undocumented but observed: a missing label is created, grey, undescribed.
                repo.labels[key] = Label(next(self._ids), name, AUTO_LABEL_COLOR, None)
            if key not in pull.labels:
                pull.labels.append(key)
        return _Answer(200, [self._label_json(repo, repo.labels[k]) for k in pull.labels])

    def _remove_issue_label(
        self, request: _Request, repo: _Repo, params: dict[str, str]
    ) -> _Answer:
        pull = self._pull(repo, params["number"])
        key = params["name"].lower()
        if key not in pull.labels:
            raise _error(
                404, "Label does not exist", f"{_LABELS_DOCS}#remove-a-label-from-an-issue"
            )
        pull.labels.remove(key)
        return _Answer(200, [self._label_json(repo, repo.labels[k]) for k in pull.labels])
