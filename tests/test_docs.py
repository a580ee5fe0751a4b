"""The README, the front page: its links lead somewhere and the Python it names is the one tested.

The pages under `docs/` are checked by `mkdocs build --strict` (links and anchors), which
`.ci/run` runs; the README is outside the site, so its links are checked here.
"""

import re
import sys
import tomllib
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def slug(heading: str) -> str:
    """The anchor GitHub and MkDocs give a heading."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    tokens = MarkdownIt().parse(page.read_text(encoding="utf-8"))
    return {
        slug(tokens[i + 1].content)
        for i, token in enumerate(tokens)
        if token.type == "heading_open"
    }


def links(page: Path) -> list[str]:
    targets = []
    for token in MarkdownIt().parse(page.read_text(encoding="utf-8")):
        for child in token.children or []:
            if child.type == "link_open":
                targets.append(str(child.attrs["href"]))
    return targets


def test_every_link_of_the_readme_leads_to_a_file_and_heading_that_exist() -> None:
    local = [link for link in links(README) if "://" not in link]
    assert local, "the README links to no page of its documentation"
    for link in local:
        path, _, anchor = link.partition("#")
        target = ROOT / path if path else README
        assert target.is_file(), f"the README links to {link}, which is not a file"
        if anchor:
            assert anchor in anchors(target), f"the README links to {link}: no such heading"


def test_the_readme_fits_on_a_few_screens() -> None:
    """Its prose wrapped, its table's rows short enough to read without scrolling sideways."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    assert max(map(len, lines)) <= 160


def supported_versions() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    prefix = "Programming Language :: Python :: "
    versions = [c.removeprefix(prefix) for c in project["classifiers"] if c.startswith(prefix)]
    return [v for v in versions if v.count(".") == 1]


def test_the_readme_names_the_python_versions_the_package_declares() -> None:
    text = README.read_text(encoding="utf-8")
    named = sorted(set(re.findall(r"Python (3\.\d+)", text)))
    assert named == supported_versions()


def test_the_tests_run_on_a_python_the_package_declares() -> None:
    """What CI runs on is a version the README promises: CI proves each one it states."""
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in supported_versions()
