"""`tiebreak review --verify` of a change that adds code with bugs in it, under bubblewrap: a
test of an added function, or of a new module, cannot even import it at the base. The finding
is proven in new code — not called a bug older than the change, nor a test that did not run —
binds the debate as a reproduced one does, and its fix is verified."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from agents.protocol import Patch, Reproduction
from tests.app.verification.conftest import needs_bwrap
from tests.kits.messages import reviewed
from tests.scenarios.discounts import (
    COUPON_FIX,
    COUPON_LINE,
    COUPON_TEST,
    DISCOUNT_FIX,
    DISCOUNT_LINE,
    DISCOUNT_TEST,
    make_discounts,
)
from tests.scenarios.shop import COMMAND, Project

pytestmark = needs_bwrap


def finding(path: str, line: int, claim: str, test: Reproduction) -> dict[str, Any]:
    return {
        "path": path,
        "start_line": line,
        "end_line": line,
        "severity": "major",
        "claim": claim,
        "reproduction": test.model_dump(),
    }


def concede(finding_id: str, fix: Patch) -> dict[str, Any]:
    return {
        "finding_id": finding_id,
        "stance": "concede",
        "argument": "Right.",
        "patch": fix.model_dump(),
    }


DISCOUNT = finding(
    "shop/cart.py", DISCOUNT_LINE, "discounted() divides by 10: 10% off costs 9 times more.",
    DISCOUNT_TEST,
)  # fmt: skip
COUPON = finding(
    "shop/coupons.py", COUPON_LINE, "A coupon larger than the price makes it negative.",
    COUPON_TEST,
)  # fmt: skip
SCRIPT: dict[str, list[dict[str, Any]]] = {
    "report_findings": [{"findings": [DISCOUNT, COUPON]}],
    "answer_findings": [
        # A proven finding's dispute is refused: the coder is asked again, and concedes.
        {
            "answers": [
                {"finding_id": "F1", "stance": "dispute", "argument": "Not this change's."},
                {"finding_id": "F2", "stance": "dispute", "argument": "Not this change's."},
            ]
        },
        {"answers": [concede("F1", DISCOUNT_FIX), concede("F2", COUPON_FIX)]},
    ],
    "evaluate_answers": [
        {
            "evaluations": [
                {"finding_id": i, "decision": "accept", "reason": "Fixed."} for i in ("F1", "F2")
            ]
        }
    ],
}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_discounts(tmp_path)


def review(project: Project, *args: str) -> tuple[Result, list[dict[str, Any]]]:
    return reviewed(project.checkout, project.diff.text, SCRIPT, "--verify", COMMAND, *args)


def test_a_bug_in_added_code_is_proven_in_new_code_and_its_fix_verified(project: Project) -> None:
    result, sent = review(project, "--base", project.base, "--json")

    assert result.exit_code == 0, result.output
    (unit,) = json.loads(result.stdout)["units"]
    ended = {f["finding"]["id"]: f for f in unit["findings"]}
    discount, coupon = ended["F1"], ended["F2"]
    assert discount["verification"]["verdict"] == "introduced"
    assert "the base has no name 'discounted' in shop.cart" in discount["verification"]["reason"]
    assert "assert 900 == 90" in discount["verification"]["output_tail"]
    # What the base showed is kept: the import it failed on.
    assert "cannot import name 'discounted'" in discount["verification"]["base_output_tail"]
    assert coupon["verification"]["verdict"] == "introduced"
    assert "the base has no module 'shop.coupons'" in coupon["verification"]["reason"]
    for proven in (discount, coupon):
        assert (proven["resolution"], proven["fix_verified"]) == ("fixed", True)
    # The disputes were refused as a reproduced finding's are: the coder was asked again.
    coder = [s for s in sent if s["tool_choice"]["name"] == "answer_findings"]
    assert len(coder) == 2
    assert "it is proven" in json.dumps(coder[1]["messages"])


def test_the_terminal_says_the_base_does_not_have_the_code(project: Project) -> None:
    result, _ = review(project)

    assert result.exit_code == 0, result.output
    said = result.stdout
    assert f"Test {DISCOUNT_TEST.path}: proven in new code, fix verified" in said
    assert f"Test {COUPON_TEST.path}: proven in new code, fix verified" in said
    assert "the base has no name 'discounted' in shop.cart, which the change adds" in said
    assert "Tests: 2 findings tested, 0 reproduced, 2 proven in new code" in said
    assert "fails at base" not in said
