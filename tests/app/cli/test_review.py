"""`tiebreak review`: the trio on a local diff, from the terminal, over the real SDK (respx)."""

import json
from pathlib import Path
from typing import Any

import pytest
import respx
from click.testing import CliRunner, Result

from app.cli.main import main
from tests.kits.messages import BASE_URL, MESSAGES_URL, by_tool, error
from tests.scenarios.debates import (
    AGREED,
    LOG_FIX,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    UNDEFINED,
    finding,
    git_diff,
)

DIVIDE = finding(8, "Quantizing each share loses the remainder.")


DEADLOCK: dict[str, list[dict[str, Any]]] = {
    "report_findings": [{"findings": [DIVIDE]}],
    "answer_findings": [
        {"answers": [{"finding_id": "F1", "stance": "dispute", "argument": "Display only."}]}
    ]
    * 2,
    "evaluate_answers": [
        {"evaluations": [{"finding_id": "F1", "decision": "reject", "reason": "It is booked."}]}
    ],
    "arbitrate": [
        {
            "rulings": [
                {
                    "finding_id": "F1",
                    "ruling": "accept_with_warning",
                    "reasoning": "Display only, per the coder.",
                    "warning": "Shares are rounded; never book them.",
                }
            ]
        }
    ],
}


@pytest.fixture
def patch_file(tmp_path: Path) -> Path:
    path = tmp_path / "change.diff"
    path.write_text(git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)}))
    return path


def run(args: list[str], *, key: bool = True, stdin: str | None = None) -> Result:
    env = {"ANTHROPIC_BASE_URL": BASE_URL} | ({"ANTHROPIC_API_KEY": "sk-test"} if key else {})
    return CliRunner().invoke(main, ["review", *args], env=env, input=stdin)


@respx.mock
def test_an_agreed_fix_is_printed_and_exits_zero(patch_file: Path) -> None:
    respx.post(MESSAGES_URL).mock(side_effect=by_tool(**AGREED))

    result = run([str(patch_file)])

    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"{PAYMENTS}:16  blocker  fixed · unanimous · round 1" in out
    assert UNDEFINED["claim"] in out
    assert f"Suggested replacement for {PAYMENTS}:16-16:" in out
    assert "        logger.info('refund %s %s', payment.id, amount)" in out
    assert "1 finding (1 fixed) · 1 unit · 1 round · 3 calls, 0 failed · " in out
    # Progress goes to standard error while the debate runs.
    assert "round 1 · coder · answer_findings on F1 · 2 calls" in result.stderr
    assert " · 1 call · " in result.stderr


@respx.mock
def test_an_arbiter_warning_is_printed(patch_file: Path) -> None:
    respx.post(MESSAGES_URL).mock(side_effect=by_tool(**DEADLOCK))

    result = run([str(patch_file)])

    assert result.exit_code == 0, result.output
    assert f"{PAYMENTS}:8  major  warning · arbiter (budget)" in result.stdout
    assert "Warning: Shares are rounded; never book them." in result.stdout
    assert "1 finding (1 with a warning) · " in result.stdout


@respx.mock
def test_unresolved_findings_exit_one(patch_file: Path) -> None:
    respx.post(MESSAGES_URL).mock(side_effect=by_tool(**DEADLOCK))

    result = run([str(patch_file), "--no-arbitration"])

    assert result.exit_code == 1
    assert "open · unresolved (budget)" in result.stdout
    assert "Unresolved: arbitration is turned off" in result.stdout


@respx.mock
def test_json_prints_the_review_model(patch_file: Path) -> None:
    respx.post(MESSAGES_URL).mock(side_effect=by_tool(**AGREED))

    result = run([str(patch_file), "--json"])

    review = json.loads(result.stdout)
    (unit,) = review["units"]
    (only,) = unit["findings"]
    assert (only["consensus"], only["resolution"]) == ("unanimous", "fixed")
    assert only["patch"] == LOG_FIX
    assert unit["usage_by_role"]["tester"]["input_tokens"] == 2400
    # The tester's report described nothing: no walkthrough, rather than one made up.
    assert review["walkthrough"] is None


@respx.mock
def test_the_walkthrough_opens_the_terminal_view_and_the_json(patch_file: Path) -> None:
    described = {
        "description": "Logs refunds.\x1b[31m",
        "files": [{"path": PAYMENTS, "summary": "logs each refund"}],
        "attention": [{"path": PAYMENTS, "why": "the amount is logged"}],
        "effort": 2,
    }
    (report,) = AGREED["report_findings"]
    replies = {**AGREED, "report_findings": [{**report, "walkthrough": described}]}
    route = respx.post(MESSAGES_URL)
    route.mock(side_effect=by_tool(**replies))
    shown = run([str(patch_file)]).stdout
    route.mock(side_effect=by_tool(**replies))
    printed = json.loads(run([str(patch_file), "--json"]).stdout)

    assert shown.startswith("Walkthrough\n  Logs refunds.\n  Review effort: 2/5\n")
    assert f"  {PAYMENTS}: logs each refund\n" in shown
    assert f"    {PAYMENTS}: the amount is logged\n" in shown
    assert printed["walkthrough"]["description"] == ["Logs refunds.\x1b[31m"]
    assert printed["walkthrough"]["effort"] == 2


@respx.mock
def test_policy_options_change_the_debate(patch_file: Path) -> None:
    respx.post(MESSAGES_URL).mock(
        side_effect=by_tool(
            report_findings=[{"findings": [DIVIDE]}],
            answer_findings=[
                {
                    "answers": [
                        {"finding_id": "F1", "stance": "dispute", "argument": "Display only."}
                    ]
                }
            ],
            evaluate_answers=[
                {
                    "evaluations": [
                        {"finding_id": "F1", "decision": "reject", "reason": "It is booked."}
                    ]
                }
            ],
            arbitrate=DEADLOCK["arbitrate"],
        )
    )

    result = run([str(patch_file), "--max-rounds", "1", "--json"])

    (only,) = json.loads(result.stdout)["units"][0]["findings"]
    assert only["trigger"] == "round_limit"


@respx.mock
def test_a_panel_of_testers_is_seated_from_the_command_line(patch_file: Path) -> None:
    # Two testers: the security tester raises the finding, the correctness tester accepts the
    # coder's argument, the security tester does not: an even split goes to the arbiter.
    route = respx.post(MESSAGES_URL).mock(
        side_effect=by_tool(
            report_findings=[{"findings": [DIVIDE]}, {"findings": []}],
            answer_findings=DEADLOCK["answer_findings"][:1],
            evaluate_answers=[
                {"evaluations": [{"finding_id": "F1", "decision": "reject", "reason": "Booked."}]},
                {"evaluations": [{"finding_id": "F1", "decision": "accept", "reason": "Shown."}]},
            ],
            arbitrate=DEADLOCK["arbitrate"],
        )
    )

    result = run([str(patch_file), "--testers", "2", "--focus", "security", "--json"])

    assert result.exit_code == 0, result.output
    (only,) = json.loads(result.stdout)["units"][0]["findings"]
    assert (only["raised_by"], only["consensus"], only["trigger"]) == (
        "tester-security",
        "arbiter",
        "tie",
    )
    assert only["votes"] == {"tester-security": "keep", "tester-correctness": "accept"}
    first_seed = json.loads(route.calls[0].request.content)["messages"][0]["content"]
    assert "Your focus is security" in json.dumps(first_seed)


def test_the_diff_can_come_from_standard_input(patch_file: Path) -> None:
    with respx.mock:
        respx.post(MESSAGES_URL).mock(side_effect=by_tool(report_findings=[{"findings": []}]))
        result = run(["-"], stdin=patch_file.read_text())

    assert result.exit_code == 0
    assert "No findings: the change looks sound." in result.stdout


@pytest.mark.parametrize(
    ("args", "stdin", "key", "reason"),
    [
        (["-"], "", True, "tiebreak: no file changes found"),
        (
            ["-"],
            "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n x\n",
            True,
            "tiebreak: malformed diff",
        ),
        (["-"], None, False, "tiebreak: ANTHROPIC_API_KEY is not set"),
        (["-", "--max-rounds", "0"], None, True, "Invalid value for '--max-rounds'"),
        (["-", "--testers", "6"], None, True, "Invalid value for '--testers'"),
        (["-", "--focus", "style"], None, True, "Invalid value for '--focus'"),
        (["-", "--topology", "star"], None, True, "Invalid value for '--topology'"),
        (["/no/such/file.diff"], None, True, "No such file or directory"),
    ],
)
def test_usage_and_input_errors_exit_two_with_one_line(
    patch_file: Path, args: list[str], stdin: str | None, key: bool, reason: str
) -> None:
    result = run(args, key=key, stdin=patch_file.read_text() if stdin is None else stdin)

    assert result.exit_code == 2
    assert reason in result.stderr
    assert "Traceback" not in result.output


@respx.mock
def test_a_rejected_key_exits_two_with_the_reason(patch_file: Path) -> None:
    respx.post(MESSAGES_URL).mock(
        return_value=error(401, "authentication_error", "invalid x-api-key")
    )

    result = run([str(patch_file)])

    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "tiebreak: the Anthropic API refused the call: invalid x-api-key (401)"
    )


def test_a_merge_commits_empty_git_show_hints_at_first_parent() -> None:
    shown = (
        "commit 3f2a9c1d\nMerge: 1a2b3c4 5d6e7f8\nAuthor: A <a@example.com>\n"
        "Date:   Thu Nov 26 12:00:00 2026 +0000\n\n    Merge branch 'feature'\n"
    )

    result = run(["-"], stdin=shown)

    assert result.exit_code == 2
    assert "no file changes found" in result.stderr
    assert "git show --first-parent" in result.stderr
    assert "git show -m" in result.stderr


def test_an_empty_input_that_is_no_merge_gets_no_merge_hint() -> None:
    result = run(["-"], stdin="commit 3f2a9c1d\nAuthor: A <a@example.com>\n\n    Empty\n")

    assert result.exit_code == 2
    assert "--first-parent" not in result.stderr
    # Piped in, not typed: nothing is said about reading standard input.
    assert "reading a diff from standard input" not in result.stderr


def test_help_shows_the_debates_defaults_and_where_the_key_comes_from() -> None:
    result = CliRunner().invoke(main, ["review", "--help"], terminal_width=200)

    assert result.exit_code == 0
    out = result.stdout
    assert "Rounds before open findings go to the arbiter (default 6)." in out
    assert "Starting token budget of the coder-tester edge (default 60,000)." in out
    assert "Hard token ceiling of the whole review (default 400,000)." in out
    assert "ANTHROPIC_API_KEY" in out
    assert "Amazon Bedrock (TIEBREAK_PROVIDER=bedrock)" in out
    assert "Google Vertex AI (TIEBREAK_PROVIDER=vertex)" in out
    assert "https://github.com/OWNER/REPO/pull/N" in out
