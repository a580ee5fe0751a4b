"""A pull request whose two findings stay open, and its author's pushes of an unrelated file,
for the end-to-end tests of who dismisses a finding (with a 👎, by resolving its thread): the
scripted reviewers, GitHub's deliveries, the check run's conclusion and how often GitHub was
asked what a person may do."""

from typing import Any

from fastapi.testclient import TestClient

from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM
from agents.protocol import ToolName
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.hearing import AUTHOR, NO_ARBITER, deliver, run_queued
from tests.scenarios.debates import (
    NEGATIVE,
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    UNDEFINED,
    answers,
    dispute,
    evaluations,
    git_diff,
    reject,
    report,
)
from tests.scenarios.reviews import BASE, HEAD, NUMBER, REPO
from tests.scenarios.webhooks import payload

NOTES = "app/notes.py"
"""The file the author's later pushes change, which no finding is about."""
PERMISSION = rf"/repos/{REPO}/collaborators/(?P<login>[^/]+)/permission"


def stubborn(request: LLMRequest) -> dict[str, Any]:
    """The tester raises UNDEFINED and NEGATIVE on `app/payments.py` and nothing on any other
    file; the coder disputes both and the tester keeps both (the arbiter is off)."""
    shown = "".join(block.text for block in request.blocks)
    match request.tool.name:
        case ToolName.REPORT_FINDINGS:
            return report(UNDEFINED, NEGATIVE) if f"+++ b/{PAYMENTS}" in shown else report()
        case ToolName.ANSWER_FINDINGS:
            return answers(*(dispute(f, "It is fine as it is.") for f in request.subject))
        case _:
            return evaluations(*(reject(f, "It is not fine.") for f in request.subject))


def opened() -> dict[str, Any]:
    """GitHub's delivery for the scenarios' pull request, opened at `HEAD`."""
    delivery = payload("pull_request/opened")
    delivery["number"] = delivery["pull_request"]["number"] = NUMBER
    delivery["pull_request"]["head"]["sha"] = HEAD
    delivery["pull_request"]["base"]["sha"] = BASE
    return delivery


def push(
    github: FakeGitHub, before: str, head: str, notes: str, payments: str = PAYMENTS_AFTER
) -> dict[str, Any]:
    """The author pushes a change to `app/notes.py` (and `app/payments.py`, if `payments` is
    not as the pull request opened it), on top of `before`; GitHub's delivery for it."""
    github.add_pull(
        REPO,
        NUMBER,
        head_sha=head,
        base_sha=BASE,
        head_ref="feature",
        diff=git_diff({PAYMENTS: (PAYMENTS_BEFORE, payments), NOTES: ("", notes)}),
        head_files={PAYMENTS: payments, NOTES: notes},
    )
    delivery = payload("pull_request/synchronize")
    delivery["number"] = delivery["pull_request"]["number"] = NUMBER
    delivery["pull_request"]["head"]["sha"] = head
    delivery["pull_request"]["base"]["sha"] = BASE
    delivery["before"] = before
    return delivery


def conclusion(github: FakeGitHub, head: str) -> str | None:
    """The conclusion of the check run of `head`."""
    (check,) = [c for c in github.check_runs(REPO) if c.head_sha == head]
    return check.conclusion


def asked_permission(github: FakeGitHub, login: str) -> int:
    """How many times GitHub was asked what `login` may do in the repository."""
    return len([r for r in github.requests_to("GET", PERMISSION) if login in r.path])


async def two_open_threads(
    client: TestClient, github: FakeGitHub, key: AppKey, redis_url: str
) -> tuple[int, int]:
    """The pull request opened and reviewed by the stubborn reviewers, its author without write
    access and a maintainer with it: the review comments of UNDEFINED and NEGATIVE, both left
    open (the check run asks for action)."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", NO_ARBITER)
    github.set_permission(REPO, AUTHOR, "none")
    github.set_permission(REPO, "maintainer", "write")
    assert deliver(client, opened(), "pull_request") == "enqueued"
    await run_queued(github, key, redis_url, ScriptedLLM(stubborn))
    assert conclusion(github, HEAD) == "action_required"
    comments = github.reviews(REPO, NUMBER)[0].comments
    (undefined,) = [c.id for c in comments if "is not defined anywhere" in c.body]
    (negative,) = [c.id for c in comments if "A negative amount passes" in c.body]
    return undefined, negative
