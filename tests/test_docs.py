"""The README, the front page: its links lead somewhere and the Python it names is the one tested.

The pages under `docs/` are checked by `mkdocs build --strict` (links and anchors), which
`.ci/run` runs; the README is outside the site, so its links are checked here.
"""

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from markdown_it import MarkdownIt

from tests.scenarios.environments import uv

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


def shell_blocks(section: str) -> list[list[str]]:
    """The commands of each `sh` block under the README's heading `section`."""
    tokens = MarkdownIt().parse(README.read_text(encoding="utf-8"))
    blocks: list[list[str]] = []
    inside = False
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            inside = tokens[i + 1].content == section
        elif inside and token.type == "fence" and token.info == "sh":
            blocks.append([line for line in token.content.splitlines() if line.strip()])
    return blocks


def test_the_readme_s_install_gives_a_tiebreak_that_reviews_a_diff_outside_the_clone(
    tmp_path: Path,
) -> None:
    """The front page's first commands, run as written in the clone (into a tool directory of
    the test's own; the install resolves against the package index, as a user's does, within
    the lock's pins), put a `tiebreak` on the PATH that works in any directory: a diff piped to
    it there is planned (`--dry-run`, no key)."""
    install, review = shell_blocks("Review a pull request in 60 seconds")
    assert any("uv tool install" in line for line in install)
    assert any("tiebreak review -" in line for line in review)
    bin_dir = tmp_path / "bin"
    env = {
        **os.environ,
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(bin_dir),
        "UV_PYTHON": sys.executable,
        "UV_PYTHON_DOWNLOADS": "never",
    }
    written = ROOT / "tiebreak-constraints.txt"
    try:
        for line in install:
            done = subprocess.run(
                line.replace("uv ", f"{uv()} ", 1), shell=True, cwd=ROOT, env=env,
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert done.returncode == 0, f"{line}: {done.stderr}"
    finally:
        written.unlink(missing_ok=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    diff = "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    env = {k: v for k, v in env.items() if not k.startswith(("UV", "VIRTUAL_ENV"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"
    env.pop("ANTHROPIC_API_KEY", None)
    planned = subprocess.run(
        ["tiebreak", "review", "--dry-run", "-"], input=diff, cwd=elsewhere, env=env,
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    assert "calc.py" in planned.stdout
