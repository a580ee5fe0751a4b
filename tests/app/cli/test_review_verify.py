"""`tiebreak review --verify` on a real small project: the tester's tests run at the base and
the head in bubblewrap's sandbox, and what they show settles the findings — a real
off-by-one reproduced and its fix verified, a false finding withdrawn, a broken test and a
bug older than the change shown as no proof."""

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import respx
from click.testing import CliRunner, Result

from app.cli.main import main
from tests.app.verification.conftest import needs_bwrap
from tests.fakes.messages_api import FakeMessagesAPI, QueuedResponder
from tests.kits.command import tiebreak
from tests.kits.messages import BASE_URL, MESSAGES_URL, by_tool
from tests.scenarios.shop import BUG_LINE, COMMAND, FIX, REPRODUCTION, Project, make_project

pytestmark = needs_bwrap


def finding(claim: str, path: str, content: str) -> dict[str, Any]:
    return {
        "path": "shop/cart.py",
        "start_line": BUG_LINE,
        "end_line": BUG_LINE,
        "severity": "major",
        "claim": claim,
        "reproduction": {"path": path, "content": content},
    }


OFF_BY_ONE = finding(
    "The loop starts at 1: the first price is never added.",
    REPRODUCTION.path,
    REPRODUCTION.content,
)
FALSE_ALARM = finding(
    "An empty cart makes total() raise.",
    "tests/test_empty_cart.py",
    "from shop.cart import total\n\n\ndef test_it():\n    assert total([]) == 0\n",
)
BROKEN = finding("total() mishandles floats.", "tests/test_floats.py", "def test_it(:\n    pass\n")
OLD_BUG = finding(
    "total(None) raises instead of returning 0.",
    "tests/test_none.py",
    "from shop.cart import total\n\n\ndef test_it():\n    assert total(None) == 0\n",
)
SCRIPT: dict[str, list[dict[str, Any]]] = {
    "report_findings": [{"findings": [OFF_BY_ONE, FALSE_ALARM, BROKEN, OLD_BUG]}],
    "evaluate_answers": [
        # F2's test passed at the head: its tester withdraws it.
        {"evaluations": [{"finding_id": "F2", "decision": "accept", "reason": "It works."}]},
        {
            "evaluations": [
                {"finding_id": i, "decision": "accept", "reason": "Fine."}
                for i in ("F1", "F3", "F4")
            ]
        },
    ],
    "answer_findings": [
        {
            "answers": [
                {
                    "finding_id": "F1",
                    "stance": "concede",
                    "argument": "Right.",
                    "patch": FIX.model_dump(),
                },
                {"finding_id": "F3", "stance": "dispute", "argument": "Floats are not used."},
                {"finding_id": "F4", "stance": "dispute", "argument": "Not this change."},
            ]
        }
    ],
}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path)


def review(
    project: Project, *args: str, script: dict[str, list[dict[str, Any]]] = SCRIPT
) -> tuple[Result, list[dict[str, Any]]]:
    """`tiebreak review` of the project's change with `args`, on a model answering `script`;
    the requests the model was sent."""
    patch = project.checkout.parent / "change.diff"
    patch.write_text(project.diff.text)
    env = {"ANTHROPIC_BASE_URL": BASE_URL, "ANTHROPIC_API_KEY": "sk-test"}
    with respx.mock:
        route = respx.post(MESSAGES_URL).mock(side_effect=by_tool(**script))
        result = CliRunner().invoke(
            main, ["review", str(patch), "--repo", str(project.checkout), *args], env=env
        )
        sent = [json.loads(c.request.content) for c in route.calls]
    return result, sent


def test_the_tests_settle_the_findings(project: Project) -> None:
    result, sent = review(project, "--verify", COMMAND, "--base", project.base, "--json")

    assert result.exit_code == 0, result.output
    (unit,) = json.loads(result.stdout)["units"]
    ended = {f["finding"]["id"]: f for f in unit["findings"]}
    proof = ended["F1"]["verification"]
    assert (proof["verdict"], proof["test"]) == ("reproduced", REPRODUCTION.path)
    assert proof["exit_code"] == 1
    assert "assert 7 == 12" in proof["output_tail"]
    assert (ended["F1"]["resolution"], ended["F1"]["fix_verified"]) == ("fixed", True)
    assert ended["F2"]["verification"]["verdict"] == "not_reproduced"
    assert ended["F2"]["resolution"] == "withdrawn"
    assert ended["F3"]["verification"]["verdict"] == "broken"
    assert ended["F4"]["verification"]["verdict"] == "fails_at_base"
    assert unit["verification_seconds"] > 0
    # The tester was told how tests run; the tools offered a reproduction.
    seed = sent[0]
    assert COMMAND in json.dumps(seed["messages"])
    assert "reproduction" in json.dumps(seed["tools"])
    # Nothing was left in the checkout.
    assert not (project.checkout / REPRODUCTION.path).exists()


def test_the_terminal_shows_each_verdict(project: Project) -> None:
    result, _ = review(project, "--verify", COMMAND)

    assert result.exit_code == 0, result.output
    assert f"Test {REPRODUCTION.path}: reproduced, fix verified" in result.stdout
    assert "Test tests/test_empty_cart.py: not reproduced — it passes at the head" in result.stdout
    assert "Tests: 4 findings tested, 1 reproduced" in result.stdout


def test_verification_refuses_a_checkout_that_is_not_at_the_diff_s_new_side(
    project: Project,
) -> None:
    (project.checkout / "shop" / "cart.py").write_text("# another version\n")

    result, sent = review(project, "--verify", COMMAND)

    assert result.exit_code == 2
    assert "--verify needs a checkout at the diff's new side" in result.stderr
    assert sent == []


def test_a_command_without_its_test_is_refused(project: Project) -> None:
    result, sent = review(project, "--verify", "python -m pytest")

    assert result.exit_code == 2
    assert "the command must name the test as {test}" in result.stderr
    assert sent == []


def test_without_verify_no_test_is_asked_for(project: Project) -> None:
    result, (sent,) = review(project, "--json", script={"report_findings": [{"findings": []}]})

    assert result.exit_code == 0, result.output
    assert "reproduction" not in json.dumps(sent["tools"])
    assert COMMAND not in json.dumps(sent["messages"])


def test_without_bubblewrap_verification_is_refused_saying_how_to_fix_it(
    project: Project, tmp_path: Path
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    git = shutil.which("git")
    assert git is not None
    (tools / "git").symlink_to(git)

    with pytest.MonkeyPatch.context() as env:
        env.setenv("PATH", str(tools))
        result, sent = review(project, "--verify", COMMAND)

    assert result.exit_code == 2
    assert "--verify cannot run the tests in a sandbox here" in result.stderr
    assert "apt-get install bubblewrap" in result.stderr
    assert sent == []


def test_no_sandbox_runs_the_tests_on_the_host_with_a_warning(project: Project) -> None:
    result, _ = review(project, "--verify", COMMAND, "--no-sandbox", "--json")

    assert result.exit_code == 0, result.output
    assert "WITHOUT a sandbox" in result.stderr
    (unit,) = json.loads(result.stdout)["units"]
    verdicts = [f["verification"]["verdict"] for f in unit["findings"]]
    assert verdicts == ["reproduced", "not_reproduced", "broken", "fails_at_base"]


def test_no_memory_limit_runs_the_tests_in_the_sandbox_with_a_warning(project: Project) -> None:
    result, _ = review(project, "--verify", COMMAND, "--no-memory-limit", "--json")

    assert result.exit_code == 0, result.output
    assert "in the sandbox WITHOUT a memory limit on each run" in result.stderr
    assert "WITHOUT a sandbox" not in result.stderr
    (unit,) = json.loads(result.stdout)["units"]
    verdicts = [f["verification"]["verdict"] for f in unit["findings"]]
    assert verdicts == ["reproduced", "not_reproduced", "broken", "fails_at_base"]


def test_an_editable_install_from_outside_the_checkout_is_said_not_to_be_seen(
    project: Project, tmp_path: Path
) -> None:
    (site,) = (project.checkout / ".venv").glob("lib/python*/site-packages")
    record = site / "helpers-2.0.dist-info"
    record.mkdir()
    elsewhere = tmp_path / "helpers"
    url = {"url": elsewhere.as_uri(), "dir_info": {"editable": True}}
    (record / "direct_url.json").write_text(json.dumps(url))

    result, _ = review(project, "--verify", COMMAND, "--json")

    assert result.exit_code == 0, result.output
    assert (
        f"tiebreak: note: .venv has helpers installed in editable mode from {elsewhere}, "
        "outside the checkout, which a run does not see: a test importing helpers fails"
    ) in result.stderr


def test_each_trial_is_said_as_it_starts_and_ends_on_standard_error(project: Project) -> None:
    patch = project.checkout.parent / "change.diff"
    patch.write_text(project.diff.text)
    script = {**SCRIPT, "report_findings": [{"findings": [OFF_BY_ONE]}]}
    script["evaluate_answers"] = [
        {"evaluations": [{"finding_id": "F1", "decision": "accept", "reason": "Fine."}]}
    ]
    script["answer_findings"] = [{"answers": [SCRIPT["answer_findings"][0]["answers"][0]]}]
    with FakeMessagesAPI(QueuedResponder(**script)) as api:
        done = tiebreak(
            "review", str(patch), "--repo", str(project.checkout), "--verify", COMMAND,
            "--base", project.base, "--json",
            env={"ANTHROPIC_API_KEY": api.api_key, "ANTHROPIC_BASE_URL": api.base_url},
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    trials = [line for line in done.stderr.splitlines() if line.startswith("tiebreak: test ")]
    test = f"tiebreak: test {REPRODUCTION.path}"
    assert [re.sub(r"\(\d+\.\d s\)", "(S)", line) for line in trials] == [
        f"{test}: running at the base and the head",
        f"{test}: reproduced (S)",
        f"{test}: running at the head with the coder's patch",
        f"{test}: passes with the patch (S)",
    ]
    (unit,) = json.loads(done.stdout)["units"]  # standard output is the JSON alone
    assert unit["findings"][0]["verification"]["verdict"] == "reproduced"
