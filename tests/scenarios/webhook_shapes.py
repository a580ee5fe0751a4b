"""Whether a webhook delivery a test builds carries what Tiebreak reads where GitHub's own
example of that event carries it.

What Tiebreak reads of a payload is the narrow model its handler parses it into
(`app.events`): every field of it, at any depth, is a path read. A delivery of an event and
action the App handles must have, on each of those paths, the key GitHub's example of that
event has there (the example of the same action, or every example of the event when the
fixtures have none for the action), with a value of the same JSON type (null matches any). A
path GitHub's example lacks (`before` outside `synchronize`, `installation` in a repository's
`workflow_run`) is not asked for.

`tests.scenarios.webhooks.signed` checks every delivery a test signs, so the whole suite
checks its payload builders as it runs.
"""

import json
import types
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from app.events import (
    CheckRunPayload,
    CheckSuitePayload,
    InstallationPayload,
    IssueCommentPayload,
    PullRequestPayload,
    ReviewCommentPayload,
    WorkflowRunPayload,
)
from app.web.dispatch import Delivery
from app.web.handlers import ROUTER

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "github-webhooks"

READ_AS: dict[str, type[BaseModel]] = {
    "pull_request": PullRequestPayload,
    "issue_comment": IssueCommentPayload,
    "pull_request_review_comment": ReviewCommentPayload,
    "check_run": CheckRunPayload,
    "check_suite": CheckSuitePayload,
    "installation": InstallationPayload,
    "installation_repositories": InstallationPayload,
    "workflow_run": WorkflowRunPayload,
}
"""The model each event the App handles is parsed into (its handler's `delivery.parse`)."""

Path_ = tuple[str, ...]
"""Keys from the payload's top, `[]` for each item of a list."""


def handled(event: str, action: str | None) -> bool:
    """Whether the App answers `event` with `action` with a handler (which parses it)."""
    delivery = Delivery(id="", event=event, action=action, body=b"")
    return ROUTER.handler(delivery) is not None


@cache
def read_paths(model: type[BaseModel]) -> list[Path_]:
    """Every path the model reads, its nested models' fields included."""
    paths: list[Path_] = []
    for name, field in model.model_fields.items():
        key = (field.alias or name,)
        paths.append(key)
        for nested, prefix in _models_in(field.annotation):
            paths += [key + prefix + path for path in read_paths(nested)]
    return paths


def _models_in(annotation: Any) -> Iterator[tuple[type[BaseModel], Path_]]:
    """The models an annotation holds, each with `[]` per list it is inside."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation, ()
        return
    origin = get_origin(annotation)
    if origin is list:
        for nested, prefix in _models_in(get_args(annotation)[0]):
            yield nested, ("[]", *prefix)
    elif origin in (Union, types.UnionType):
        for argument in get_args(annotation):
            yield from _models_in(argument)


@cache
def examples(event: str, action: str | None) -> dict[str, dict[str, Any]]:
    """GitHub's examples of `event` for `action`, or all of the event's if none is; by file."""
    files = sorted((FIXTURES / event).glob("*.json"))
    loaded = {f"{event}/{path.name}": json.loads(path.read_text()) for path in files}
    same = {name: example for name, example in loaded.items() if example.get("action") == action}
    return same or loaded


def mismatches(event: str, payload: dict[str, Any]) -> list[str]:
    """Where `payload` lacks, or holds a value of another type than, what GitHub's examples
    carry on a path Tiebreak reads; empty for an event or action the App does not handle."""
    model = READ_AS.get(event)
    action = payload.get("action")
    if model is None or not isinstance(action, str) or not handled(event, action):
        return []
    found: list[str] = []
    for name, example in examples(event, action).items():
        for path in read_paths(model):
            expected = _at(example, path)
            if expected is None:
                continue
            given = _at(payload, path)
            dotted = ".".join(path)
            if given is None:
                found.append(f"{event} {action}: no {dotted}, which GitHub's {name} has")
                continue
            types_expected = {_json_type(v) for v in expected if v is not None}
            for value in given:
                if value is not None and types_expected and _json_type(value) not in types_expected:
                    found.append(
                        f"{event} {action}: {dotted} is a {_json_type(value)}, where GitHub's "
                        f"{name} has a {' or '.join(sorted(types_expected))}"
                    )
    return sorted(set(found))


def _at(document: Any, path: Path_) -> list[Any] | None:
    """The values on `path` (a list's items each), or None where a key is missing."""
    if not path:
        return [document]
    head, rest = path[0], path[1:]
    if head == "[]":
        if not isinstance(document, list):
            return None
        values: list[Any] = []
        for item in document:
            found = _at(item, rest)
            if found is None:
                return None
            values += found
        return values
    if not isinstance(document, dict) or head not in document:
        return None
    if document[head] is None and rest:
        return []  # nothing below a null (an issue that is no pull request's)
    return _at(document[head], rest)


def _json_type(value: Any) -> str:
    match value:
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case dict():
            return "object"
    return "null"
