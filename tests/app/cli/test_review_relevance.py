"""`tiebreak review --verify` of a change whose finding's test only reads the source's text,
under bubblewrap: the test fails at the head and passes at the base — reproduced — but never
calls the code it claims to test. The coder disputes its relevance, the tester keeps it, the
arbiter rules it does not test its claim: the finding is not posted as proven, and what the
review prints says the test was ruled out and why. Ruled relevant, the same test binds."""

import json
from pathlib import Path
from typing import Any

import pytest
import respx
from click.testing import CliRunner, Result

from app.cli.main import main
from tests.app.verification.conftest import needs_bwrap
from tests.kits.messages import BASE_URL, MESSAGES_URL, by_tool
from tests.scenarios.shipping import BOUND_FIX, BOUND_LINE, GREP_TEST, make_shipping
from tests.scenarios.shop import COMMAND, Project

pytestmark = needs_bwrap

CLAIM = "An order of exactly 10 now ships free: the bound moved by one."
READS_TEXT = "The test reads shipping.py's text for '> 10'; it never calls shipping()."
WARNING = "Orders of exactly 10 ship free; no test calls shipping() to show it."
FINDING = {
    "path": "shop/shipping.py",
    "start_line": BOUND_LINE,
    "end_line": BOUND_LINE,
    "severity": "major",
    "claim": CLAIM,
    "reproduction": GREP_TEST.model_dump(),
}


def script(ruling: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The tester proves the finding with the grep, the coder disputes the test's relevance,
    the tester keeps it, the arbiter gives `ruling`."""
    return {
        "report_findings": [{"findings": [FINDING]}],
        "answer_findings": [
            {"answers": [{"finding_id": "F1", "stance": "irrelevant_test", "argument": READS_TEXT}]}
        ],
        "evaluate_answers": [
            {
                "evaluations": [
                    {"finding_id": "F1", "decision": "reject", "reason": "The text is the rule."}
                ]
            }
        ],
        "arbitrate": [{"rulings": [{"finding_id": "F1", "reasoning": READS_TEXT, **ruling}]}],
    }


RULED_OUT = {"ruling": "test_irrelevant", "warning": WARNING}
RULED_IN = {"ruling": "test_relevant", "patch": BOUND_FIX.model_dump()}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_shipping(tmp_path)


def review(
    project: Project, ruling: dict[str, Any], *args: str
) -> tuple[Result, list[dict[str, Any]]]:
    patch = project.checkout.parent / "change.diff"
    patch.write_text(project.diff.text)
    env = {"ANTHROPIC_BASE_URL": BASE_URL, "ANTHROPIC_API_KEY": "sk-test"}
    with respx.mock:
        route = respx.post(MESSAGES_URL).mock(side_effect=by_tool(**script(ruling)))
        arguments = ["review", str(patch), "--repo", str(project.checkout), "--verify", COMMAND]
        result = CliRunner().invoke(main, [*arguments, "--max-rounds", "1", *args], env=env)
        sent = [json.loads(c.request.content) for c in route.calls]
    return result, sent


def test_a_test_that_greps_the_source_is_ruled_out_and_not_posted_as_proof(
    project: Project,
) -> None:
    result, sent = review(project, RULED_OUT, "--json")

    assert result.exit_code == 0, result.output
    (unit,) = json.loads(result.stdout)["units"]
    (ended,) = unit["findings"]
    tested = ended["verification"]
    # It really did fail at the head and pass at the base, under the sandbox.
    assert tested["verdict"] == "reproduced"
    assert "AssertionError" in tested["output_tail"]
    # And it was set aside: the finding is the arbiter's opinion, with a warning.
    assert (tested["relevant"], tested["relevance"]) == (False, READS_TEXT)
    assert (ended["consensus"], ended["resolution"]) == ("arbiter", "warning")
    assert ended["warning"] == WARNING
    # Nobody was refused: the coder's dispute of the test's relevance was heard.
    coder = [s for s in sent if s["tool_choice"]["name"] == "answer_findings"]
    assert len(coder) == 1
    arbiter = [s for s in sent if s["tool_choice"]["name"] == "arbitrate"]
    assert len(arbiter) == 1
    assert "irrelevant_test" in json.dumps(arbiter[0]["messages"])


def test_the_terminal_says_the_test_was_ruled_not_to_test_its_claim(project: Project) -> None:
    result, _ = review(project, RULED_OUT)

    assert result.exit_code == 0, result.output
    said = result.stdout
    assert f"Test {GREP_TEST.path}: ruled not to test its claim — {READS_TEXT}" in said
    assert "Tests: 1 finding tested, 0 reproduced, 1 ruled not to test its claim" in said
    assert f"Warning: {WARNING}" in said
    assert f"Test {GREP_TEST.path}: reproduced" not in said


def test_a_test_ruled_relevant_binds_and_the_fix_is_verified_against_it(
    project: Project,
) -> None:
    result, _ = review(project, RULED_IN, "--json")

    assert result.exit_code == 0, result.output
    (unit,) = json.loads(result.stdout)["units"]
    (ended,) = unit["findings"]
    assert (ended["verification"]["verdict"], ended["verification"]["relevant"]) == (
        "reproduced",
        True,
    )
    assert (ended["consensus"], ended["resolution"], ended["fix_verified"]) == (
        "arbiter",
        "fixed",
        True,
    )
