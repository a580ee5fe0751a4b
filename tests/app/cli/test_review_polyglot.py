"""`tiebreak review --verify` of a Go module and of a Node package, under bubblewrap: the tester
is told how the project's tests are written and run, read from the checkout; a test of a bug
the change brings into code the base has is reproduced, one of a function or a package or
module the change adds is proven in new code (the base's `go test` cannot build it, Node cannot
find it), each binds the debate, and each fix is verified — by `go test` and `node --test`
themselves, with no network."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from agents.protocol import Patch, Reproduction
from tests.app.verification.conftest import needs_bwrap
from tests.kits.messages import reviewed
from tests.scenarios.polyglot import (
    GO_COMMAND,
    GO_COUPON_LINE,
    GO_COUPON_TEST,
    GO_DISCOUNT_LINE,
    GO_DISCOUNT_TEST,
    GO_FIXES,
    GO_TOTAL_LINE,
    GO_TOTAL_TEST,
    NODE_COMMAND,
    NODE_COUPON_LINE,
    NODE_COUPON_TEST,
    NODE_DISCOUNT_LINE,
    NODE_DISCOUNT_TEST,
    NODE_FIXES,
    NODE_TOTAL_LINE,
    NODE_TOTAL_TEST,
    make_go_shop,
    make_node_shop,
    needs_go,
    needs_node,
)
from tests.scenarios.shop import Project

pytestmark = needs_bwrap

TOLD = re.compile(r"<untrusted-test_conventions-\w+>\n(.*)\n</untrusted-test_conventions", re.S)


def finding(path: str, line: int, claim: str, test: Reproduction) -> dict[str, Any]:
    return {
        "path": path,
        "start_line": line,
        "end_line": line,
        "severity": "major",
        "claim": claim,
        "reproduction": test.model_dump(),
    }


def script(findings: list[dict[str, Any]], fixes: tuple[Patch, ...]) -> dict[str, Any]:
    """The tester reports `findings`; the coder disputes each (refused: each is proven), then
    concedes each with its fix; the tester accepts."""
    ids = [f"F{n}" for n in range(1, len(findings) + 1)]
    disputes = [{"finding_id": i, "stance": "dispute", "argument": "Not a bug."} for i in ids]
    concessions = [
        {"finding_id": i, "stance": "concede", "argument": "Right.", "patch": fix.model_dump()}
        for i, fix in zip(ids, fixes, strict=True)
    ]
    accepted = [{"finding_id": i, "decision": "accept", "reason": "Fixed."} for i in ids]
    return {
        "report_findings": [{"findings": findings}],
        "answer_findings": [{"answers": disputes}, {"answers": concessions}],
        "evaluate_answers": [{"evaluations": accepted}],
    }


GO_SCRIPT = script(
    [
        finding("shop/cart.go", GO_TOTAL_LINE, "Total skips the first price.", GO_TOTAL_TEST),
        finding("shop/cart.go", GO_DISCOUNT_LINE, "Divides by 10, not 100.", GO_DISCOUNT_TEST),
        finding(
            "coupons/coupons.go", GO_COUPON_LINE, "A large coupon goes negative.", GO_COUPON_TEST
        ),
    ],
    GO_FIXES,
)
NODE_SCRIPT = script(
    [
        finding("src/cart.js", NODE_TOTAL_LINE, "total skips the first price.", NODE_TOTAL_TEST),
        finding("src/cart.js", NODE_DISCOUNT_LINE, "Divides by 10, not 100.", NODE_DISCOUNT_TEST),
        finding(
            "src/coupons.js", NODE_COUPON_LINE, "A large coupon goes negative.", NODE_COUPON_TEST
        ),
    ],
    NODE_FIXES,
)


def review(
    project: Project, command: str, answers: dict[str, Any], *args: str
) -> tuple[Result, list[dict[str, Any]]]:
    return reviewed(project.checkout, project.diff.text, answers, "--verify", command, *args)


def told_conventions(sent: list[dict[str, Any]]) -> dict[str, Any]:
    """The conventions every call read in its cached prefix, the system's blocks (the same in
    each call)."""
    found = set()
    for request in sent:
        for block in request["system"]:
            if (told := TOLD.search(block["text"])) is not None:
                assert block.get("cache_control") == {"type": "ephemeral"}
                found.add(told[1])
    assert len(found) == 1
    parsed: dict[str, Any] = json.loads(found.pop())
    return parsed


def ended(result: Result) -> dict[str, dict[str, Any]]:
    assert result.exit_code == 0, result.output
    (unit,) = json.loads(result.stdout)["units"]
    return {f["finding"]["id"]: f for f in unit["findings"]}


@pytest.fixture
def go_shop(tmp_path: Path) -> Project:
    return make_go_shop(tmp_path)


@pytest.fixture
def node_shop(tmp_path: Path) -> Project:
    return make_node_shop(tmp_path)


@needs_go
def test_a_go_module_s_findings_are_proven_by_go_test_and_their_fixes_verified(
    go_shop: Project,
) -> None:
    """Slow: each run of `go test` builds the packages it imports afresh (vet left out), in its
    sandbox's own empty build cache, and each finding's test runs at the head, the base and
    with its fix."""
    result, sent = review(go_shop, GO_COMMAND, GO_SCRIPT, "--base", go_shop.base, "--json")

    findings = ended(result)
    total, discount, coupon = findings["F1"], findings["F2"], findings["F3"]
    assert total["verification"]["verdict"] == "reproduced"
    assert "Total = 7, want 12" in total["verification"]["output_tail"]
    assert discount["verification"]["verdict"] == "introduced"
    assert "the base has no name 'Discounted'" in discount["verification"]["reason"]
    assert "undefined: Discounted" in discount["verification"]["base_output_tail"]
    assert "Discounted = 900, want 90" in discount["verification"]["output_tail"]
    assert coupon["verification"]["verdict"] == "introduced"
    assert "the base has no name 'Apply'" in coupon["verification"]["reason"]
    for proven in findings.values():
        assert (proven["resolution"], proven["fix_verified"]) == ("fixed", True)
    coder = [s for s in sent if s["tool_choice"]["name"] == "answer_findings"]
    assert "it is proven" in json.dumps(coder[1]["messages"])
    assert told_conventions(sent) == {
        "runner": "go test",
        "language": "go",
        "ways": ["`*_test.go` beside its package's files (1 file)"],
        "examples": ["shop/cart_test.go"],
    }


@needs_node
def test_a_node_package_s_findings_are_proven_by_node_test_and_their_fixes_verified(
    node_shop: Project,
) -> None:
    result, sent = review(node_shop, NODE_COMMAND, NODE_SCRIPT, "--json")

    findings = ended(result)
    total, discount, coupon = findings["F1"], findings["F2"], findings["F3"]
    assert total["verification"]["verdict"] == "reproduced"
    assert "7 !== 12" in total["verification"]["output_tail"]
    assert discount["verification"]["verdict"] == "introduced"
    assert "the base has no name 'discounted'" in discount["verification"]["reason"]
    assert "discounted is not a function" in discount["verification"]["base_output_tail"]
    assert coupon["verification"]["verdict"] == "introduced"
    assert "the base has no module 'src/coupons'" in coupon["verification"]["reason"]
    assert "Cannot find module '../src/coupons'" in coupon["verification"]["base_output_tail"]
    for proven in findings.values():
        assert (proven["resolution"], proven["fix_verified"]) == ("fixed", True)
    assert told_conventions(sent) == {
        "runner": "node --test",
        "language": "javascript",
        "ways": ["test/*.test.js (1 file)"],
        "examples": ["test/cart.test.js"],
    }


@needs_go
def test_the_terminal_says_which_go_findings_are_proven_in_new_code(go_shop: Project) -> None:
    """Slow: each run of `go test` builds the packages it imports afresh (vet left out), in its
    sandbox's own empty build cache, and each finding's test runs at the head, the base and
    with its fix."""
    result, _ = review(go_shop, GO_COMMAND, GO_SCRIPT)

    assert result.exit_code == 0, result.output
    said = result.stdout
    assert f"Test {GO_TOTAL_TEST.path}: reproduced, fix verified" in said
    assert f"Test {GO_DISCOUNT_TEST.path}: proven in new code, fix verified" in said
    assert f"Test {GO_COUPON_TEST.path}: proven in new code, fix verified" in said
    assert "Tests: 3 findings tested, 1 reproduced, 2 proven in new code" in said


@needs_go
def test_a_go_project_without_a_module_is_stopped_by_the_pre_flight(go_shop: Project) -> None:
    (go_shop.checkout / "go.mod").unlink()

    result, sent = review(go_shop, GO_COMMAND, GO_SCRIPT)

    assert result.exit_code != 0
    assert "go.mod file not found" in result.output
    assert sent == []  # no model was asked anything
