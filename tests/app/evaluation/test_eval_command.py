"""`tiebreak eval` on shipped cases, over the real Anthropic SDK against the local fake
Messages API: an oracle model that reports each case's labelled bug and nothing else."""

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agents.diff import Diff
from app.cli.main import main
from tests.fakes.messages_api import Body, FakeMessagesAPI, Reply

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "eval" / "cases" / "real-bugs.jsonl"
TIEBREAK = Path(sys.executable).with_name("tiebreak")
IDS = ["aiohttp-bug-8eaa03ea", "requests-bug-8f591682", "requests-bug-edc68a0a"]
CASES = [json.loads(line) for line in SHIPPED.read_text(encoding="utf-8").splitlines()]
CLEAN = min((c for c in CASES if not c["bug"]), key=lambda c: len(c["diff"]))["id"]
_IDS = re.compile(r'"(?:id|finding_id)":"(F\d+)"')


def oracle(body: Body) -> Reply:
    """Report the labelled lines of the case whose diff is under review; dispute, keep and
    warn on everything after that."""
    # The diff travels in the system prompt (cached); the turn's findings in the message.
    diff_text = "".join(b["text"] for b in body["system"])
    rest = "".join(b["text"] for m in body["messages"] for b in m["content"] if b["type"] == "text")
    tool = body["tool_choice"]["name"]
    ids = list(dict.fromkeys(_IDS.findall(rest)))
    if tool == "report_findings":
        return {"findings": _labels(diff_text)}
    if tool == "answer_findings":
        return {
            "answers": [{"finding_id": i, "stance": "dispute", "argument": "Fine."} for i in ids]
        }
    if tool == "evaluate_answers":
        return {
            "evaluations": [{"finding_id": i, "decision": "reject", "reason": "No."} for i in ids]
        }
    rulings = [
        {
            "finding_id": i,
            "ruling": "accept_with_warning",
            "reasoning": "So.",
            "warning": "Careful.",
        }
        for i in ids
    ]
    return {"rulings": rulings}


def _labels(diff_text: str) -> list[dict[str, Any]]:
    for case in CASES:
        hunks = [h.text for f in Diff.parse(case["diff"]).files for h in f.hunks]
        if any(h in diff_text for h in hunks):
            return [
                {
                    "path": bug["path"],
                    "start_line": bug["lines"][0],
                    "end_line": bug["lines"][0],
                    "severity": "major",
                    "claim": case["bug_summary"][:200],
                }
                for bug in case["bug"]
            ]
    raise AssertionError("a diff of no shipped case")


def run(api: FakeMessagesAPI, *args: str, yes: bool = True) -> Result:
    env = {"ANTHROPIC_API_KEY": api.api_key, "ANTHROPIC_BASE_URL": api.base_url}
    return CliRunner().invoke(main, ["eval", str(SHIPPED), *args, *["--yes"][:yes]], env=env)


@pytest.fixture
def api() -> Any:
    with FakeMessagesAPI(oracle) as fake:
        yield fake


def test_shipped_cases_are_scored_and_an_interrupted_run_resumes(
    api: FakeMessagesAPI, tmp_path: Path
) -> None:
    ids = ",".join([*IDS, CLEAN])
    result = run(api, "--ids", ids, "--json", "--out", str(tmp_path), "--jobs", "2")

    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc["configs"]) == {"single", "vote", "trio", "panel"}
    for name, figures in doc["configs"].items():
        assert figures["recall"] == 1.0, name
        assert figures["precision"] == 1.0, name
        assert figures["false_alarms_per_clean_case"] == 0.0, name
        assert figures["billed_tokens_per_case"] > 0, name
        assert figures["cases"] == 4, name
    assert len(doc["cases"]) == 16
    assert all(c["error"] is None for c in doc["cases"])
    # What it may spend, then each run and the spend so far, on standard error.
    estimate, *lines = result.stderr.splitlines()
    assert estimate == (
        "tiebreak: 4 cases under 4 configurations: 16 runs to do, billing at most 6,400,000 "
        "tokens (each review's token ceiling)"
    )
    assert len(lines) == 16
    spent = [int(re.sub(r"\D", "", line.split(" · ")[-1])) for line in lines]
    assert lines[-1].startswith("tiebreak: 16/16 · ")
    assert spent == sorted(spent)
    assert spent[-1] == sum(c["billed_tokens"] for c in doc["cases"])
    paid = len(api.requests)

    again = run(api, "--ids", ids, "--json", "--out", str(tmp_path))

    assert again.exit_code == 0, again.stderr
    assert len(api.requests) == paid
    assert again.stderr.splitlines()[-1].startswith("tiebreak: 16/16 · ")
    assert again.stderr.endswith(" · 0 billed tokens so far\n")
    assert json.loads(again.stdout)["configs"] == doc["configs"]


def test_the_table_compares_the_chosen_configurations(api: FakeMessagesAPI) -> None:
    result = run(api, "--limit", "1", "--configs", "single,trio", "--tolerance", "0")

    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("config  recall [95% CI]")
    assert [line.split()[0] for line in lines[1:]] == ["single", "trio"]
    assert all(line.split()[1] == "1.00" for line in lines[1:])


def test_a_rejected_key_fails_every_case_without_stopping_the_run(tmp_path: Path) -> None:
    with FakeMessagesAPI(oracle, api_key="the-right-key", strict=False) as fake:
        env = {"ANTHROPIC_API_KEY": "a-wrong-key", "ANTHROPIC_BASE_URL": fake.base_url}
        result = CliRunner().invoke(
            main,
            [
                "eval",
                str(SHIPPED),
                "--ids",
                ",".join(IDS),
                "--configs",
                "single",
                "--json",
                "--yes",
            ],
            env=env,
        )

    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [c["error"] is not None for c in doc["cases"]] == [True] * 3
    assert doc["configs"]["single"]["cases"] == 0
    assert doc["configs"]["single"]["recall"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--configs", "single,debate"], "unknown configuration debate"),
        (["--ids", "no-such-case"], "--ids: no case no-such-case"),
    ],
)
def test_bad_options_are_refused(api: FakeMessagesAPI, args: list[str], message: str) -> None:
    result = run(api, *args)

    assert result.exit_code == 2
    assert message in result.stderr


def test_off_a_terminal_nothing_runs_without_yes(api: FakeMessagesAPI) -> None:
    result = run(api, "--ids", IDS[0], "--configs", "single,trio", "--budget", "20000", yes=False)

    assert result.exit_code == 2
    assert result.stderr == (
        "tiebreak: 1 case under 2 configurations: 2 runs to do, billing at most 40,000 tokens "
        "(--budget)\n"
        "tiebreak: no terminal to confirm the spend on: pass --yes to run without asking\n"
    )
    assert api.requests == []


@pytest.mark.parametrize(("answer", "calls"), [("n", False), ("y", True)])
def test_on_a_terminal_eval_asks_before_it_spends(answer: str, calls: bool) -> None:
    with FakeMessagesAPI(oracle) as api:
        env = {
            "ANTHROPIC_API_KEY": api.api_key,
            "ANTHROPIC_BASE_URL": api.base_url,
            "TIEBREAK_ENV_FILE": "",
        }
        args = ["eval", str(SHIPPED), "--ids", IDS[0], "--configs", "single"]
        leader, terminal = pty.openpty()
        os.write(leader, f"{answer}\n".encode())
        with os.fdopen(terminal) as stdin:
            result = subprocess.run(
                [str(TIEBREAK), *args], stdin=stdin, env=env, capture_output=True, text=True,
                timeout=60, check=False,
            )  # fmt: skip
        os.close(leader)

        assert "billing at most 400,000 tokens (each review's token ceiling)\n" in result.stderr
        assert "Start? [y/N]: " in result.stderr
        assert (result.returncode, bool(api.requests)) == ((0, True) if calls else (1, False))


def test_on_a_terminal_a_missing_key_is_said_before_the_spend_is_asked() -> None:
    leader, terminal = pty.openpty()
    os.write(leader, b"y\n")
    with os.fdopen(terminal) as stdin:
        result = subprocess.run(
            [str(TIEBREAK), "eval", str(SHIPPED), "--ids", IDS[0], "--configs", "single"],
            stdin=stdin, env={"TIEBREAK_ENV_FILE": ""}, capture_output=True, text=True,
            timeout=60, check=False,
        )  # fmt: skip
    os.close(leader)

    assert result.returncode == 2
    assert result.stderr == "tiebreak: ANTHROPIC_API_KEY is not set\n"


def test_an_out_directory_that_cannot_be_made_is_said_before_anything_runs(
    api: FakeMessagesAPI, tmp_path: Path
) -> None:
    taken = tmp_path / "results"
    taken.write_text("a file where the results would go\n")

    result = run(api, "--ids", IDS[0], "--configs", "single", "--out", str(taken / "eval"))

    assert result.exit_code == 2
    assert result.stderr.startswith(f"tiebreak: --out: cannot write to {taken / 'eval'}: ")
    assert len(result.stderr.splitlines()) == 1
    assert api.requests == []


def test_without_a_key_nothing_runs() -> None:
    result = CliRunner().invoke(main, ["eval", str(SHIPPED), "--yes"])

    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY is not set" in result.stderr


def test_help_names_both_commands() -> None:
    result = CliRunner().invoke(main, ["eval", "--help"])

    assert result.exit_code == 0
    usage = result.stdout.splitlines()[0]
    assert usage.endswith(" eval [OPTIONS] CASES.jsonl [OPTIONS] | cases --repo DIR")
    assert "tiebreak eval CASES.jsonl" in result.stdout
    assert "tiebreak eval cases --repo DIR" in result.stdout
