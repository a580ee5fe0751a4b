"""The config file's reference, generated from `RepoConfig`: a JSON Schema and a docs section.

Both are written by `tiebreak config-docs` and compared by `tiebreak config-docs --check`, so
the documentation cannot drift from the model: a new field shows up by itself, with its type,
default, bounds and docstring.
"""

import inspect
import json
from collections.abc import Iterator, Sequence
from enum import Enum
from pathlib import Path
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from policies.config import CONFIG_PATH, RepoConfig

ROOT = Path(__file__).resolve().parents[2]
"""The project root, the directory holding pyproject.toml."""
SCHEMA_PATH = Path("docs/config.schema.json")
REFERENCE_PATH = Path("docs/configuration.md")
REFERENCE_START = "<!-- config-reference:start -->"
REFERENCE_END = "<!-- config-reference:end -->"

_NOUNS = {bool: "boolean", int: "integer", float: "number", str: "string"}
_SEQUENCES = (tuple, list, set, frozenset, Sequence)
_BOUNDS = {"ge": "at least", "gt": "above", "le": "at most", "lt": "below"}


def schema_text() -> str:
    """The JSON Schema of the config file, as `docs/config.schema.json` holds it."""
    schema = RepoConfig.model_json_schema()
    schema.pop("title", None)
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:tiebreak:repo-config",
        "title": f"Tiebreak repository config ({CONFIG_PATH})",
        **schema,
    }
    return json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def reference_markdown(model: type[BaseModel] = RepoConfig) -> str:
    """The reference of `model` as Markdown, one table per section, as docs/ holds it."""
    lines = [
        "<!-- Generated from policies/config.py by `tiebreak config-docs`; edit the model,"
        " not this section. -->",
        "",
    ]
    lines += _section(model, prefix="", depth=0, about=None)
    return "\n".join(lines).rstrip() + "\n"


def page_with_reference(page: str) -> str:
    """`page` with the generated reference between its markers."""
    start, end = page.find(REFERENCE_START), page.find(REFERENCE_END)
    if start < 0 or end < start:
        raise ValueError(
            f"{REFERENCE_PATH} has no {REFERENCE_START} ... {REFERENCE_END} markers"
            " to put the reference in"
        )
    head, tail = page[: start + len(REFERENCE_START)], page[end:]
    return f"{head}\n\n{reference_markdown()}\n{tail}"


def generated_files(root: Path = ROOT) -> dict[Path, str]:
    """What each generated file should hold, by path relative to `root`."""
    page = (root / REFERENCE_PATH).read_text(encoding="utf-8")
    return {SCHEMA_PATH: schema_text(), REFERENCE_PATH: page_with_reference(page)}


def stale_files(root: Path = ROOT) -> list[Path]:
    """The generated files under `root` that are missing or out of date."""
    return [path for path, text in generated_files(root).items() if not _holds(root / path, text)]


def write_files(root: Path = ROOT) -> list[Path]:
    """Brings the generated files under `root` up to date; the ones that changed."""
    changed = []
    for path, text in generated_files(root).items():
        if not _holds(root / path, text):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


def _holds(path: Path, text: str) -> bool:
    return path.is_file() and path.read_text(encoding="utf-8") == text


def _section(model: type[BaseModel], prefix: str, depth: int, about: str | None) -> list[str]:
    lines: list[str] = []
    if prefix:
        lines += [f"{'#' * min(2 + depth, 6)} `{prefix.rstrip('.')}`", ""]
    doc = inspect.getdoc(model) if model.__doc__ else about
    for paragraph in (doc or "").split("\n\n"):
        lines += [_one_line(paragraph), ""] if paragraph.strip() else []
    leaves = [(n, f) for n, f in model.model_fields.items() if _nested(f) is None]
    if leaves:
        lines += ["| option | type | default | meaning |", "|---|---|---|---|"]
        lines += [_row(prefix + name, field) for name, field in leaves]
        lines.append("")
    for name, field in model.model_fields.items():
        if (nested := _nested(field)) is not None:
            lines += _section(nested, f"{prefix}{name}.", depth + 1, field.description)
    return lines


def _nested(field: FieldInfo) -> type[BaseModel] | None:
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _row(name: str, field: FieldInfo) -> str:
    if field.is_required():
        default = "required"
    else:
        value = to_jsonable_python(field.get_default(call_default_factory=True))
        default = _code(json.dumps(value, ensure_ascii=False))
    cells = [_code(name), _words(field.annotation, field.metadata), default]
    cells.append(_one_line(field.description or ""))
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _words(annotation: Any, metadata: Sequence[object] = (), plural: bool = False) -> str:
    """A type in plain words, with the bounds its metadata sets."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _words(args[0], [*annotation.__metadata__, *metadata], plural)
    if origin in (Union, UnionType):
        present = [a for a in args if a is not NoneType]
        words = " or ".join(_words(a, metadata, plural) for a in present)
        return f"{words}, or `null`" if len(present) < len(args) else words
    choices: Sequence[object] = ()
    if origin is Literal:
        choices = args
    elif isinstance(annotation, type) and issubclass(annotation, Enum):
        choices = [member.value for member in annotation]
    if choices:
        return "one of " + ", ".join(_code(json.dumps(c)) for c in choices)
    if origin in _SEQUENCES and args:
        item = _words(args[0], plural=True)
        listed = f"list, each {item}" if item.startswith("one of") else f"list of {item}"
        return listed + "".join(_bounds(metadata))
    noun = _NOUNS.get(annotation, getattr(annotation, "__name__", str(annotation)))
    return noun + ("s" if plural else "") + "".join(_bounds(metadata))


def _bounds(metadata: Sequence[object]) -> Iterator[str]:
    """Words for the constraints pydantic enforces (`Field(ge=..., le=...)`, patterns, lengths)."""
    found: dict[str, Any] = {}
    for item in metadata:
        for key in ("pattern", "ge", "gt", "le", "lt", "min_length", "max_length"):
            if getattr(item, key, None) is not None:
                found[key] = getattr(item, key)
    if "pattern" in found:
        yield f" matching {_code(str(found['pattern']))}"
    if "ge" in found and "le" in found:
        yield f", from {found['ge']} to {found['le']}"
    elif bounds := [f"{_BOUNDS[k]} {found[k]}" for k in _BOUNDS if k in found]:
        yield ", " + " and ".join(bounds)
    if "min_length" in found:
        yield f", length at least {found['min_length']}"
    if "max_length" in found:
        yield f", length at most {found['max_length']}"


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _one_line(text: str) -> str:
    return " ".join(text.split())
