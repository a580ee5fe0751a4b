"""`tiebreak review --verify` of a change that moves a rule on purpose, under bubblewrap: the
tester's test of the old rule fails at the head and passes at the base (reproduced), which
proves that behaviour changed, not that the change is wrong. With the pull request's
evidence — its description, its changelog, the project's own test updated to the new rule,
which Tiebreak runs at the head — the coder shows the change intended: not forced, not left
open, told as a behaviour change. The same change without any evidence stays a proven
finding."""

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from click.testing import CliRunner, Result

from app.cli.exits import EXIT_PROBLEMS
from app.cli.main import main
from tests.app.verification.conftest import needs_bwrap
from tests.kits.messages import BASE_URL, MESSAGES_URL, by_tool, forced_tool, message
from tests.scenarios.intended import (
    CART,
    CART_TEST,
    CHANGELOG,
    CHANGELOG_HEAD,
    DESCRIPTION,
    GUIDE,
    OLD_RULE_TEST,
    QUOTE,
    finding,
    intended,
    make_intended,
    make_split,
)
from tests.scenarios.shop import COMMAND, Project

pytestmark = needs_bwrap

SHOWN: dict[str, list[dict[str, Any]]] = {
    "report_findings": [{"findings": [finding()]}],
    "answer_findings": [{"answers": [intended()]}],
    "evaluate_answers": [
        {"evaluations": [{"finding_id": "F1", "decision": "accept", "reason": "As described."}]}
    ],
}
UNSHOWN: dict[str, list[dict[str, Any]]] = {
    "report_findings": [{"findings": [finding()]}],
    "answer_findings": [
        {"answers": [intended(cited=[{"quote": QUOTE}])]},
        {"answers": [{"finding_id": "F1", "stance": "dispute", "argument": "It is deliberate."}]},
    ],
    "arbitrate": [
        {"rulings": [{"finding_id": "F1", "ruling": "intended", "reasoning": "Deliberate."}]},
        {
            "rulings": [
                {
                    "finding_id": "F1",
                    "ruling": "accept_with_warning",
                    "reasoning": "Deliberate.",
                    "warning": "Refunds no longer lower the total.",
                }
            ]
        },
    ],
}


def in_the_code_unit(request: httpx.Request) -> httpx.Response:
    """The agents of a review split in units: in the code's unit the tester proves its finding
    and the coder shows it intended, citing the changelog another unit reviews, as often as it
    is asked; the other units' testers find nothing."""
    tool = forced_tool(request)
    if f"+++ b/{CART}" not in json.dumps(json.loads(request.content)["system"]):
        return message(tool, {"findings": []})
    return message(tool, SHOWN[tool][0])


def review(
    project: Project,
    script: dict[str, list[dict[str, Any]]],
    *args: str,
    answer: Any = None,
) -> tuple[Result, list[dict[str, Any]]]:
    patch = project.checkout.parent / "change.diff"
    patch.write_text(project.diff.text)
    env = {"ANTHROPIC_BASE_URL": BASE_URL, "ANTHROPIC_API_KEY": "sk-test"}
    command = ["review", str(patch), "--repo", str(project.checkout), "--verify", COMMAND]
    with respx.mock:
        route = respx.post(MESSAGES_URL).mock(side_effect=answer or by_tool(**script))
        result = CliRunner().invoke(main, [*command, "--base", project.base, *args], env=env)
        sent = [json.loads(c.request.content) for c in route.calls]
    return result, sent


@pytest.fixture
def shown(tmp_path: Path) -> Project:
    return make_intended(tmp_path)


def test_an_intended_documented_change_is_a_behaviour_change_not_a_defect(
    shown: Project,
) -> None:
    result, sent = review(shown, SHOWN, "--description", DESCRIPTION, "--json")

    assert result.exit_code == 0, result.output
    (unit,) = json.loads(result.stdout)["units"]
    (ended,) = unit["findings"]
    assert ended["verification"]["verdict"] == "reproduced"
    assert ended["verification"]["test"] == OLD_RULE_TEST.path
    assert (ended["resolution"], ended["consensus"]) == ("intended", "unanimous")
    assert ended["patch"] is None
    # The project's own test, updated to the new rule, ran at the head and passed there.
    (own,) = ended["intended"]["tests"]
    assert (own["test"], own["passed"], own["exit_code"]) == (CART_TEST, True, 0)
    assert "2 passed" in own["output_tail"]
    # Every agent was shown the description; the tester read the coder's citations.
    assert all(DESCRIPTION.splitlines()[0] in json.dumps(s) for s in sent)
    tester = [s for s in sent if s["tool_choice"]["name"] == "evaluate_answers"]
    assert QUOTE in json.dumps(tester[0]["messages"])


def test_a_changelog_another_unit_of_a_large_diff_reviews_shows_the_change_intended(
    tmp_path: Path,
) -> None:
    project = make_split(tmp_path)

    result, sent = review(
        project, {}, "--description", DESCRIPTION, "--json", answer=in_the_code_unit
    )

    assert result.exit_code == 0, result.output
    units = json.loads(result.stdout)["units"]
    assert len(units) == 3  # the code and its test, the guide, the changelog
    (ended,) = [f for unit in units for f in unit["findings"]]
    assert ended["verification"]["verdict"] == "reproduced"
    assert (ended["resolution"], ended["consensus"]) == ("intended", "unanimous")
    assert CHANGELOG in [c["path"] for c in ended["intended"]["citations"]]
    (own,) = ended["intended"]["tests"]
    assert (own["test"], own["passed"]) == (CART_TEST, True)
    # The code's unit was told where the other units' lines are, never shown their diff.
    coder = [s for s in sent if s["tool_choice"]["name"] == "answer_findings"]
    assert coder
    for request in coder:
        read = json.dumps(request)
        assert f"{CHANGELOG} (lines 1-3)" in read
        assert f"{GUIDE} (lines 1-1000)" in read
        assert CHANGELOG_HEAD.splitlines()[2][3:] not in read


def test_the_terminal_tells_the_behaviour_change_and_its_evidence(shown: Project) -> None:
    result, _ = review(shown, SHOWN, "--description", DESCRIPTION)

    assert result.exit_code == 0, result.output
    said = result.stdout
    assert "Proven behaviour changes" in said
    assert f"(shown by {OLD_RULE_TEST.path})" in said
    assert "Behaviour change: the pull request means it, as it shows:" in said
    assert f"the description says: {QUOTE}" in said
    assert f"its test {CART_TEST}: it passes at the head" in said
    assert "Tests: 1 finding tested, 1 reproduced, 1 intended behaviour change" in said
    assert "Unresolved" not in said


def test_the_same_change_without_evidence_stays_a_proven_finding(tmp_path: Path) -> None:
    project = make_intended(tmp_path, evidence=False)

    result, sent = review(project, UNSHOWN, "--description", "", "--max-rounds", "1", "--json")

    assert result.exit_code == EXIT_PROBLEMS, result.output  # an open finding
    (unit,) = json.loads(result.stdout)["units"]
    (ended,) = unit["findings"]
    assert ended["verification"]["verdict"] == "reproduced"
    assert (ended["resolution"], ended["consensus"]) == ("open", "unresolved")
    assert ended["intended"] is None
    refused = json.dumps([t["error"] for t in unit["transcript"]["turns"]])
    assert "the pull request has no description to quote" in refused
    # On the facts, the proven finding is not argued away, by the coder or the arbiter.
    assert "it is proven, and can only be conceded with a patch" in refused
    assert "the coder has not shown, with evidence in the pull request" in refused
    assert "it is proven, and can only be ruled force_fix" in refused
    assert len(sent) == 5
