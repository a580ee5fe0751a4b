"""The workflow template repositories add to run findings' tests in their own Actions: the
test's content reaches its file as data, whatever it holds, and no shell ever reads an input."""

import json
from pathlib import Path

import pytest

from agents.verification import Evidence
from app.verification.preflight import NAME
from app.verification.workflow import WorkflowResult, environment_inputs, shown, without_preflight
from tests.kits.workflow import run_step, run_template, steps, template
from tests.scenarios.polyglot import GO_COMMAND, GO_MOD, needs_go, needs_node

HOSTILE = (
    "import os\n"
    "# $(touch pwned-dollar) `touch pwned-backtick` ${HOME} $((1+1))\n"
    "x = '$(touch pwned-single)'\n"
    'y = "$(touch pwned-double)"; z = "\\"; touch pwned-quote; \\""\n'
    "w = '''\n'; touch pwned-newline; '\n'''\n"
    "v = '${{ github.token }} %s %d \\\\n'\n"
    "assert not os.path.exists('pwned')\n"
)

TEST = "from rates import rate\nassert rate() == 1\n"
RATE_1, RATE_2 = "def rate():\n    return 1\n", "def rate():\n    return 2\n"


def inputs(
    content: str, *, path: str = "tests/test_bug.py", patches: str = "", checked: str = ""
) -> dict[str, str]:
    """A dispatch's inputs; `checked`, the config's command the environment is checked with
    (none by default)."""
    return {
        "token": "tok",
        "base": "b" * 40,
        "head": "a" * 40,
        "test_path": path,
        "test_content": content,
        "command": f"python3 {path}",
        "setup": "",
        "patches": patches,
        **(environment_inputs(checked) if checked else {"environment_check": ""}),
    }


def write_step() -> dict[str, object]:
    (step,) = [s for s in steps() if s.get("name") == "Write the test"]
    return step


def test_no_run_script_of_the_template_expands_an_expression() -> None:
    scripts = [str(step["run"]) for step in steps() if "run" in step]

    assert len(scripts) >= 3
    for script in scripts:
        assert "${{" not in script
    assert template()["permissions"] == {"contents": "read"}
    for step in steps():
        uses = str(step.get("uses", ""))
        if uses:
            # Pinned by a full commit sha, and no checkout keeps the token.
            assert len(uses.split("@")[1]) == 40
        if uses.startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


@pytest.mark.parametrize("content", [HOSTILE, "$(touch pwned)", "`touch pwned`", "'\"\n\n"])
def test_the_test_is_written_as_given_and_nothing_in_it_runs(tmp_path: Path, content: str) -> None:
    workspace = tmp_path / "work"
    (workspace / "head").mkdir(parents=True)
    (workspace / "base").mkdir()

    assert run_step(write_step(), workspace, inputs(content)) == 0

    for side in ("head", "base"):
        assert (workspace / side / "tests/test_bug.py").read_text() == content
    made = sorted(p.name for p in tmp_path.rglob("*") if "pwned" in p.name)
    assert made == []


@pytest.mark.parametrize(
    "path", ["../outside.py", "/tmp/outside.py", "tests/../../outside.py", "./x.py", ""]
)
def test_a_test_path_outside_the_checkout_is_refused(tmp_path: Path, path: str) -> None:
    workspace = tmp_path / "work"
    (workspace / "head").mkdir(parents=True)

    assert run_step(write_step(), workspace, inputs("x = 1\n", path=path)) != 0

    assert sorted(p.name for p in tmp_path.rglob("*.py")) == []


def test_a_test_that_fails_at_the_head_and_passes_at_the_base(tmp_path: Path) -> None:
    trees = {"head": {"rates.py": RATE_2}, "base": {"rates.py": RATE_1}}

    result = run_template(tmp_path / "work", inputs(HOSTILE + TEST, path="test_rate.py"), trees)

    assert result is not None
    assert result["token"] == "tok"
    assert result["head"]["exit_code"] == 1
    assert "AssertionError" in result["head"]["output_tail"]
    assert result["base"]["exit_code"] == 0
    assert sorted(p.name for p in tmp_path.rglob("*") if "pwned" in p.name) == []


def test_output_that_is_not_utf_8_is_kept_with_its_bytes_replaced(tmp_path: Path) -> None:
    """A test printing raw bytes still gives its result, not a run that uploads none."""
    printing = "import sys\nsys.stdout.buffer.write(b'price \\xff\\n')\nsys.exit(3)\n"
    trees = {"head": {"rates.py": RATE_2}, "base": {"rates.py": RATE_1}}

    result = run_template(tmp_path / "work", inputs(printing, path="test_rate.py"), trees)

    assert result is not None
    for side in ("head", "base"):
        assert result[side]["exit_code"] == 3
        assert result[side]["output_tail"] == "price \ufffd\n"


REWRITES_BASE = (
    "import pathlib\n"
    "base = pathlib.Path(__file__).resolve().parent.parent / 'base' / 'rates.py'\n"
    "if base.exists():\n"
    "    base.write_text('def rate():\\n    return 3\\n')\n"
)


@pytest.mark.parametrize("setup", ["", "python3 -c 'import rates'"], ids=["test", "setup"])
def test_the_heads_code_cannot_change_the_base_its_test_is_compared_with(
    tmp_path: Path, setup: str
) -> None:
    """Code of the pull request's, run by its setup or by its test, that would rewrite the
    base's tree: the base ran before it, as it is, its tree gone by then, and the finding is
    proven."""
    trees = {"head": {"rates.py": REWRITES_BASE + RATE_2}, "base": {"rates.py": RATE_1}}
    given = {**inputs(TEST, path="test_rate.py"), "setup": setup}

    result = run_template(tmp_path / "work", given, trees)

    assert result is not None
    assert result["head"]["exit_code"] == 1
    assert result["base"] == {"exit_code": 0, "output_tail": "", "error": None}
    ran = shown("test_rate.py", given["command"], False, WorkflowResult.model_validate(result))
    assert ran.verification is not None
    assert ran.verification.verdict == Evidence.REPRODUCED
    assert not (tmp_path / "work/base").exists()


def test_a_fix_is_applied_at_the_head_and_the_base_is_not_run(tmp_path: Path) -> None:
    fix = [{"path": "rates.py", "start_line": 2, "end_line": 2, "replacement": "    return 1"}]
    trees = {"head": {"rates.py": RATE_2}, "base": {}}

    result = run_template(
        tmp_path / "work", inputs(TEST, path="test_rate.py", patches=json.dumps(fix)), trees
    )

    assert result is not None
    assert result["head"]["exit_code"] == 0
    assert result["base"] is None


REFUSED_PATHS = {
    "the file under test": "app/payments.py",
    "a symlink to a file outside": "link.py",
    "a symlink to nothing": "dangling.py",
    "a symlinked directory": "linked/test_bug.py",
    "a file taken for a directory": "app/payments.py/test_bug.py",
}


@pytest.mark.parametrize("path", REFUSED_PATHS.values(), ids=REFUSED_PATHS.keys())
@pytest.mark.parametrize("side", ["head", "base"])
def test_a_test_path_that_exists_or_goes_through_a_symlink_is_refused(
    tmp_path: Path, path: str, side: str
) -> None:
    """Written over, the file under test would be the test; through a symlink, a file
    outside the checkout would be."""
    workspace = tmp_path / "work"
    for each in ("head", "base"):
        (workspace / each / "app").mkdir(parents=True)
        (workspace / each / "app/payments.py").write_text("def refund(): ...\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "link.py").write_text("kept\n")
    (workspace / side / "link.py").symlink_to(outside / "link.py")
    (workspace / side / "dangling.py").symlink_to(outside / "nothing.py")
    (workspace / side / "linked").symlink_to(outside)

    assert run_step(write_step(), workspace, inputs("assert True\n", path=path)) != 0

    for each in ("head", "base"):
        assert (workspace / each / "app/payments.py").read_text() == "def refund(): ...\n"
    assert sorted(p.name for p in outside.iterdir()) == ["link.py"]
    assert (outside / "link.py").read_text() == "kept\n"


def test_a_new_test_in_new_directories_is_written_at_both_sides(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    for each in ("head", "base"):
        (workspace / each / "tests").mkdir(parents=True)

    assert run_step(write_step(), workspace, inputs("x = 1\n", path="tests/new/deep/t.py")) == 0

    for each in ("head", "base"):
        assert (workspace / each / "tests/new/deep/t.py").read_text() == "x = 1\n"


def test_where_the_trivial_test_cannot_run_at_the_base_no_test_runs_and_the_result_says_why(
    tmp_path: Path,
) -> None:
    trees = {
        "head": {"rates.py": RATE_2, "tests/test_rates.py": ""},
        "base": {"rates.py": RATE_1, "tests/test_rates.py": ""},
    }
    given = inputs(TEST, path="test_rate.py", checked="python3 -m tiebreak_absent_runner {test}")

    result = run_template(tmp_path / "work", given, trees)

    assert result is not None
    assert (result["head"], result["base"]) == (None, None)
    check = result["environment"]
    assert check["test"] == f"tests/{NAME}"
    assert check["exit_code"] == 1
    assert "No module named tiebreak_absent_runner" in check["output_tail"]
    assert sorted(p.name for p in tmp_path.rglob(NAME)) == []


@pytest.mark.parametrize("fix", [False, True], ids=["base", "head"])
def test_where_the_trivial_test_passes_the_test_runs(tmp_path: Path, fix: bool) -> None:
    patches = [{"path": "rates.py", "start_line": 2, "end_line": 2, "replacement": "    return 1"}]
    trees = {"head": {"rates.py": RATE_2}, "base": {} if fix else {"rates.py": RATE_1}}
    given = inputs(
        TEST,
        path="test_rate.py",
        patches=json.dumps(patches) if fix else "",
        checked="python3 {test}",
    )

    result = run_template(tmp_path / "work", given, trees)

    assert result is not None
    assert result["environment"] is None
    assert result["head"]["exit_code"] == (0 if fix else 1)
    assert result["base"] == (None if fix else {"exit_code": 0, "output_tail": "", "error": None})
    assert sorted(p.name for p in tmp_path.rglob(NAME)) == []


def test_a_fix_is_checked_where_the_environment_runs_the_trivial_test_at_the_head(
    tmp_path: Path,
) -> None:
    patches = [{"path": "rates.py", "start_line": 2, "end_line": 2, "replacement": "    return 1"}]
    given = inputs(
        TEST,
        path="test_rate.py",
        patches=json.dumps(patches),
        checked="python3 -m tiebreak_absent_runner {test}",
    )

    result = run_template(tmp_path / "work", given, {"head": {"rates.py": RATE_2}, "base": {}})

    assert result is not None
    assert result["head"] is None
    assert result["environment"]["test"] == NAME
    assert "No module named tiebreak_absent_runner" in result["environment"]["output_tail"]


@needs_node
def test_node_s_trivial_test_runs_beside_the_tests_and_a_runner_that_cannot_start_says_why(
    tmp_path: Path,
) -> None:
    test = "const test = require('node:test');\ntest('rate', () => {});\n"
    trees = {"head": {"test/own.test.js": ""}, "base": {"test/own.test.js": ""}}
    runs = inputs(test, path="test/rate.test.js", checked="node --test {test}")
    cannot = inputs(test, path="test/rate.test.js", checked="node --test --require ./no.js {test}")
    runs["command"] = cannot["command"] = "node --test test/rate.test.js"

    ran = run_template(tmp_path / "ran", runs, trees)
    stopped = run_template(tmp_path / "stopped", cannot, trees)

    assert ran is not None
    assert ran["environment"] is None
    assert ran["head"]["exit_code"] == 0
    assert stopped is not None
    assert stopped["environment"]["test"] == "test/tiebreak-environment.test.cjs"
    assert "Cannot find module" in stopped["environment"]["output_tail"]
    assert list(tmp_path.rglob("tiebreak-environment.test.cjs")) == []


def test_go_s_trivial_test_is_sent_with_the_folder_the_workflow_makes_for_it() -> None:
    go = environment_inputs(GO_COMMAND)
    node = environment_inputs("node --test {test}")

    assert go["environment_folder"] == "tiebreakenvironment"
    assert json.loads(go["environment_check"])["name"] == "tiebreak_environment_test.go"
    assert "environment_folder" not in node
    assert json.loads(node["environment_check"])["folders"] == ["test", "tests", "__tests__"]


GO_TEST_FILE = 'package shop\n\nimport "testing"\n\nfunc TestRate(t *testing.T) {}\n'


@needs_go
def test_go_s_trivial_test_runs_in_a_package_of_its_own_and_a_missing_go_mod_says_why(
    tmp_path: Path,
) -> None:
    module = {"go.mod": GO_MOD, "shop/cart.go": "package shop\n"}
    given = inputs(GO_TEST_FILE, path="shop/rate_test.go", checked=GO_COMMAND)
    given["command"] = 'go test -count=1 "./shop"'

    ran = run_template(tmp_path / "ran", given, {"head": module, "base": module})
    stopped = run_template(
        tmp_path / "stopped", given, {"head": {"shop/cart.go": "package shop\n"}, "base": {}}
    )

    assert ran is not None
    assert ran["environment"] is None
    assert ran["head"]["exit_code"] == 0
    assert stopped is not None
    assert stopped["environment"]["test"] == "tiebreakenvironment/tiebreak_environment_test.go"
    assert "go.mod file not found" in stopped["environment"]["output_tail"]
    assert (stopped["head"], stopped["base"]) == (None, None)
    assert list(tmp_path.rglob("tiebreakenvironment")) == []


@needs_go
def test_where_the_project_has_a_folder_of_the_trivial_test_s_name_nothing_is_checked(
    tmp_path: Path,
) -> None:
    """Checked where a fix is, at the head, whose tree stays when the run ends."""
    kept = {"tiebreakenvironment/notes.txt": "the project's\n", "shop/cart.go": "package shop\n"}
    fix = [{"path": "shop/cart.go", "start_line": 1, "end_line": 1, "replacement": "package shop"}]
    given = inputs(
        GO_TEST_FILE, path="shop/rate_test.go", patches=json.dumps(fix), checked=GO_COMMAND
    )

    result = run_template(tmp_path / "work", given, {"head": kept, "base": {}})

    assert result is not None
    assert result["environment"] is None
    assert result["head"]["exit_code"] != 0  # the test itself ran, and found no go.mod
    folder = tmp_path / "work/head/tiebreakenvironment"
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(
    ("refused", "kept"),
    [
        ('{"message": "Unexpected inputs provided: [\\"environment_folder\\"]"}', True),
        ('{"message": "Unexpected inputs provided: [\\"environment_check\\"]"}', True),
        ('{"message": "Unexpected inputs provided: [\\"own_test\\"]"}', False),
        ('{"message": "No ref found for: main"}', False),
    ],
)
def test_a_copy_of_the_workflow_older_than_the_pre_flight_is_sent_the_test_without_it(
    refused: str, kept: bool
) -> None:
    given = {**inputs("x", checked=GO_COMMAND), "own_test": "true"}

    again = without_preflight(given, refused)

    if not kept:
        assert again is None
        return
    assert again is not None
    assert sorted(set(given) - set(again)) == ["environment_check", "environment_folder"]
    assert again["own_test"] == "true"
