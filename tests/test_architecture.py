"""The architecture page names every module of the App, the debate and its rules where its
package is described: a module it does not name there is a room nobody drew on the map."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
MODULES = sorted(
    path.relative_to(ROOT)
    for package in ("app", "agents", "policies")
    for path in (ROOT / package).rglob("*.py")
    if path.name != "__init__.py"
)
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
