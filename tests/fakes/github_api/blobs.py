"""The fake GitHub's GraphQL query for files' texts: aliased `object(expression: $var)` fields
of a repository, each `... on Blob` with some of its fields, answered from the git store.

The query is parsed by strict regular expressions over the one shape Tiebreak sends —

    query($owner: String!, $name: String!, $e0: String!, …) {
      repository(owner: $owner, name: $name) {
        f0: object(expression: $e0) { ... on Blob { text isBinary isTruncated byteSize } }
        …
      }
    }

— and anything else in a query that asks for `object(` is an error (noted in `problems`), so
a test fails where the query changed rather than passing on a guess. Each expression comes
from a declared `String!` variable, never from the query's text. An expression is
`<commit or branch>:<path>`, as git's rev-parse reads it: a commit the repository lacks or a
path its snapshot lacks is null, a directory or a submodule is an object that is no Blob
(`{}`, the fragment not applying), and a blob has `text` (null unless it is UTF-8: then
`isBinary`; cut at `MAX_BLOB_TEXT` bytes, as GitHub cuts it), `isBinary`, `isTruncated` (the
text was cut) and `byteSize` (the whole blob's), as many as the query selects.
"""

import re
from typing import Any

from tests.fakes.github_api.constants import MAX_BLOB_TEXT
from tests.fakes.github_api.gitstore import _GitStore
from tests.fakes.github_api.state import _Repo

BLOB_FIELDS = frozenset({"text", "isBinary", "isTruncated", "byteSize"})
"""The Blob fields the fake answers."""

_QUERY = re.compile(
    r"\s*query\s*\((?P<definitions>[^)]*)\)\s*\{\s*"
    r"repository\s*\(\s*owner\s*:\s*\$(?P<owner>\w+)\s*,\s*name\s*:\s*\$(?P<name>\w+)\s*\)\s*"
    r"\{(?P<objects>[^{}]*(?:\{[^{}]*\{[^{}]*\}[^{}]*\}[^{}]*)*)\}\s*\}\s*",
)
_DEFINITION = re.compile(r"\s*\$(?P<name>\w+)\s*:\s*(?P<kind>\w+!?)\s*")
_OBJECT = re.compile(
    r"\s*(?P<alias>\w+)\s*:\s*object\s*\(\s*expression\s*:\s*\$(?P<variable>\w+)\s*\)\s*"
    r"\{\s*\.\.\.\s*on\s+Blob\s*\{(?P<fields>[\w\s]*)\}\s*\}\s*"
)


class _Blobs(_GitStore):
    """Files' texts by `object(expression:)`."""

    @staticmethod
    def _asks_for_objects(query: str) -> bool:
        return re.search(r"\bobject\s*\(", query) is not None

    def _objects(
        self, covered: frozenset[str], query: str, variables: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The `data` and the `errors` answering a query of aliased objects of a repository."""
        parsed = _QUERY.fullmatch(query)
        if parsed is None:
            return None, [_syntax_error("the query is not the shape the fake parses")]
        declared: dict[str, str] = {}
        for definition in parsed["definitions"].split(","):
            found = _DEFINITION.fullmatch(definition)
            if found is None:
                return None, [_syntax_error(f"unparsed variable definition {definition!r}")]
            declared[found["name"]] = found["kind"]
        objects = _parsed_objects(parsed["objects"])
        if objects is None:
            return None, [_syntax_error("unparsed objects in the repository's selection")]
        used = [parsed["owner"], parsed["name"], *(variable for _, variable, _ in objects)]
        errors = [_variable_error(name, declared.get(name), variables) for name in used]
        unknown = {f for _, _, fields in objects for f in fields} - BLOB_FIELDS
        errors += [_field_error(name) for name in sorted(unknown)]
        aliases = [alias for alias, _, _ in objects]
        if len(set(aliases)) < len(aliases):
            errors.append(_syntax_error("an alias is given twice"))
        errors = [error for error in errors if error]
        if errors:
            return None, errors
        owner, name = variables[parsed["owner"]], variables[parsed["name"]]
        key = f"{owner}/{name}".lower()
        repo = self._repos.get(key)
        if repo is None or key not in covered:
            message = f"Could not resolve to a Repository with the name '{owner}/{name}'."
            error = {"type": "NOT_FOUND", "path": ["repository"], "message": message}
            return {"repository": None}, [error]
        answered = {
            alias: self._object(repo, variables[variable], fields)
            for alias, variable, fields in objects
        }
        return {"repository": answered}, []

    def _object(self, repo: _Repo, expression: str, fields: list[str]) -> dict[str, Any] | None:
        revision, colon, path = expression.partition(":")
        commit = self._resolve(repo, revision)
        if commit is None:
            return None
        if not colon:
            return {}  # the commit itself: no Blob
        files = self._flatten(commit.tree)
        entry = files.get(path)
        if entry is None:
            inside = any(name.startswith(f"{path}/") for name in files)
            return {} if inside or not path else None  # a directory: a Tree
        _, kind, sha = entry
        if kind != "blob":
            return {}  # a submodule: a Commit
        content = self._blobs[sha]
        try:
            text: str | None = content.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        truncated = text is not None and len(content) > MAX_BLOB_TEXT
        if truncated:
            # Cut at a byte, as GitHub cuts: a character the cut splits is dropped.
            text = content[:MAX_BLOB_TEXT].decode("utf-8", errors="ignore")
        blob = {
            "text": text,
            "isBinary": text is None,
            "isTruncated": truncated,
            "byteSize": len(content),
        }
        return {field: blob[field] for field in fields}


def _parsed_objects(selection: str) -> list[tuple[str, str, list[str]]] | None:
    """(alias, variable, fields) of each object in the repository's selection; None unless the
    whole selection is such objects."""
    objects, position = [], 0
    while position < len(selection):
        found = _OBJECT.match(selection, position)
        if found is None or found.end() == position:
            return None
        objects.append((found["alias"], found["variable"], found["fields"].split()))
        position = found.end()
    return objects


def _variable_error(name: str, kind: str | None, variables: dict[str, Any]) -> dict[str, Any]:
    """GitHub's error for a variable used but not declared, or given a wrong value; {} if
    fine."""
    if kind is None:
        return {"message": f"Variable ${name} is used by anonymous query but not declared"}
    if kind != "String!":
        return {"message": f"Type mismatch on variable ${name} (the fake takes String!)"}
    value = variables.get(name)
    if isinstance(value, str):
        return {}
    explanation = "Expected value to not be null" if value is None else "Could not coerce value"
    return {
        "extensions": {"value": value, "problems": [{"path": [], "explanation": explanation}]},
        "message": f"Variable ${name} of type String! was provided invalid value",
    }


def _field_error(name: str) -> dict[str, Any]:
    return {"message": f"Field '{name}' doesn't exist on type 'Blob'"}


def _syntax_error(why: str) -> dict[str, Any]:
    return {"type": "FAKE_UNPARSED", "message": f"the fake GitHub could not parse: {why}"}
