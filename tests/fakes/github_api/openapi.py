"""GitHub's REST description, as far as the fake GitHub serves it: which of GitHub's operations
a request is, and whether its JSON body fits that operation's request-body schema.

The operations are an extract of GitHub's own OpenAPI description, vendored in
`tests/fixtures/github-rest/` (its README says where it comes from and how
`extract.py` there regenerates it; nothing here reaches the network). The fake checks every
request against it as it answers (`FakeGitHub._answer`), so the whole suite checks what
Tiebreak sends:

* a body that does not fit the operation's schema is answered 422, as GitHub answers, and
  noted in the fake's `problems`, so the test that sent it fails with the operation, the path
  and the schema's complaint;
* a field the schema does not have is noted in `problems` too, though GitHub ignores it
  rather than refuse the body: a field GitHub ignores is one Tiebreak sends for nothing;
* a route answered (anything but 404) that is no operation of the extract nor one of the
  routes in `NOT_REST` is noted in `problems`.

The description is OpenAPI 3.0; its schemas become JSON Schema 2020-12 here (`nullable`
becomes a `null` type, and every object whose properties are listed is closed with
`unevaluatedProperties`, which sees through GitHub's `oneOf`/`anyOf`/`allOf`), validated by
`jsonschema`.
"""

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from tests.fakes.app_manifests import NEW_APP
from tests.fakes.github_api.actions import DOWNLOAD
from tests.fakes.github_api.archives import CODELOAD

EXTRACT = Path(__file__).resolve().parents[2] / "fixtures" / "github-rest" / "operations.json"

Route = tuple[str, re.Pattern[str]]
"""A route the fake answers: its method and the pattern its path fully matches."""

GRAPHQL: Route = ("POST", re.compile(r"/graphql"))
CODELOAD_DOWNLOAD: Route = ("GET", re.compile(rf"{CODELOAD}/.+"))

NOT_REST: Mapping[Route, str] = {
    GRAPHQL: "GitHub's GraphQL API: one endpoint for every query, which GitHub's REST "
    "description does not describe; the fake parses the two queries Tiebreak sends itself "
    "(graphql.py, blobs.py)",
    ("POST", NEW_APP): "GitHub's web page that registers an App from its manifest: a "
    "browser's form posts there (`tiebreak setup`), not an API client",
    CODELOAD_DOWNLOAD: "where a tarball's 302 points: GitHub serves archives from "
    "codeload.github.com, outside its API, with a token in the URL and no Authorization",
    ("GET", DOWNLOAD): "where an artifact's or a run log's 302 points: GitHub serves them "
    "from its storage host, outside its API, through a short-lived signed URL",
}
"""The routes the fake answers that are not operations of GitHub's REST API, and why."""

_PARAMETER = re.compile(r"\{(?P<name>[^}]+)\}")
_GROUP = re.compile(r"\(\?P<\w+>[^()]*\)")
_OPTIONAL = re.compile(r"\(\?:([^()]*)\)\?")
_MAX_MESSAGE = 300
_MAX_SHOWN = 80


@dataclass(frozen=True, slots=True, eq=False)
class Operation:
    """One operation of GitHub's description: its method, path template and request body."""

    method: str
    path: str
    operation_id: str
    documentation: str
    multi_segment: frozenset[str]
    """Path parameters that may span segments (GitHub's `x-multi-segment`: a ref, a path)."""
    body_required: bool
    body_schema: dict[str, Any] | None
    """The JSON request body's schema as GitHub describes it; None: the operation takes none."""
    pattern: re.Pattern[str] = field(init=False)
    """The paths the template names."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", template_pattern(self.path, self.multi_segment))

    @property
    def literal(self) -> int:
        """How much of the template is literal: the more specific wins a tie."""
        return len(_PARAMETER.sub("", self.path))

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.operation_id})"


def template_pattern(template: str, multi_segment: Iterable[str] = ()) -> re.Pattern[str]:
    """The pattern of the paths a template names: a parameter is one segment unless GitHub
    marks it multi-segment."""
    spanning = set(multi_segment)
    parts: list[str] = []
    position = 0
    for match in _PARAMETER.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        parts.append(".+" if match["name"] in spanning else "[^/]+")
        position = match.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts))


def sample_path(pattern: re.Pattern[str]) -> str:
    """A path a route of the fake answers: each named group `1`, each optional part present
    (the fake's patterns are plain enough for that)."""
    text = _OPTIONAL.sub(r"\1", _GROUP.sub("1", pattern.pattern))
    path = re.sub(r"\\(.)", r"\1", text)
    if not pattern.fullmatch(path):
        raise ValueError(f"no sample path for the route {pattern.pattern!r}")
    return path


def find(operations: Iterable[Operation], method: str, path: str) -> Operation | None:
    """The operation `method path` is, the most specific if several templates match."""
    matching = [op for op in operations if op.method == method and op.pattern.fullmatch(path)]
    return max(matching, key=lambda op: op.literal, default=None)


def listed(route: Route) -> str | None:
    """Why the route is none of GitHub's REST operations, if `NOT_REST` lists it."""
    method, pattern = route
    for (listed_method, listed_pattern), why in NOT_REST.items():
        if listed_method == method and listed_pattern.pattern == pattern.pattern:
            return why
    return None


def not_rest(method: str, path: str) -> str | None:
    """Why the route `method path` is none of GitHub's REST operations, if it is listed."""
    for (listed, pattern), why in NOT_REST.items():
        if listed == method and pattern.fullmatch(path):
            return why
    return None


class Description:
    """The operations of the extract, and the checks of a request against them."""

    def __init__(self, operations: Iterable[Operation]) -> None:
        self.operations = tuple(operations)
        self._validators = {
            op: Draft202012Validator(json_schema(op.body_schema))
            for op in self.operations
            if op.body_schema is not None
        }

    def find(self, method: str, path: str) -> Operation | None:
        return find(self.operations, method, path)

    def body_problems(self, operation: Operation, body: Any) -> tuple[list[str], list[str]]:
        """What GitHub refuses in `body` (a 422), and the fields it would ignore."""
        if body is None:
            return (["the body is missing"] if operation.body_required else []), []
        validator = self._validators.get(operation)
        if validator is None:
            return ["the operation takes no body"], []
        refused: list[str] = []
        ignored: list[str] = []
        for error in validator.iter_errors(body):
            said = _said(error)
            (ignored if error.validator == "unevaluatedProperties" else refused).append(said)
        return refused, ignored

    def route_problem(self, method: str, path: str, status: int) -> str | None:
        """Why the fake should not have answered `method path` (None: it is GitHub's)."""
        if status == 404 or self.find(method, path) is not None or not_rest(method, path):
            return None
        return (
            f"{method} {path} was answered {status}, but it is no operation of GitHub's REST "
            f"description ({EXTRACT.parent.name}/{EXTRACT.name}) nor a route listed in "
            "NOT_REST (tests/fakes/github_api/openapi.py) with the reason it is not GitHub's"
        )


@cache
def description() -> Description:
    """The vendored extract, read once."""
    return Description(operation(entry) for entry in load_extract()["operations"])


def load_extract() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(EXTRACT.read_text())
    return loaded


def operation(entry: Mapping[str, Any]) -> Operation:
    """An operation as the extract stores it."""
    body = entry["requestBody"]
    return Operation(
        method=entry["method"],
        path=entry["path"],
        operation_id=entry["operationId"],
        documentation=entry["documentation"],
        multi_segment=frozenset(entry["multiSegment"]),
        body_required=bool(body and body["required"]),
        body_schema=body["schema"] if body else None,
    )


def json_schema(schema: Any, *, refinement: bool = False) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema 2020-12, each object whose properties it lists
    closed to others. A `refinement` is a branch of a combinator whose parent lists
    properties of its own: the parent closes the object, so the branch does not (and its
    `additionalProperties: true`, a no-op in OpenAPI, would count every field as seen)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    nullable = out.pop("nullable", False)
    if "properties" in out:
        out["properties"] = {name: json_schema(s) for name, s in out["properties"].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = json_schema(out[key])
    lists_properties = "properties" in out
    for key in ("oneOf", "anyOf", "allOf"):
        if key in out:
            # allOf's branches are parts of one object: none is whole by itself.
            partial = lists_properties or key == "allOf"
            out[key] = [json_schema(branch, refinement=partial) for branch in out[key]]
    if refinement:
        if out.get("additionalProperties") is True:
            del out["additionalProperties"]
    elif (lists_properties or "allOf" in out) and "additionalProperties" not in out:
        out["unevaluatedProperties"] = False
    return _nullable(out) if nullable else out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema.get("type"), str):
        schema["type"] = [schema["type"], "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def _said(error: ValidationError) -> str:
    """One complaint of the schema: where it is in the body and what it says."""
    said = f"at {_where(error)}: {_complaint(error)}"
    if error.context:
        closest = best_match(error.context)
        said += f" (closest: at {_where(closest)}: {_complaint(closest)})"
    return said


def _where(error: ValidationError) -> str:
    return "/".join(str(part) for part in error.absolute_path) or "the body"


def _complaint(error: ValidationError) -> str:
    # jsonschema quotes the value it refuses whole: a review's body could fill a screen.
    value, limit = error.instance, error.validator_value
    match error.validator:
        case "maxItems" | "minItems" if isinstance(value, list):
            return f"{len(value)} items, where GitHub takes {error.validator} {limit}"
        case "maxLength" | "minLength" if isinstance(value, str):
            return f"{len(value)} characters, where GitHub takes {error.validator} {limit}"
        case "enum":
            return f"{_shown(value)} is not one of {json.dumps(limit)}"
        case "type":
            return f"{_shown(value)} is not of type {json.dumps(limit)}"
        case "oneOf" | "anyOf":
            return f"{_shown(value)} fits none of the shapes GitHub takes ({error.validator})"
    return error.message if len(error.message) <= _MAX_MESSAGE else _shown(error.message)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"
