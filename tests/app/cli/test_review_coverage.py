"""`tiebreak review` on a diff its ceiling cannot cover: the estimate comes first, the
riskiest files are reviewed, every file left is named with its reason, and one billed total
stands for what was spent."""

import json
import re
from pathlib import Path

import httpx
import pytest
import respx
from click.testing import CliRunner, Result

from app.cli.main import main
from tests.kits.messages import BASE_URL, MESSAGES_URL, forced_tool, message
from tests.scenarios.coverage import (
    CALL_BILLED,
    CALL_INPUT_TOKENS,
    CALL_OUTPUT_TOKENS,
    LARGE_DIFF,
    RISKIEST_FIRST,
    ceiling_for_two_units,
)

REVIEWED, LEFT = RISKIEST_FIRST[:2], RISKIEST_FIRST[2:]


def nothing_found(request: httpx.Request) -> httpx.Response:
    """Every unit's report finds nothing, one expensive call a unit, and says which files it
    read (the request's diff block names them)."""
    assert forced_tool(request) == "report_findings"
    return message(
        "report_findings",
        {"findings": []},
        input_tokens=CALL_INPUT_TOKENS,
        output_tokens=CALL_OUTPUT_TOKENS,
    )


@pytest.fixture
def reviewed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Result, Result]:
    """The review run twice, as text and as JSON, with a ceiling for two units of five, in a
    directory that is no checkout (the diff alone is read)."""
    patch = tmp_path / "large.diff"
    patch.write_text(LARGE_DIFF)
    monkeypatch.chdir(tmp_path)
    args = ["review", str(patch), "--ceiling", str(ceiling_for_two_units())]
    env = {"ANTHROPIC_BASE_URL": BASE_URL, "ANTHROPIC_API_KEY": "sk-test"}
    results = []
    for extra in ([], ["--json"]):
        with respx.mock:
            route = respx.post(MESSAGES_URL).mock(side_effect=nothing_found)
            results.append(CliRunner().invoke(main, [*args, *extra], env=env))
            diffs = [json.loads(call.request.content) for call in route.calls]
        # The units the ceiling reached are the riskiest: the calls read them, nothing else.
        read = " ".join(json.dumps(body) for body in diffs)
        assert len(diffs) == 2
        assert all(f"+++ b/{path}" in read for path in REVIEWED)
        assert not any(f"+++ b/{path}" in read for path in LEFT)
    text, as_json = results
    return text, as_json


def test_the_estimate_comes_before_the_first_call(reviewed: tuple[Result, Result]) -> None:
    text, _ = reviewed
    lines = text.stderr.splitlines()
    (estimate,) = [n for n, line in enumerate(lines) if "5 units of 5 files" in line]
    first_call = next(n for n, line in enumerate(lines) if "report_findings" in line)

    assert estimate < first_call
    assert f"against a ceiling of {ceiling_for_two_units():,}" in lines[estimate]
    assert "it may cover only the first" in lines[estimate]


def test_progress_names_the_unit_and_how_many_there_are(reviewed: tuple[Result, Result]) -> None:
    text, _ = reviewed

    assert "unit 1/5 · round 0 · tester · report_findings" in text.stderr
    assert "unit 2/5 · round 0 · tester · report_findings" in text.stderr


def test_every_file_left_is_named_with_its_reason_in_the_terminal(
    reviewed: tuple[Result, Result],
) -> None:
    text, _ = reviewed
    out = text.stdout

    assert text.exit_code == 1, out
    (heading,) = [line for line in out.splitlines() if line.startswith("Not reviewed")]
    assert "token ceiling reached" in heading
    named = out.split(heading, 1)[1].split("\n\n", 1)[0].split()
    assert named == list(LEFT)
    assert not any(path in out for path in REVIEWED)


def test_every_file_left_is_named_with_its_reason_in_json(reviewed: tuple[Result, Result]) -> None:
    _, as_json = reviewed
    review = json.loads(as_json.stdout)

    assert [(u["path"], u["unit"]) for u in review["unreviewed"]] == [
        (path, f"u{n}") for n, path in enumerate(LEFT, 3)
    ]
    assert all("token ceiling reached" in u["reason"] for u in review["unreviewed"])
    assert [u["paths"] for u in review["units"]] == [[path] for path in RISKIEST_FIRST]
    estimate = review["estimate"]
    assert (len(estimate["units"]), estimate["files"]) == (5, 5)
    assert estimate["ceiling"] == ceiling_for_two_units() < estimate["tokens"]


def test_one_billed_total_stands_for_what_was_spent(reviewed: tuple[Result, Result]) -> None:
    """The last progress line, the totals and the reasons agree: no figure counts the
    reservations of calls under way as spent."""
    text, _ = reviewed
    progress = [line for line in text.stderr.splitlines() if "report_findings" in line]

    assert progress[-1].endswith(f"2 calls · {2 * CALL_BILLED:,} billed tokens")
    assert f"{2 * CALL_BILLED:,} billed tokens (tester {2 * CALL_BILLED:,})" in text.stdout
    assert not re.search(r"\d spent", text.stdout + text.stderr)
