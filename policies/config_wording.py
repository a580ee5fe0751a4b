"""What is wrong with a config file, in words: pydantic's errors told as sentences.

Every problem a config's values can have is worded here, from pydantic's error `type` and the
annotation of the option it is about: `paths.exclude must be a list of globs`, not `Input
should be a valid tuple`. An option whose value has a shape a type does not say (a login, a
label, a list of globs) carries a :class:`Shape` in its annotation, which names it. An unknown
key is answered with the nearest known key at its level, or, for a key of another reviewer's
config, with Tiebreak's equivalent (:mod:`policies.foreign_keys`). A bot named without its
`[bot]` in `ignore_authors` is warned about.
"""

import difflib
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic_core import ErrorDetails

from policies.foreign_keys import foreign_hint


@dataclass(frozen=True)
class Shape:
    """What an option's value must be, in words (`a list of globs`), put in its annotation."""

    words: str


@dataclass(frozen=True)
class _Field:
    annotation: Any
    metadata: tuple[Any, ...]


def problem_words(model: type[BaseModel], error: ErrorDetails, path: str) -> str:
    """The sentence for `error`, one of pydantic's errors in validating `model`, about the
    option written `path` in the file."""
    kind, loc, ctx = error["type"], tuple(error["loc"]), error.get("ctx") or {}
    if kind == "extra_forbidden":
        return _unknown_key(model, loc, path, error["input"])
    field = _field_at(model, loc)
    what = _shape(field) if field is not None else None
    if kind == "missing":
        return f"{path} is required"
    if kind in {"value_error", "assertion_error"}:
        return f"{path}: {_reason(error['msg'])}"
    if kind == "bool_type" and isinstance(error["input"], str):
        return _quoted_boolean(path, error["input"])
    if kind in _WORDED:
        return f"{path} must be {_WORDED[kind]}{_bounds(field)}, not {_value(error['input'])}"
    if kind in _BOUNDS:
        number = "a whole number" if _is(field, int) else "a number"
        return f"{path} must be {number}{_bounds(field)}, not {error['input']!r}"
    if kind in {"literal_error", "enum"}:
        return f"{path} must be one of {ctx.get('expected')}, not {error['input']!r}"
    if kind in _SHAPED:
        return f"{path} must be {what or _SHAPED[kind]}"
    if kind in {"too_short", "too_long"}:
        limit = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        most = "at least" if kind == "too_short" else "at most"
        return f"{path} must list {most} {limit} {_items(limit)}"
    if kind in {"string_too_short", "string_too_long"}:
        limit = ctx.get("min_length") if kind == "string_too_short" else ctx.get("max_length")
        most = "at least" if kind == "string_too_short" else "at most"
        return f"{path} must be {most} {limit:,} character{'' if limit == 1 else 's'} long"
    if kind == "string_pattern_mismatch":
        shape = what or f"text matching {ctx.get('pattern')}"
        return f"{path} must be {shape}, not {error['input']!r}"
    if kind == "string_type":
        return f"{path} must be {what or 'text'}, not {error['input']!r}"
    return f"{path}: {_reason(error['msg'])}"


_WORDED = {
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
}
_KEYS_SHOWN = 4
_BOUNDS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}
_SHAPED = {
    "tuple_type": "a list",
    "list_type": "a list",
    "iterable_type": "a list",
    "dict_type": "a mapping of options",
    "model_type": "a mapping of options",
    "model_attributes_type": "a mapping of options",
}


_BOOLEANS = dict.fromkeys(("true", "yes", "on", "1"), "true") | dict.fromkeys(
    ("false", "no", "off", "0"), "false"
)
"""Text that reads like a boolean, and the boolean its writer likely meant."""
_VALUE_CHARS = 60


def _quoted_boolean(path: str, text: str) -> str:
    said = f"{path} must be true or false, not the text {_value(text)}"
    meant = _BOOLEANS.get(text.strip().lower())
    return f"{said}; did you mean {meant} (without quotes)?" if meant else said


def _value(value: Any) -> str:
    """`value` as the file had it, shortened: a mapping or a long text would hide the rule."""
    shown = repr(value)
    return shown if len(shown) <= _VALUE_CHARS else shown[: _VALUE_CHARS - 1] + "…"


def _unknown_key(model: type[BaseModel], loc: tuple[Any, ...], path: str, value: Any) -> str:
    hint = foreign_hint(tuple(str(p) for p in loc if not isinstance(p, int)), value)
    if hint is not None:
        return f"{path} is not a Tiebreak option: {hint}"
    parent = _field_at(model, loc[:-1])
    known = _fields(parent.annotation) if parent is not None else {}
    close = difflib.get_close_matches(str(loc[-1]), list(known), n=1, cutoff=0.6)
    suggestion = f"; did you mean {'.'.join([*path.split('.')[:-1], close[0]])}?" if close else ""
    return f"{path} is not a Tiebreak option{suggestion}"


def _field_at(model: type[BaseModel], loc: Sequence[Any]) -> _Field | None:
    """The annotation of the option at `loc`, its `Annotated` metadata gathered, or None when
    `loc` leads through no model field (a union pydantic names by its branch)."""
    field = _Field(model, ())
    for key in loc:
        inner = _unwrapped(field).annotation
        fields = _fields(inner)
        if isinstance(key, str) and key in fields:
            info = fields[key]
            field = _unwrapped(_Field(info.annotation, tuple(info.metadata)))
        elif isinstance(key, int) and get_origin(inner) in {tuple, list}:
            field = _unwrapped(_Field(get_args(inner)[0], ()))
        else:
            return None
    return _unwrapped(field)


def _unwrapped(field: _Field) -> _Field:
    """`field` without `Annotated` (its metadata kept) and without `| None`."""
    annotation, metadata = field.annotation, field.metadata
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation, *extra = get_args(annotation)
            metadata = (*metadata, *extra)
        elif origin in {Union, types.UnionType}:
            options = [a for a in get_args(annotation) if a is not type(None)]
            if len(options) != 1:
                return _Field(annotation, metadata)
            annotation = options[0]
        else:
            return _Field(annotation, metadata)


def _fields(annotation: Any) -> dict[str, Any]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return dict(annotation.model_fields)
    return {}


def _shape(field: _Field) -> str | None:
    shapes = [m.words for m in field.metadata if isinstance(m, Shape)]
    if shapes:
        return shapes[-1]
    fields = _fields(field.annotation)
    if fields:
        # A long list of keys would hide the sentence; docs/configuration.md lists them.
        keys = f" with the keys {', '.join(fields)}" if len(fields) <= _KEYS_SHOWN else ""
        return f"a mapping of options{keys}"
    if get_origin(field.annotation) in {tuple, list}:
        item = _shape(_unwrapped(_Field(get_args(field.annotation)[0], ())))
        return f"a list, each item {item}" if item else None
    if get_origin(field.annotation) is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(field.annotation))
    return None


def _is(field: _Field | None, kind: type) -> bool:
    return field is not None and field.annotation is kind


def _bounds(field: _Field | None) -> str:
    """`field`'s bounds as words (` from 0 to 100`), when its annotation sets some."""
    if field is None:
        return ""
    low = next((_low(m) for m in field.metadata if _low(m) is not None), None)
    high = next((_high(m) for m in field.metadata if _high(m) is not None), None)
    if low is not None and high is not None:
        return f" from {low:,} to {high:,}"
    if low is not None:
        return f" of at least {low:,}"
    return f" of at most {high:,}" if high is not None else ""


def _low(metadata: Any) -> Any:
    if isinstance(metadata, annotated_types.Ge):
        return metadata.ge
    return metadata.gt if isinstance(metadata, annotated_types.Gt) else None


def _high(metadata: Any) -> Any:
    if isinstance(metadata, annotated_types.Le):
        return metadata.le
    return metadata.lt if isinstance(metadata, annotated_types.Lt) else None


def _items(count: Any) -> str:
    return "item" if count == 1 else "items"


def _reason(message: str) -> str:
    """A validator's own message, without pydantic's prefix."""
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    return message


_BOTS = {"dependabot", "renovate", "github-actions", "dependabot-preview", "snyk-bot", "copilot"}


def unmarked_bots(logins: Sequence[str]) -> list[tuple[str, tuple[str, int]]]:
    """Warnings on `ignore_authors` entries that name a bot without its `[bot]`, each with
    the option it is about: GitHub gives an app's pull requests the author
    `dependabot[bot]`, so `dependabot` ignores nobody."""
    return [
        (
            f"ignore_authors.{i}: {login!r} looks like a bot; its pull requests are opened "
            f"as {login}[bot], which this entry does not ignore",
            ("ignore_authors", i),
        )
        for i, login in enumerate(logins)
        if not login.lower().endswith("[bot]")
        and (login.lower() in _BOTS or login.lower().endswith("bot"))
    ]
