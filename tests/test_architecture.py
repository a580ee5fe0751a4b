"""The architecture page names every module of the App, the debate and its rules where its
package is described: a module it does not name there is a room nobody drew on the map. And
each class of theirs has a name of its own: no two modules define a class of one name."""

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
SOURCES = sorted(
    path.relative_to(ROOT)
    for package in ("app", "agents", "policies")
    for path in (ROOT / package).rglob("*.py")
)
"""Every module of the App, the debate and its rules, the packages' `__init__.py` too."""
MODULES = [path for path in SOURCES if path.name != "__init__.py"]
HEADING = re.compile(r"\*\*`([\w/]+)/`(?: top level\.)?\*\*")
"""Where a package's description starts: **`app/jobs/`**, or **`app/` top level.**"""
_HEADINGS = list(HEADING.finditer(PAGE))
SECTIONS = {
    m[1]: PAGE[m.end() : nxt.start() if nxt else len(PAGE)]
    for m, nxt in zip(_HEADINGS, [*_HEADINGS[1:], None], strict=True)
}
"""Each described package's text, up to the next package's."""


def test_the_packages_have_modules_to_name() -> None:
    assert len(MODULES) > 100
    # Every package of the house has its own description; a subpackage of a described one
    # (the web server's handlers) may be told within its parent's.
    packages = {str(m.parent) for m in MODULES}
    undescribed = [p for p in packages if not _described(Path(p))]
    assert undescribed == []


@pytest.mark.parametrize("module", MODULES, ids=str)
def test_every_module_is_named_where_its_package_is_described(module: Path) -> None:
    package = _described(module.parent)
    assert package is not None, f"{module.parent} is not described on the page"
    assert f"`{module.name}`" in SECTIONS[package], f"{module} is not named under {package}/"


def _described(package: Path) -> str | None:
    """The nearest package, `package` or an ancestor of it, that the page describes."""
    for candidate in (package, *package.parents):
        if str(candidate) in SECTIONS:
            return str(candidate)
    return None


def test_no_class_name_is_defined_in_two_modules() -> None:
    # One name per thing: a class's name says what it is, so two modules that each define a
    # class of one name (private ones too) hold two things under one name, or one thing twice.
    defined: dict[str, list[str]] = defaultdict(list)
    for path in SOURCES:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=str(path))
        for name in _top_level_classes(tree.body):
            defined[name].append(str(path))
    twice = {name: modules for name, modules in defined.items() if len(modules) > 1}
    assert twice == {}


def _top_level_classes(body: list[ast.stmt]) -> Iterator[str]:
    """The classes a module defines at its top level, those inside its top-level `if`s,
    `try`s and `with`s too."""
    for statement in body:
        if isinstance(statement, ast.ClassDef):
            yield statement.name
        elif isinstance(statement, ast.If | ast.Try | ast.With):
            yield from _top_level_classes(statement.body)
            yield from _top_level_classes(getattr(statement, "orelse", []))
            if isinstance(statement, ast.Try):
                yield from _top_level_classes(statement.finalbody)
                for handler in statement.handlers:
                    yield from _top_level_classes(handler.body)
