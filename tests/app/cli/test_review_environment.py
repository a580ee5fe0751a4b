"""`tiebreak review --verify` runs a project's tests with the project's own environment, never
Tiebreak's: the real command, as a process, against a local fake of the Messages API, on small
real projects, in bubblewrap's real sandbox.

Tiebreak installed as `uv tool install .` installs it has an environment of its own, without
pytest: the project's `.venv` holding pytest proves its regression and verifies the fix, and a
project whose environment cannot run a test is stopped before any model is asked anything.
In Tiebreak's development checkout, its own packages (its `tests`, its `click`) are no more
importable by a test than its tools are on the `PATH`."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.app.verification.conftest import needs_bwrap
from tests.fakes.messages_api import FakeMessagesAPI, QueuedResponder
from tests.kits.shared import made_once
from tests.scenarios import click_copy
from tests.scenarios.debates import accept, answers, concede, evaluations, finding, report
from tests.scenarios.environments import tool_install
from tests.scenarios.shop import BUG_LINE, FIX, REPRODUCTION, make_project

pytestmark = needs_bwrap

README_COMMAND = "python -m pytest -x -q {test}"
"""The command the README gives."""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
SHOP = "shop/cart.py"
TIEBREAK_CHECKOUT = Path(__file__).resolve().parents[3]
REVIEW_IMPORTS = "import app.cli.reviewing, agents.models.claude"
"""Most of what `tiebreak review` imports before its first model call: its command's module
and the model's SDK."""


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`tiebreak` as `uv tool install .` installs it, found on the PATH as uv links it: one
    installation for the whole run, which its workers share, with the bytecode a review's
    modules write as they are first imported (a person's first review writes it; here each
    test would otherwise time the writing as its own, some 3 s)."""

    def install(directory: Path) -> None:
        command = tool_install(directory / "tool")
        subprocess.run(
            [directory / "tool" / "bin" / "python", "-c", REVIEW_IMPORTS],
            env={"PATH": SYSTEM_PATH},
            check=True,
        )
        (directory / "local-bin").mkdir()
        (directory / "local-bin" / "tiebreak").symlink_to(command)

    return made_once(tmp_path_factory, "tool-install", install) / "local-bin"


def development() -> Path:
    """`tiebreak` in Tiebreak's development checkout: its environment has pytest, and its
    source (with its own `tests` package) on its path."""
    return TIEBREAK_CHECKOUT / ".venv" / "bin" / "tiebreak"


def proven_and_fixed(
    path: str, line: int, claim: str, test: dict[str, Any], fix: dict[str, Any]
) -> dict[str, list[dict[str, Any]]]:
    """A script whose tester proves one finding with `test`, whose coder concedes `fix` and
    whose tester accepts it."""
    return {
        "report_findings": [report({**finding(line, claim, path=path), "reproduction": test})],
        "answer_findings": [answers(concede("F1", fix))],
        "evaluate_answers": [evaluations(accept("F1"))],
    }


SHOP_SCRIPT = proven_and_fixed(
    SHOP, BUG_LINE, "The first price is skipped.", REPRODUCTION.model_dump(), FIX.model_dump()
)


def scripted(script: dict[str, list[dict[str, Any]]]) -> FakeMessagesAPI:
    """The Messages API answering `script`; what it was not scripted for is asserted after
    what the review showed (`problems`), so that a failure says what the review did."""
    return FakeMessagesAPI(QueuedResponder(**script), strict=False)


def review(
    api: FakeMessagesAPI,
    checkout: Path,
    diff: str,
    *args: str,
    path: str,
    tiebreak: str = "tiebreak",
) -> subprocess.CompletedProcess[str]:
    """`tiebreak review` of `diff` in `checkout` with `args`, the PATH `path` (where
    `tiebreak` is found), as a person's shell would run it."""
    change = checkout.parent / "change.diff"
    change.write_text(diff)
    home = checkout.parent / "home"
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [tiebreak, "review", str(change), "--repo", str(checkout), "--json", *args],
        cwd=checkout,
        capture_output=True,
        text=True,
        env={
            "PATH": path,
            "HOME": str(home),
            "ANTHROPIC_API_KEY": api.api_key,
            "ANTHROPIC_BASE_URL": api.base_url,
            "TIEBREAK_ENV_FILE": "",
        },
        timeout=300,
        check=False,
    )


def the_finding(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    (unit,) = json.loads(done.stdout)["units"]
    (ended,) = unit["findings"]
    found: dict[str, Any] = ended
    return found


def test_after_a_plain_install_the_projects_environment_proves_the_regression(
    installed: Path, tmp_path: Path
) -> None:
    project = make_project(tmp_path)

    with scripted(SHOP_SCRIPT) as api:
        done = review(
            api,
            project.checkout,
            project.diff.text,
            "--verify", README_COMMAND, "--base", project.base,
            path=f"{installed}:{SYSTEM_PATH}",
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    ended = the_finding(done)
    assert ended["verification"]["verdict"] == "reproduced", ended["verification"]
    assert "assert 7 == 12" in ended["verification"]["output_tail"]
    assert (ended["resolution"], ended["fix_verified"]) == ("fixed", True)
    assert api.problems == []


def test_without_pytest_anywhere_the_review_stops_before_any_model_call(
    installed: Path, tmp_path: Path
) -> None:
    project = make_project(tmp_path, pytest=False)

    with scripted(SHOP_SCRIPT) as api:
        done = review(
            api,
            project.checkout,
            project.diff.text,
            "--verify", README_COMMAND,
            path=f"{installed}:{SYSTEM_PATH}",
        )  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert api.requests == []
    last = done.stderr.splitlines()[-1]
    assert last.startswith("tiebreak: the project's environment cannot run its tests"), last
    assert "No module named pytest" in last
    assert ".venv" in last
    assert done.stdout == ""


@pytest.mark.parametrize("sandbox", [True, False], ids=["bwrap", "no-sandbox"])
def test_tests_without_an_init_import_the_projects_helpers(sandbox: bool, tmp_path: Path) -> None:
    project = make_project(tmp_path)
    uses_helpers = {
        "path": "tests/test_two_items.py",
        "content": "from shop.cart import total\nfrom tests.helpers import TWO_ITEMS\n\n\n"
        "def test_two_items():\n    assert total(TWO_ITEMS) == 12\n",
    }
    script = proven_and_fixed(SHOP, BUG_LINE, "The first price is skipped.", uses_helpers,
                              FIX.model_dump())  # fmt: skip

    with scripted(script) as api:
        done = review(
            api,
            project.checkout,
            project.diff.text,
            "--verify", README_COMMAND, "--base", project.base,
            *(() if sandbox else ("--no-sandbox",)),
            path=SYSTEM_PATH,
            tiebreak=str(development()),
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    ended = the_finding(done)
    assert ended["verification"]["verdict"] == "reproduced", ended["verification"]
    assert (ended["resolution"], ended["fix_verified"]) == ("fixed", True)
    assert api.problems == []


def test_a_src_layout_copy_of_a_package_tiebreak_uses_is_the_one_tested(tmp_path: Path) -> None:
    project = click_copy.make_click_copy(tmp_path)
    script = proven_and_fixed(
        click_copy.PATH,
        click_copy.BUG_LINE,
        "Bytes are no longer decoded.",
        click_copy.REPRODUCTION.model_dump(),
        click_copy.FIX.model_dump(),
    )

    with scripted(script) as api:
        done = review(
            api,
            project.checkout,
            project.diff.text,
            "--verify", README_COMMAND, "--base", project.base,
            path=SYSTEM_PATH,
            tiebreak=str(development()),
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    ended = the_finding(done)
    assert ended["verification"]["verdict"] == "reproduced", ended["verification"]
    assert "b'caf" in ended["verification"]["output_tail"]
    assert (ended["resolution"], ended["fix_verified"]) == ("fixed", True)
    assert api.problems == []


def test_without_a_sandbox_an_editable_install_of_the_checkout_is_refused(tmp_path: Path) -> None:
    project = click_copy.make_click_copy(tmp_path)

    with scripted({}) as api:
        done = review(
            api,
            project.checkout,
            project.diff.text,
            "--verify", README_COMMAND, "--no-sandbox",
            path=SYSTEM_PATH,
            tiebreak=str(development()),
        )  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert api.requests == []
    last = done.stderr.splitlines()[-1]
    assert last.startswith("tiebreak: the project's environment cannot run its tests"), last
    assert "click" in last
    assert "editable" in last


def test_a_tests_colours_reach_neither_the_json_nor_the_agents(tmp_path: Path) -> None:
    project = make_project(tmp_path)

    with scripted(SHOP_SCRIPT) as api:
        done = review(
            api,
            project.checkout,
            project.diff.text,
            "--verify", "python -m pytest -x -q --color=yes {test}", "--base", project.base,
            path=SYSTEM_PATH,
            tiebreak=str(development()),
        )  # fmt: skip
        sent = [json.dumps(r.body) for r in api.requests]

    assert done.returncode == 0, done.stderr
    ended = the_finding(done)
    assert "assert 7 == 12" in ended["verification"]["output_tail"]
    assert "\\u001b" not in done.stdout
    assert "\x1b" not in done.stdout
    assert all("\\u001b" not in body for body in sent)
    assert api.problems == []
