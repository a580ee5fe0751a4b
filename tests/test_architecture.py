"""The architecture page names every module of the App, the debate and its rules: a module it
does not name is a room nobody drew on the map."""

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


def test_the_packages_have_modules_to_name() -> None:
    assert len(MODULES) > 100


@pytest.mark.parametrize("module", MODULES, ids=str)
def test_every_module_is_named_on_the_architecture_page(module: Path) -> None:
    # Named by its file name where its package is described, or by its path.
    assert f"`{module.name}`" in PAGE or str(module) in PAGE, f"{module} is not on the page"
