"""`tiebreak review` as a real process, against a local fake of the Messages API."""

import json
import os
import pty
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.messages_api import Error, FakeMessagesAPI, QueuedResponder
from tests.kits.command import Done, run_tiebreak
from tests.scenarios.debates import (
    AGREED,
    LOG_LINE,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    finding,
    git_diff,
    patch,
    reject,
    report,
    rulings,
    warn,
)

TIEBREAK = Path(sys.executable).with_name("tiebreak")
DIFF = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)})


def tiebreak(api: FakeMessagesAPI, *args: str, key: str | None = None, diff: str = DIFF) -> Done:
    """`tiebreak review - ARGS…` of `diff`, on `api`, with `key`, in this directory."""
    env = {"ANTHROPIC_API_KEY": key or api.api_key, "ANTHROPIC_BASE_URL": api.base_url}
    return run_tiebreak("review", "-", *args, cwd=Path.cwd(), env=env, stdin=diff)


def test_the_command_reviews_a_diff_from_standard_input() -> None:
    with FakeMessagesAPI(QueuedResponder(**AGREED)) as api:
        done = tiebreak(api)

    assert done.returncode == 0, done.stderr
    assert f"{PAYMENTS}:16  blocker  fixed · unanimous · round 1" in done.stdout
    assert LOG_LINE in done.stdout
    assert "round 1 · tester · evaluate_answers on F1 · 3 calls" in done.stderr
    # The second and third calls read the prefix the first one wrote.
    first, *later = [r.usage for r in api.requests]
    assert first is not None
    assert first.cache_creation_input_tokens > 0
    assert all(u is not None and u.cache_read_input_tokens > 0 for u in later)


def test_an_overloaded_api_is_retried_and_the_review_still_lands() -> None:
    overloaded = Error(529, "overloaded_error", "Overloaded", headers={"retry-after-ms": "10"})
    with FakeMessagesAPI.queued(report_findings=[overloaded, {"findings": []}]) as api:
        done = tiebreak(api)

    assert done.returncode == 0, done.stderr
    assert "No findings: the change looks sound." in done.stdout
    assert [r.status for r in api.requests] == [529, 200]


def test_a_refused_key_ends_with_one_line_and_status_two() -> None:
    with FakeMessagesAPI.queued(report_findings=[{"findings": []}], strict=False) as api:
        done = tiebreak(api, key="sk-revoked")

    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("tiebreak: the Anthropic API refused the call")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("failure", "said", "asked"),
    [
        (
            Error(500, "api_error", "Internal server error"),
            "the model's first call failed: the Anthropic API answered Internal server error (500)",
            2,  # one retry: the first call of a command a person waits on is not retried long
        ),
        (
            Error(529, "overloaded_error", "Overloaded", headers={"retry-after-ms": "10"}),
            "the model's first call failed: the Anthropic API answered Overloaded (529)",
            2,
        ),
        (
            Error(400, "invalid_request_error", "max_tokens: 64000 > 32000"),
            "the model's first call failed: the Anthropic API answered max_tokens: "
            "64000 > 32000 (400)",
            1,  # a request refused as invalid is not retried
        ),
        (
            Error(404, "not_found_error", "model: claude-nonesuch"),
            "the Anthropic API refused the call: model: claude-nonesuch (404)",
            1,
        ),
    ],
)
def test_a_model_that_answers_no_call_ends_with_one_line_and_status_two(
    failure: Error, said: str, asked: int
) -> None:
    with FakeMessagesAPI(lambda body: failure) as api:
        done = tiebreak(api)

    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == f"tiebreak: {said}"
    assert len(api.requests) == asked
    assert done.stdout == ""


def test_a_model_host_that_refuses_connections_ends_with_one_line_and_status_two() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}
    done = run_tiebreak("review", "-", cwd=Path.cwd(), env=env, stdin=DIFF)

    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "tiebreak: the model's first call failed: no answer from the Anthropic API: "
        "Connection error."
    )
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("name", "said"),
    [("no-such-dir", "does not exist"), ("plain", "is not in a git work tree")],
)
def test_a_mistyped_repo_is_a_usage_error_before_any_call(
    tmp_path: Path, name: str, said: str
) -> None:
    (tmp_path / "plain").mkdir()
    repo = tmp_path / name
    with FakeMessagesAPI.queued(report_findings=[{"findings": []}]) as api:
        done = tiebreak(api, "--repo", str(repo))

    assert done.returncode == 2
    assert done.stderr == f"tiebreak: --repo: {repo} {said}\n"
    assert api.requests == []


def test_a_diff_that_is_not_utf8_is_refused_at_its_first_byte_that_is_not(
    tmp_path: Path,
) -> None:
    after = PAYMENTS_AFTER.replace("log(payment.id", "log('débit', payment.id")
    assert after != PAYMENTS_AFTER
    text = git_diff({PAYMENTS: (PAYMENTS_BEFORE, after)})
    latin1 = text.encode("latin-1")
    offset = latin1.index("é".encode("latin-1"))
    (tmp_path / "change.diff").write_bytes(latin1)
    with FakeMessagesAPI.queued(report_findings=[{"findings": []}]) as api:
        env = {"ANTHROPIC_API_KEY": api.api_key, "ANTHROPIC_BASE_URL": api.base_url}
        done = run_tiebreak("review", "change.diff", cwd=tmp_path, env=env)

    assert done.returncode == 2
    assert done.stderr == (
        f"tiebreak: the diff is not UTF-8: byte {offset} (0xe9), in {PAYMENTS}, starts no "
        "UTF-8 character; Tiebreak reads UTF-8 only: convert that file's text, or leave it "
        f"out (git diff -- . ':!{PAYMENTS}')\n"
    )
    assert api.requests == []


IMAGE = "docs/logo.png"
WITH_AN_IMAGE = (
    f"{DIFF}diff --git a/{IMAGE} b/{IMAGE}\nindex f584f40..6bf43ff 100644\n"
    f"Binary files a/{IMAGE} and b/{IMAGE} differ\n"
)


def test_a_binary_file_is_counted_and_named_as_not_reviewed() -> None:
    with FakeMessagesAPI.queued(report_findings=[{"findings": []}] * 2) as api:
        done = tiebreak(api, diff=WITH_AN_IMAGE)
        as_json = tiebreak(api, "--json", diff=WITH_AN_IMAGE)

    assert done.returncode == 0, done.stderr
    assert "tiebreak: 1 unit of 2 files (1 binary, not reviewed) · about " in done.stderr
    assert f"Not reviewed (a binary file: no lines to review):\n  {IMAGE}\n" in done.stdout
    assert json.loads(as_json.stdout)["unreviewed"] == [
        {
            "path": IMAGE,
            "reason": "a binary file: no lines to review",
            "unit": None,
            "in_part": False,
        }
    ]


def test_a_terminal_with_nothing_piped_in_is_told_the_diff_is_read_from_it() -> None:
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [str(TIEBREAK), "review", "-"],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={"TIEBREAK_ENV_FILE": "", "PATH": os.environ.get("PATH", "")},
        )
        # Ctrl-D, as a person would type it: the terminal keeps it until the command reads.
        os.write(controller, b"\x04")
        _, said = process.communicate(timeout=60)
    finally:
        os.close(controller)
        os.close(terminal)

    first, *rest = said.splitlines()
    assert first == "tiebreak: reading a diff from standard input (Ctrl-D ends it)"
    assert process.returncode == 2
    assert "no file changes found" in rest[-1]


DRIVES = "\x1b]0;pwned\x07\x07\x1b[2J\x1b[H\x1b[5A\x9b2J\u202e\u200b\x7f"
"""What would drive a terminal: an OSC retitling its window, a bell, the screen cleared, the
cursor sent home and up, an 8-bit CSI, a right-to-left override, a zero-width space, a DEL."""
DRIVING = ("\x1b]", "\x07", "\x1b[2J", "\x1b[H", "\x1b[5A", "\x9b", "\u202e", "\u200b", "\x7f")


def driven(text: str) -> str:
    """`text` with the sequences above in its middle."""
    middle = len(text) // 2
    return text[:middle] + DRIVES + text[middle:]


CLAIM = "`log` is not defined anywhere: every refund raises NameError."
REPLACEMENT = "    logger.info('refund %s %s', payment.id, amount)"
DIVIDE = "Quantizing each share loses the remainder."
WARNING = "Shares are rounded; never book them."
DESCRIPTION = "Refunds are checked against the balance and logged."
HOSTILE: dict[str, list[Any]] = {
    "report_findings": [
        {
            **report(finding(16, driven(CLAIM), "blocker"), finding(8, driven(DIVIDE))),
            "walkthrough": {
                "description": driven(DESCRIPTION),
                "files": [{"path": PAYMENTS, "summary": driven("checks and logs refunds")}],
                "attention": [],
            },
        }
    ],
    "answer_findings": [
        answers(concede("F1", patch(16, driven(REPLACEMENT))), dispute("F2", "Display only."))
    ],
    "evaluate_answers": [evaluations(accept("F1"), reject("F2", "It is booked."))],
    "arbitrate": [rulings(warn("F2", driven(WARNING)))],
}
"""A review whose every text shown in the terminal carries what would drive it."""


def on_a_terminal(api: FakeMessagesAPI, *args: str, cwd: Path) -> tuple[str, str]:
    """`tiebreak review` of DIFF with `args`, its standard output a terminal: what the
    terminal was sent, and standard error."""
    (cwd / "change.diff").write_text(DIFF)
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [str(TIEBREAK), "review", "change.diff", "--max-rounds", "1", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=terminal,
            stderr=subprocess.PIPE,
            env={
                "ANTHROPIC_API_KEY": api.api_key,
                "ANTHROPIC_BASE_URL": api.base_url,
                "TIEBREAK_ENV_FILE": "",
                "PATH": os.environ.get("PATH", ""),
            },
        )
        os.close(terminal)
        sent = bytearray()
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the command closed the terminal
                break
            if not chunk:
                break
            sent += chunk
        _, said = process.communicate(timeout=60)
    finally:
        os.close(controller)
    return sent.decode(), said.decode()


def test_model_text_never_drives_the_terminal_and_the_text_around_it_shows(
    tmp_path: Path,
) -> None:
    with FakeMessagesAPI(QueuedResponder(**HOSTILE)) as api:
        shown, said = on_a_terminal(api, cwd=tmp_path)

    assert [s for s in DRIVING if s in shown] == [], shown
    assert "pwned" not in shown  # the sequences went whole
    assert f"  {CLAIM}" in shown
    assert f"  {DIVIDE}" in shown
    assert f"    {REPLACEMENT}" in shown
    assert f"Warning: {WARNING}" in shown
    assert f"  {DESCRIPTION}" in shown
    assert f"  {PAYMENTS}: checks and logs refunds" in shown
    assert "1 fixed, 1 with a warning" in shown, said


def test_json_on_a_terminal_keeps_the_model_s_text_as_data_and_drives_nothing(
    tmp_path: Path,
) -> None:
    with FakeMessagesAPI(QueuedResponder(**HOSTILE)) as api:
        shown, said = on_a_terminal(api, "--json", cwd=tmp_path)

    assert [s for s in DRIVING if s in shown] == [], shown
    review = json.loads(shown)
    claims = {f["finding"]["claim"] for u in review["units"] for f in u["findings"]}
    assert claims == {driven(CLAIM), driven(DIVIDE)}, said
    assert review["walkthrough"]["description"] == [driven(DESCRIPTION)]


def test_a_diff_in_colour_is_said_to_be_in_colour(tmp_path: Path) -> None:
    coloured = "".join(f"\x1b[1m{line}\x1b[m\n" for line in DIFF.splitlines())

    done = run_tiebreak("review", "-", stdin=coloured, cwd=tmp_path)

    assert done.returncode == 2
    assert done.stderr == (
        "tiebreak: the diff has colour escape codes: make it with --no-color (or --color=never)\n"
    )


def test_a_stat_summary_is_said_to_be_no_diff(tmp_path: Path) -> None:
    summary = " payments.py | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"

    done = run_tiebreak("review", "-", stdin=summary, cwd=tmp_path)

    assert done.returncode == 2
    assert done.stderr == (
        "tiebreak: this is a --stat summary, not a diff: make it without --stat\n"
    )


def test_the_config_and_command_taken_from_the_base_are_announced(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git = ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".github").mkdir()
    (repo / ".github" / "tiebreak.yml").write_text(
        "verify:\n  command: python -m pytest -q {test}\n  setup: make deps\n"
    )
    (repo / "payments.py").write_text(PAYMENTS_BEFORE)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    base = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "payments.py").write_text(PAYMENTS_AFTER)
    subprocess.run([*git, "commit", "-qam", "head"], check=True)
    change = subprocess.run(
        [*git, "diff", "HEAD~1", "HEAD"], capture_output=True, text=True, check=True
    ).stdout

    refused = Error(401, "authentication_error", "invalid x-api-key")
    with FakeMessagesAPI.queued(report_findings=[refused]) as api:
        done = run_tiebreak(
            "review", "-", "--repo", str(repo), "--base", "HEAD~1", stdin=change, cwd=tmp_path,
            env={"ANTHROPIC_API_KEY": api.api_key, "ANTHROPIC_BASE_URL": api.base_url},
        )  # fmt: skip

    lines = done.stderr.splitlines()
    assert f"tiebreak: config: .github/tiebreak.yml at HEAD~1 ({base[:7]})" in lines
    assert (
        "tiebreak: findings' tests: python -m pytest -q {test}, after make deps "
        "(from .github/tiebreak.yml at HEAD~1)"
    ) in lines


def test_ctrl_c_ends_the_review_with_130_and_what_was_spent(tmp_path: Path) -> None:
    asked, answered = threading.Event(), threading.Event()

    def held(body: dict[str, Any]) -> Error:
        asked.set()  # the coder is being asked: the tester's report is spent
        answered.wait(timeout=60)
        return Error(500, "api_error", "Ended")

    with FakeMessagesAPI(QueuedResponder(report_findings=AGREED["report_findings"],
                                         answer_findings=[held])) as api:  # fmt: skip
        (tmp_path / "change.diff").write_text(DIFF)
        running = subprocess.Popen(
            [str(TIEBREAK), "review", "change.diff"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "ANTHROPIC_API_KEY": api.api_key,
                 "ANTHROPIC_BASE_URL": api.base_url, "TIEBREAK_ENV_FILE": ""},
            # As a shell starts a command at a terminal: Ctrl-C's signal not ignored, whatever
            # the test's own parent (a CI job in the background) chose to ignore.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        assert asked.wait(timeout=60)
        running.send_signal(signal.SIGINT)
        try:
            _, err = running.communicate(timeout=60)
        finally:
            answered.set()
            running.kill()  # nothing left running, whatever happened
            running.wait()

    assert running.returncode == 130, err
    (call,) = [line for line in err.splitlines() if "report_findings" in line]
    billed = call.rsplit(" · ", 1)[-1]  # the tester's report: "N billed tokens"
    # Two calls: the report, and the coder's, cut short (billed nothing).
    assert err.splitlines()[-1] == f"tiebreak: interrupted: 2 calls · {billed} spent"
    assert "Aborted!" not in err
