"""Tiebreak end to end, across real processes.

`tiebreak serve` runs as a subprocess with its embedded redis-server, talking to a local fake
GitHub and a local fake Messages API; the test delivers signed webhooks over HTTP and reads
what landed on the pull request from the fake GitHub. The server logs at DEBUG to a file, which
must hold JSON lines and, once the server has stopped, no secret of the whole run.
"""

import asyncio
import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from app.store.embedded import recorded_url, redis_dir
from app.store.learnings import LearningStore, Repository
from app.telemetry.redaction import REDACTED
from policies.config import parse_config
from policies.learnings import LearnedRule, Learning, LearningSource
from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key
from tests.fakes.loopback import free_port
from tests.fakes.messages_api import FakeMessagesAPI
from tests.scenarios.debates import (
    LOG_FIX,
    LOG_LINE,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    UNDEFINED,
    finding,
    git_diff,
)
from tests.scenarios.webhooks import SECRET, payload, signed

TIEBREAK = Path(sys.executable).with_name("tiebreak")
APP_ID, INSTALLATION, REPO = 42, 9, "octo/shop"
API_KEY = "sk-e2e"
DIFF = git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)})
DEADLINE = 60.0


LEDGER = "app/ledger.py"
LEDGER_DIFF = git_diff({LEDGER: ("TOTAL = 0\n", "TOTAL = 0\nRATE = 1 / 0\n")})
DIVISION = finding(2, "Dividing by zero raises at import time.", "blocker", path=LEDGER)


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The models agree on one fix in the payments change; on the ledger change they deadlock
    and the arbiter answers nonsense, so the finding stays unresolved."""
    ledger = any(LEDGER in block["text"] for block in body["system"])
    tool = body["tool_choice"]["name"]
    if ledger:
        match tool:
            case "report_findings":
                return {"findings": [DIVISION]}
            case "answer_findings":
                return {
                    "answers": [
                        {
                            "finding_id": "F1",
                            "stance": "dispute",
                            "argument": "It is a placeholder.",
                        }
                    ]
                }
            case "evaluate_answers":
                return {
                    "evaluations": [
                        {"finding_id": "F1", "decision": "reject", "reason": "It still raises."}
                    ]
                }
            case _:
                return {"rulings": "I decline to rule."}
    match tool:
        case "report_findings":
            return {"findings": [UNDEFINED]}
        case "answer_findings":
            return {
                "answers": [
                    {
                        "finding_id": "F1",
                        "stance": "concede",
                        "argument": "Right.",
                        "patch": LOG_FIX,
                    }
                ]
            }
        case _:
            return {"evaluations": [{"finding_id": "F1", "decision": "accept", "reason": "Fixed."}]}


class Tiebreak:
    """A `tiebreak serve` process, the fakes it talks to, and the file it logs to."""

    def __init__(
        self, github: FakeGitHub, port: int, log: Path, key: AppKey, data_dir: Path
    ) -> None:
        self.github = github
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self.key = key
        self.data_dir = data_dir

    def deliver(self, event: str, body: dict[str, Any], **options: Any) -> int:
        raw, headers = signed(event, body, **options)
        request = urllib.request.Request(
            f"{self.url}/api/github/webhooks", data=raw, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return int(error.code)

    def open_pull(self, number: int, head: str, diff: str = DIFF) -> dict[str, Any]:
        """Open a pull request on the fake GitHub; return its `opened` delivery."""
        self.github.add_pull(REPO, number, head_sha=head, base_sha="b" * 40, diff=diff)
        body = payload("pull_request/opened")
        body["installation"] = {"id": INSTALLATION}
        body["repository"]["name"], body["repository"]["owner"]["login"] = "shop", "octo"
        body["pull_request"]["number"] = number
        body["pull_request"]["head"]["sha"] = head
        return body

    def wait_until_completed(self, head: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            runs = [c for c in self.github.check_runs(REPO) if c.head_sha == head]
            if runs and all(c.status == "completed" for c in runs):
                return
            time.sleep(0.1)
        raise AssertionError(f"no completed check run for {head} within {DEADLINE} s")

    def log_lines(self) -> list[str]:
        """The lines logged so far (a line still being written is left for later)."""
        text = self.log.read_text(encoding="utf-8")
        return text[: text.rfind("\n") + 1].splitlines()

    def secrets(self) -> list[str]:
        """Every credential of the run: the server's own, and those minted while it ran."""
        pem = self.key.private_pem.splitlines()
        return [
            SECRET,
            API_KEY,
            *(line for line in pem if line and not line.startswith("-----")),
            *self.github.issued_tokens,
            *self.github.app_jwts,
            *self.transcript_tokens(),
        ]

    def transcript_tokens(self) -> list[str]:
        """The tokens of the transcript links on the check runs: each opens private code."""
        urls = [c.details_url for c in self.github.check_runs(REPO) if c.details_url]
        return [parse_qs(urlsplit(url).query)["token"][0] for url in urls]

    def get(self, url: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as error:
            return int(error.code), error.read().decode()

    def leaks(self) -> list[str]:
        """The secrets found anywhere in the log."""
        text = self.log.read_text(encoding="utf-8")
        return [secret for secret in self.secrets() if secret in text]


@pytest.fixture(scope="module")
def tiebreak(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tiebreak]:
    key = new_app_key()
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "serve.log"
    data_dir = tmp_path_factory.mktemp("data")
    with (
        FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as github,
        FakeMessagesAPI(model, api_key=API_KEY) as messages,
        log.open("wb") as stderr,
    ):
        github.add_installation(INSTALLATION, repos=[REPO])
        env = {
            "PATH": os.environ.get("PATH", ""),
            "GITHUB_APP_ID": str(APP_ID),
            "GITHUB_PRIVATE_KEY": key.private_pem,
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "GITHUB_API_URL": github.base_url,
            "ANTHROPIC_API_KEY": API_KEY,
            "ANTHROPIC_BASE_URL": messages.base_url,
            "TIEBREAK_DATA_DIR": str(data_dir),
            "PUBLIC_URL": f"http://127.0.0.1:{port}",
            # The HTTP clients' own lines too: headers and URLs are where credentials travel.
            "TIEBREAK_LOG_LEVEL": "DEBUG",
            "TIEBREAK_ENV_FILE": "",  # no .env from the working directory
        }
        # Its own process group, as a terminal runs a command: Ctrl-C signals the whole group.
        process = subprocess.Popen(
            [str(TIEBREAK), "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            process_group=0,
        )
        served = Tiebreak(github, port, log, key, data_dir)
        try:
            _wait_for_health(f"http://127.0.0.1:{port}/healthz", process, log)
            yield served
        finally:
            os.killpg(process.pid, signal.SIGINT)  # Ctrl-C
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        # The whole run, shutdown included, every test of this module: JSON lines, no secret.
        assert [line for line in served.log_lines() if not _is_json(line)] == []
        assert served.leaks() == []


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _wait_for_health(url: str, process: "subprocess.Popen[bytes]", log: Path) -> None:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            errors = log.read_text(encoding="utf-8", errors="replace")
            raise AssertionError(f"tiebreak serve exited with {process.returncode}:\n{errors}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("tiebreak serve did not become healthy")


def test_an_opened_pull_request_gets_a_review_and_a_check_run(tiebreak: Tiebreak) -> None:
    head = "1" * 40

    assert tiebreak.deliver("pull_request", tiebreak.open_pull(1, head), delivery="d-1") == 202
    tiebreak.wait_until_completed(head)
    # One line for the delivery, the endpoint's own: no access line besides it.
    # Read as the records they are: an id elsewhere in a line (a run's, a job's) may hold "d-1".
    records = [json.loads(line) for line in tiebreak.log_lines() if line.startswith("{")]
    (line,) = [
        r
        for r in records
        if r.get("delivery_id") == "d-1" or "/api/github/webhooks" in r.get("message", "")
    ]
    assert (line["delivery_id"], line["message"]) == ("d-1", "webhook answered 202: enqueued")

    (review,) = tiebreak.github.reviews(REPO, 1)
    (comment,) = review.comments
    assert (comment.path, comment.line) == (PAYMENTS, 16)
    assert f"```suggestion\n{LOG_LINE}\n```" in comment.body
    (check,) = [c for c in tiebreak.github.check_runs(REPO) if c.head_sha == head]
    assert check.states == [("in_progress", None), ("completed", "neutral")]
    assert tiebreak.github.issue_labels(REPO, 1) == []
    assert tiebreak.github.problems == []


def test_a_deadlock_the_arbiter_cannot_settle_labels_the_pull_request(tiebreak: Tiebreak) -> None:
    head = "5" * 40

    assert tiebreak.deliver("pull_request", tiebreak.open_pull(5, head, LEDGER_DIFF)) == 202
    tiebreak.wait_until_completed(head)

    assert tiebreak.github.issue_labels(REPO, 5) == ["Unresolved"]
    (check,) = [c for c in tiebreak.github.check_runs(REPO) if c.head_sha == head]
    assert check.states[-1] == ("completed", "action_required")
    (review,) = tiebreak.github.reviews(REPO, 5)
    (comment,) = review.comments
    assert (comment.path, comment.line) == (LEDGER, 2)
    assert "It is a placeholder." in comment.body
    # The check run's Details link opens the debate on the server, and only with its token.
    assert check.details_url is not None
    assert check.details_url.startswith(f"{tiebreak.url}/runs/")
    status, page = tiebreak.get(check.details_url)
    assert status == 200
    assert "Dividing by zero raises at import time." in page
    assert "It is a placeholder." in page
    assert tiebreak.get(check.details_url.split("?")[0])[0] == 404
    # The access log names the request, never the token (the module checks every line).
    assert any("GET /runs/" in line and "token=[REDACTED]" in line for line in tiebreak.log_lines())


def test_a_pull_request_the_config_ignores_by_its_label_gets_no_review(tiebreak: Tiebreak) -> None:
    head, base = "7" * 40, "c" * 40
    config = "ignore:\n  labels: [no-review]\n"
    body = tiebreak.open_pull(7, head)
    # On a base of its own: the other pull requests' base has no config.
    tiebreak.github.add_pull(REPO, 7, head_sha=head, base_sha=base, diff=DIFF)
    tiebreak.github.set_file(REPO, base, ".github/tiebreak.yml", config)
    tiebreak.github.label_pull(REPO, 7, "No-Review")

    assert tiebreak.deliver("pull_request", body) == 202
    said = "not reviewed: the config ignores pull requests labelled 'No-Review'"
    deadline = time.monotonic() + DEADLINE
    while not any(said in line for line in tiebreak.log_lines()):
        assert time.monotonic() < deadline, f"no {said!r} in the log within {DEADLINE} s"
        time.sleep(0.1)

    assert [c for c in tiebreak.github.check_runs(REPO) if c.head_sha == head] == []
    assert tiebreak.github.reviews(REPO, 7) == []


def test_one_delivery_sent_twenty_times_at_once_makes_one_review(tiebreak: Tiebreak) -> None:
    head = "2" * 40
    body = tiebreak.open_pull(2, head)

    with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(
            pool.map(
                lambda _: tiebreak.deliver("pull_request", body, delivery="same-delivery"),
                range(20),
            )
        )
    tiebreak.wait_until_completed(head)

    assert sorted(answers) == [200] * 19 + [202]
    assert len(tiebreak.github.reviews(REPO, 2)) == 1
    assert len([c for c in tiebreak.github.check_runs(REPO) if c.head_sha == head]) == 1


def test_status_in_another_terminal_finds_the_servers_own_redis(tiebreak: Tiebreak) -> None:
    # As a second terminal runs it: the same data directory, no REDIS_URL.
    status = subprocess.run(
        [str(TIEBREAK), "status", "--once"],
        env={"TIEBREAK_DATA_DIR": str(tiebreak.data_dir), "TIEBREAK_ENV_FILE": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert status.returncode == 0, status.stderr
    assert "live run" in status.stdout
    (line,) = [json.loads(line) for line in tiebreak.log_lines() if "own Redis" in line]
    assert re.fullmatch(
        r"tiebreak serve's own Redis is at unix:///\S+/redis\.sock \(written to .+\)",
        line["message"],
    )


def test_learnings_export_in_another_terminal_finds_the_servers_own_redis(
    tiebreak: Tiebreak,
) -> None:
    # What a review taught, kept where the server keeps it: in its own Redis.
    served = recorded_url(redis_dir(tiebreak.data_dir))
    assert served is not None
    asyncio.run(_teach(served, "Amounts are integer cents; do not flag the division."))

    # As a second terminal runs it: the same data directory, no REDIS_URL, as for status.
    export = subprocess.run(
        [str(TIEBREAK), "learnings", "export", "--repo", REPO],
        env={"TIEBREAK_DATA_DIR": str(tiebreak.data_dir), "TIEBREAK_ENV_FILE": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert export.returncode == 0, export.stderr
    config, problems = parse_config(export.stdout)
    assert problems == []
    assert config.learnings.rules == (
        LearnedRule(rule="Amounts are integer cents; do not flag the division.", paths=("**",)),
    )


async def _teach(redis_url: str, rule: str) -> None:
    async with LearningStore.at(redis_url) as store:
        await store.record(
            Repository(77, REPO),
            Learning(
                rule=rule,
                paths=("**",),
                source=LearningSource.WITHDRAWN,
                taught_by="octocat",
                thread_url=f"https://github.com/{REPO}/pull/1#discussion_r1",
            ),
        )


def test_a_bad_signature_produces_nothing(tiebreak: Tiebreak) -> None:
    head = "3" * 40
    body = tiebreak.open_pull(3, head)

    assert tiebreak.deliver("pull_request", body, secret="not-the-secret") == 401
    # A good delivery for another pull request goes all the way through meanwhile.
    assert tiebreak.deliver("pull_request", tiebreak.open_pull(4, "4" * 40)) == 202
    tiebreak.wait_until_completed("4" * 40)

    assert [c for c in tiebreak.github.check_runs(REPO) if c.head_sha == head] == []
    assert tiebreak.github.reviews(REPO, 3) == []


def test_the_logs_say_what_each_line_is_about_and_hold_no_secret(tiebreak: Tiebreak) -> None:
    head = "6" * 40
    body = tiebreak.open_pull(6, head)
    # Secrets sent where the server logs them: a refused delivery's line names its claimed id.
    bait = "ghs_" + "Q" * 36  # shaped like an installation token
    for claimed in (SECRET, bait):
        assert tiebreak.deliver("pull_request", body, delivery=claimed, secret="wrong") == 401

    assert tiebreak.deliver("pull_request", body, delivery="d-logs") == 202
    tiebreak.wait_until_completed(head)

    records = [json.loads(line) for line in tiebreak.log_lines()]  # every line is JSON
    answered = next(r for r in records if r.get("delivery_id") == "d-logs")
    assert answered["message"] == "webhook answered 202: enqueued"
    assert (answered["event"], answered["repository"], answered["pull_number"]) == (
        "pull_request",
        REPO,
        6,
    )
    run = [r for r in records if str(r.get("run_id", "")).startswith(f"review:{REPO}#6@{head}")]
    assert all((r["repository"], r["pull_number"]) == (REPO, 6) for r in run)
    assert any(r.get("unit") == 0 for r in run)
    # The review's own HTTP traffic, to GitHub and to the model, at DEBUG, in its context.
    assert {"httpx", "httpcore.http11", "anthropic._base_client"} <= {r["logger"] for r in run}
    # Credentials really went by, and the bait really reached a line, redacted.
    assert tiebreak.github.issued_tokens
    assert tiebreak.github.app_jwts
    refused = [r for r in records if r["message"].startswith("webhook answered 401")]
    assert sum(r.get("delivery_id") == REDACTED for r in refused) == 2
    assert tiebreak.leaks() == []
    assert bait not in tiebreak.log.read_text(encoding="utf-8")


def test_the_server_refuses_to_start_without_a_webhook_secret(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(TIEBREAK), "serve"],
        env={
            "PATH": os.environ.get("PATH", ""),
            "TIEBREAK_DATA_DIR": str(tmp_path),
            "TIEBREAK_ENV_FILE": "",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2
    assert "GITHUB_WEBHOOK_SECRET" in done.stderr
    assert "Traceback" not in done.stderr
