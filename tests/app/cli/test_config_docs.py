"""The config reference and JSON Schema: generated from `RepoConfig`, and kept current."""

import json
import re
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.cli.config_docs import (
    REFERENCE_END,
    REFERENCE_PATH,
    REFERENCE_START,
    ROOT,
    SCHEMA_PATH,
    page_with_reference,
    reference_markdown,
    schema_text,
)
from policies.config import CONFIG_PATH, RepoConfig, parse_config

REGENERATE = "run `uv run tiebreak config-docs` and commit the result"


def leaf_options(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            yield from leaf_options(field.annotation, f"{prefix}{name}.")
        else:
            yield prefix + name


def readme() -> str:
    return (ROOT / REFERENCE_PATH).read_text(encoding="utf-8")


def rows(reference: str) -> dict[str, str]:
    """The reference's table rows, by the option they document."""
    return {
        line.split("`")[1]: line
        for line in reference.splitlines()
        if line.startswith("| `") and line.count("|") >= 5
    }


def cells(row: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]]


def test_the_schema_on_disk_is_current() -> None:
    on_disk = (ROOT / SCHEMA_PATH).read_text(encoding="utf-8")

    assert on_disk == schema_text(), f"{SCHEMA_PATH} is out of date: {REGENERATE}"


def test_the_readme_reference_is_current() -> None:
    section = readme().split(REFERENCE_START, 1)[1].split(REFERENCE_END, 1)[0]

    assert section.strip() == reference_markdown().strip(), (
        f"the config reference in {REFERENCE_PATH} is out of date: {REGENERATE}"
    )


def test_every_option_is_in_the_reference_by_its_dotted_name() -> None:
    documented = rows(reference_markdown())
    options = list(leaf_options(RepoConfig))

    assert sorted(documented) == sorted(options)
    assert {"enabled", "paths.include", "models.tester", "debate.max_rounds"} <= set(options)


@pytest.mark.parametrize(
    ("option", "type_words", "default"),
    [
        ("enabled", "boolean", "`true`"),
        ("paths.include", "list of strings", '`["**"]`'),
        ("paths.exclude", "list of strings", "`[]`"),
        ("max_inline_comments", "integer, from 0 to 100", "`10`"),
        ("min_severity", 'one of `"blocker"`, `"major"`, `"minor"`, `"nit"`', '`"nit"`'),
        ("triggers", 'list, each one of `"opened"`, `"reopened"`', '`["opened", "reopened"'),
        ("models.tester", "string matching `^(?:[a-z0-9]", "`null`"),
        ("debate.token_ceiling", "integer, at least 10000", "`400000`"),
        ("debate.budget_growth", "number, from 1.0 to 4.0", "`1.5`"),
    ],
)
def test_a_row_gives_the_type_bounds_and_default(
    option: str, type_words: str, default: str
) -> None:
    name, type_cell, default_cell, meaning = cells(rows(reference_markdown())[option])

    assert name == f"`{option}`"
    assert type_cell.startswith(type_words)
    assert default_cell.startswith(default)
    assert meaning


def test_a_description_is_the_field_docstring_on_one_line() -> None:
    row = rows(reference_markdown())["triggers"]

    assert row.endswith(
        "| Pull request events that start a review automatically. `/tiebreak review` works"
        " whatever this says; an empty list means reviews only on request. |"
    )


class _Inner(BaseModel):
    """Inner things."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    depth: int = Field(default=2, gt=0, lt=10)
    """How deep | how far."""


class _Outer(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    mode: Literal["a", "b"] | None = None
    """The mode."""

    code: Annotated[str, StringConstraints(pattern=r"^x+$", max_length=5)] = "xx"
    """A code."""

    inner: _Inner = _Inner()
    """The inner section."""

    tags: list[str] = Field(default_factory=lambda: ["t"])
    """Tags."""


def test_a_model_is_documented_field_by_field_with_nested_sections() -> None:
    reference = reference_markdown(_Outer)

    assert list(rows(reference)) == ["mode", "code", "tags", "inner.depth"]
    assert '| `mode` | one of `"a"`, `"b"`, or `null` | `null` | The mode. |' in reference
    assert '| `code` | string matching `^x+$`, length at most 5 | `"xx"` | A code. |' in reference
    assert '| `tags` | list of strings | `["t"]` | Tags. |' in reference
    assert "### `inner`\n\nInner things.\n\n" in reference
    assert r"| `inner.depth` | integer, above 0 and below 10 | `2` | How deep \| how far. |" in (
        reference
    )


def test_the_readme_example_is_a_valid_config() -> None:
    after = readme().split(f"```yaml\n# {CONFIG_PATH}\n", 1)[1]
    example = after.split("\n```", 1)[0]

    config, problems = parse_config(example)

    assert problems == []
    assert config != RepoConfig()


def test_the_reference_goes_between_the_markers_only() -> None:
    text = f"# Title\n\n{REFERENCE_START}\nstale text\n{REFERENCE_END}\n\nAfter.\n"

    updated = page_with_reference(text)

    assert updated.startswith(f"# Title\n\n{REFERENCE_START}\n\n<!-- Generated")
    assert updated.endswith(f"|\n\n{REFERENCE_END}\n\nAfter.\n")
    assert "stale text" not in updated
    assert page_with_reference(updated) == updated


@pytest.mark.parametrize(
    "text",
    ["no markers", f"{REFERENCE_START} but no end", f"{REFERENCE_END} before {REFERENCE_START}"],
)
def test_a_readme_without_markers_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="config-reference:start"):
        page_with_reference(text)


def objects(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema object with properties, nested or under $defs."""
    if isinstance(schema, dict):
        if "properties" in schema:
            yield schema
        for value in schema.values():
            yield from objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from objects(value)


def test_the_schema_describes_the_model() -> None:
    schema = json.loads(schema_text())

    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == f"Tiebreak repository config ({CONFIG_PATH})"
    assert list(schema["properties"]) == list(RepoConfig.model_fields)
    assert {
        name: prop["default"] for name, prop in schema["properties"].items()
    } == RepoConfig().model_dump(mode="json")
    assert schema_text() == schema_text()


def test_the_schema_refuses_unknown_keys_everywhere() -> None:
    schema = json.loads(schema_text())
    sections = list(objects(schema))

    assert {s["title"] for s in sections} >= {"Paths", "Models", "DebatePolicy", "PathInstruction"}
    for section in [schema, *sections]:
        assert section["additionalProperties"] is False, section.get("title")
        # An option may be left out; an item of a list (a path instruction, a learning) says what
        # it must hold.
        required = set(section.get("required", []))
        items = {"PathInstruction": {"path", "instructions"}, "LearnedRule": {"rule"}}
        assert required == items.get(section["title"], set())
        assert all(
            "default" in prop
            for name, prop in section["properties"].items()
            if name not in required
        )
