"""`tiebreak review` as a real process, against a local fake of the Messages API."""

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.fakes.messages_api import Error, FakeMessagesAPI, QueuedResponder
from tests.scenarios.debates import (
    AGREED,
    LOG_LINE,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    git_diff,
)

TIEBREAK = Path(sys.executable).with_name("tiebreak")
DIFF = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)})


def tiebreak(
    api: FakeMessagesAPI, *args: str, key: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        "ANTHROPIC_API_KEY": key or api.api_key,
        "ANTHROPIC_BASE_URL": api.base_url,
        "TIEBREAK_ENV_FILE": "",  # no .env from the working directory
    }
    return subprocess.run(
        [str(TIEBREAK), "review", "-", *args],
        input=DIFF,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


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
