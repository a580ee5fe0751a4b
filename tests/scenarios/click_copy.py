"""A src-layout project named `click`, as Tiebreak depends on one: a small copy of the layout of
pallets/click, its package under `src/`, installed in its own `.venv` in editable mode as its
developers install it (`pip install -e .`), its tests in `tests/` without `__init__.py`.

Its head brings a bug into `click.utils.make_str`: bytes are no longer decoded. Tiebreak's own
`click` has that function right, so a test that imported Tiebreak's `click` instead of the
project's would pass at the head and show nothing.
"""

from dataclasses import dataclass
from pathlib import Path

from agents.diff import Diff
from agents.protocol import Patch, Reproduction
from tests.scenarios.environments import install_editable, with_pytest
from tests.scenarios.shop import git

PYPROJECT = """\
[project]
name = "click"
version = "8.99.0"
requires-python = ">=3.11"

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
"""
UTILS_BASE = '''\
"""Small utilities."""


def make_str(value):
    """The value as a string, bytes decoded."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
'''
BUG_LINE = 7
"""The line of `src/click/utils.py` the head breaks."""
UTILS_HEAD = UTILS_BASE.replace('value.decode("utf-8", "replace")', "str(value)")
OWN_TEST = """\
from click.utils import make_str


def test_a_number_is_made_a_string():
    assert make_str(1) == "1"
"""
PATH = "src/click/utils.py"
REPRODUCTION = Reproduction(
    path="tests/test_bytes_are_decoded.py",
    content=(
        "from click.utils import make_str\n\n\n"
        "def test_bytes_are_decoded():\n"
        "    assert make_str(b'caf\\xc3\\xa9') == 'caf\\xe9'\n"
    ),
)
FIX = Patch(path=PATH, start_line=BUG_LINE, end_line=BUG_LINE,
            replacement='        return value.decode("utf-8", "replace")')  # fmt: skip


@dataclass(frozen=True)
class ClickCopy:
    checkout: Path
    base: str
    diff: Diff


def make_click_copy(root: Path) -> ClickCopy:
    """The project at `root` (new), checked out at its head, installed in its `.venv`."""
    checkout = root / "click"
    (checkout / "src" / "click").mkdir(parents=True)
    (checkout / "tests").mkdir()
    (checkout / "pyproject.toml").write_text(PYPROJECT)
    (checkout / "src" / "click" / "__init__.py").write_text('"""A copy of click."""\n')
    (checkout / "src" / "click" / "utils.py").write_text(UTILS_BASE)
    (checkout / "tests" / "test_utils.py").write_text(OWN_TEST)
    (checkout / ".gitignore").write_text("__pycache__/\n")
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "make_str decodes bytes")
    base = git(checkout, "rev-parse", "HEAD").strip()
    (checkout / PATH).write_text(UTILS_HEAD)
    git(checkout, "commit", "-q", "-am", "make_str is simpler")
    install_editable(with_pytest(checkout), checkout)
    return ClickCopy(checkout, base, Diff.parse(git(checkout, "diff", base, "HEAD")))
