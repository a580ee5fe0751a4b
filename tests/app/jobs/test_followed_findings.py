"""A proven finding followed across the pushes of its pull request, end to end: the pull
request's webhooks and the workflow runs' at the real endpoint, a real worker, the fake
GitHub running Tiebreak's workflow template on its snapshots of each head, and a tester that
raises the finding on the first push only. Its test, not the model, decides whether it is
fixed."""

import asyncio
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from agents.models.llm import LLMRequest
from agents.models.scripted import ScriptedLLM, by_role
from app.links import links_for
from app.settings import Settings
from app.store.queue import ReviewQueue
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub, ReviewComment
from tests.kits.actions import (
    CONFIG,
    PROVEN,
    REFUND_TEST,
    TEST_PATH,
    pushed,
    review_in_actions,
)
from tests.kits.review import resolved_in_thread, run_worker, summary
from tests.scenarios.debates import (
    PAYMENTS_AFTER,
    answers,
    concede,
    evaluations,
    patch,
    reject,
    report,
)
from tests.scenarios.reviews import BASE, HEAD, NUMBER, REPO
from tests.scenarios.webhooks import SECRET, payload, signed

STILL_BROKEN = PAYMENTS_AFTER.replace("log(payment.id, amount)", "log(payment.id, -amount)")
"""A push that changes the finding's line and leaves its bug: `log` is still undefined."""
FIXED = PAYMENTS_AFTER.replace("log(payment.id, amount)", "print('refund', payment.id)")
SECOND, THIRD = "c" * 40, "d" * 40
NOT_A_FIX = patch(16, "    log(payment.id, amount)  # logged")


def raised_once(*, every_push: bool = False) -> ScriptedLLM:
    """A tester that raises the proven finding on its first report only (the model forgets
    it on later pushes), or on every push's (at its line, whatever the code there now is); a
    coder that answers it with a patch its test rejects; a tester that keeps it: it stays
    open, proven."""
    reports = iter([report(PROVEN)])

    def script(request: LLMRequest) -> dict[str, Any]:
        match request.tool.name:
            case "report_findings":
                return report(PROVEN) if every_push else next(reports, report())
            case "answer_findings":
                return answers(*(concede(f, NOT_A_FIX) for f in request.subject))
            case "evaluate_answers":
                return evaluations(
                    *(reject(f, "The patch leaves log undefined.") for f in request.subject)
                )
        raise AssertionError(f"unexpected call: {request.tool.name}")

    return ScriptedLLM(script)


async def proven_and_open(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    client: TestClient,
    *,
    every_push: bool = False,
) -> ScriptedLLM:
    """The pull request reviewed as it opened, without an arbiter: its finding proven and
    left open. The model (:func:`raised_once`), to review its pushes with."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG + "debate:\n  arbitration: false\n")
    llm = raised_once(every_push=every_push)
    await review_in_actions(github, key, redis_url, llm, client)
    return llm


SETTINGS = Settings(github_webhook_secret=SECRET, public_url="https://tiebreak.example.com")
LINKED: dict[str, Any] = {"settings": SETTINGS, "links": links_for(SETTINGS)}
"""The worker's dependencies that keep transcripts and link them."""


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(SETTINGS, redis_url)) as test_client:
        yield test_client


def thread(github: FakeGitHub) -> ReviewComment:
    """The proven finding's thread: its first comment."""
    (root,) = [c for c in github.review_comments(REPO, NUMBER) if c.in_reply_to is None]
    return root


def replies(github: FakeGitHub) -> list[ReviewComment]:
    return [c for c in github.review_comments(REPO, NUMBER) if c.in_reply_to is not None]


def check_of(github: FakeGitHub, head: str) -> Any:
    (check,) = [c for c in github.check_runs(REPO) if c.head_sha == head]
    return check


def heads_tested(github: FakeGitHub, test: str) -> list[str]:
    """The heads the workflow ran `test` at, in order."""
    runs = sorted(github.workflow_runs(REPO), key=lambda r: r.id)
    return [
        r.inputs["head"] for r in runs if r.inputs["test_path"] == test and not r.inputs["patches"]
    ]


async def test_a_push_s_units_debate_while_its_followed_findings_threads_are_read(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    llm = await proven_and_open(github, key, redis_url, client)
    asked = len(llm.requests)

    still = pushed(github, SECOND, HEAD, STILL_BROKEN)
    with github.holding("GET", rf"/repos/{REPO}/pulls/{NUMBER}/comments") as reading:
        review = asyncio.create_task(
            review_in_actions(github, key, redis_url, llm, client, delivery=still)
        )
        assert await asyncio.to_thread(reading.wait, 30)
        # GitHub has not answered which threads people ended: the push's units are queued
        # before the followed findings' tests, and their debates go on meanwhile.
        deadline = time.monotonic() + 30
        while len(llm.requests) == asked:
            assert time.monotonic() < deadline, "no unit debated while the threads were read"
            await asyncio.sleep(0.05)
    await review

    assert heads_tested(github, TEST_PATH)[-1] == SECOND
    assert check_of(github, SECOND).conclusion == "action_required"


async def test_a_proven_finding_stays_open_until_its_test_passes_whatever_the_model_says(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    llm = await proven_and_open(github, key, redis_url, client)

    assert "**Reproduced**: <code>test&#95;refund.py</code>" in thread(github).body
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    assert check_of(github, HEAD).conclusion == "action_required"

    # A push that changes the finding's line but not its bug; the tester no longer raises it.
    still = pushed(github, SECOND, HEAD, STILL_BROKEN)
    await review_in_actions(github, key, redis_url, llm, client, delivery=still)

    assert heads_tested(github, TEST_PATH)[-1] == SECOND
    said = summary(github)
    assert "No longer found" not in said
    assert all("No longer found" not in r.body for r in replies(github))
    (note,) = replies(github)
    assert note.body.startswith(f"Still fails at <code>{SECOND[:7]}</code>")
    assert "NameError: name 'log' is not defined" in note.body
    assert "1 still failing · 0 fixed and verified" in said
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    check = check_of(github, SECOND)
    assert check.conclusion == "action_required"
    assert "1 still failing" in check.output["summary"]
    assert check.output["title"] == "1 unresolved finding · 1 proven finding still fails"
    assert "### Tiebreak: 1 unresolved finding · 1 proven finding still fails\n" in said

    # A push that fixes it: its test passes at that head.
    fixed = pushed(github, THIRD, SECOND, FIXED)
    await review_in_actions(github, key, redis_url, llm, client, delivery=fixed, **LINKED)

    assert heads_tested(github, TEST_PATH)[-1] == THIRD
    note_now, answer = replies(github)
    assert note_now.id == note.id  # the note is not written again
    assert answer.body.startswith(f"Fixed at <code>{THIRD[:7]}</code>: its test passes now")
    assert github.thread_resolved(REPO, NUMBER, thread(github).id)
    said = summary(github)
    assert "0 still failing · 1 fixed and verified" in said
    assert "No longer found" not in said
    assert github.issue_labels(REPO, NUMBER) == []
    check = check_of(github, THIRD)
    assert check.conclusion == "success"
    assert "1 fixed and verified" in check.output["summary"]
    assert check.output["title"] == "No open findings · 1 fixed and verified"
    assert "### Tiebreak: No open findings · 1 fixed and verified\n" in said
    # The transcript page shows the test's run at that head.
    assert check.details_url is not None
    parts = urlsplit(check.details_url)
    page = client.get(f"{parts.path}?{parts.query}")
    assert page.status_code == 200
    assert "Proven findings' tests, run again" in page.text
    assert 'test_refund.py</code>: <span class="badge">passes: fixed</span>' in page.text
    assert "it passes at the head" in page.text


async def resolved_with_a_reason(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """A maintainer comments `/tiebreak resolve <reason>` in the finding's thread."""
    reason = "Refunds are logged by the caller."
    await resolved_in_thread(github, key, redis_url, thread(github).id, reason)


async def thumbs_down(github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient) -> None:
    """A maintainer marks the finding's comment 👎."""
    github.add_reaction(REPO, thread(github).id, "-1", user="maintainer")


async def resolved_on_the_pull_request(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """A maintainer comments `/tiebreak resolve <reason>` on the pull request as a whole, as
    GitHub delivers it to the webhook endpoint."""
    body = "/tiebreak resolve Refunds are logged by the caller."
    comment_id = github.add_issue_comment(REPO, NUMBER, body, author="maintainer")
    delivery = payload("issue_comment/created.with-installation")
    delivery["issue"].update(number=NUMBER, pull_request={"url": "https://api.github.com/x"})
    delivery["comment"].update(id=comment_id, body=body, author_association="COLLABORATOR")
    delivery["comment"]["user"].update(login="maintainer", type="User")
    delivery["sender"].update(login="maintainer", type="User")
    raw, headers = signed("issue_comment", delivery)
    assert client.post("/api/github/webhooks", content=raw, headers=headers).status_code == 202

    async def nothing_more(queue: ReviewQueue) -> None:
        return None

    await run_worker(github, key, redis_url, ScriptedLLM(by_role()), nothing_more)
    assert check_of(github, HEAD).output["title"] == "Resolved by @maintainer"
    (said,) = replies(github)
    assert said.body.startswith(
        "Resolved by @\u200dmaintainer with `/tiebreak resolve`: the finding is accepted as it is, "
        "and "
        "<code>test&#95;refund.py</code>, which proved it, no longer runs at later pushes."
    )
    assert github.thread_resolved(REPO, NUMBER, thread(github).id)


async def resolved_on_the_pull_request_then_by_its_author(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """The maintainer's `/tiebreak resolve` on the pull request, then its author, who may not
    write, reopens the thread and resolves it again: GitHub names the author as its resolver
    from then on."""
    await resolved_on_the_pull_request(github, key, redis_url, client)
    github.unresolve_thread(REPO, NUMBER, thread(github).id)
    github.resolve_thread(REPO, NUMBER, thread(github).id, by="author")


@pytest.mark.parametrize(
    "end",
    [
        resolved_with_a_reason,
        thumbs_down,
        resolved_on_the_pull_request,
        resolved_on_the_pull_request_then_by_its_author,
    ],
)
async def test_a_proven_finding_a_writer_ends_is_no_longer_followed(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient, end: Any
) -> None:
    github.set_permission(REPO, "maintainer", "write")
    llm = await proven_and_open(github, key, redis_url, client)

    await end(github, key, redis_url, client)
    still = pushed(github, SECOND, HEAD, STILL_BROKEN)
    await review_in_actions(github, key, redis_url, llm, client, delivery=still)

    # Its test was not run at the new head, and nothing says it still fails.
    assert heads_tested(github, TEST_PATH) == [HEAD]
    assert all("Still fails" not in r.body for r in replies(github))
    said = summary(github)
    assert "0 still failing · 0 fixed and verified · 1 no longer followed" in said
    assert "no longer followed: a person ended it" in said
    assert github.issue_labels(REPO, NUMBER) == []
    assert check_of(github, SECOND).conclusion == "success"


async def test_a_proven_finding_whose_test_cannot_run_at_the_new_head_is_left_to_the_review(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """The push adds a file where the test is written: the test is not run there, its thread
    says so, and the finding is what the review makes of it (not raised again on changed
    code: no longer found), never fixed on that run."""
    llm = await proven_and_open(github, key, redis_url, client)

    occupied = pushed(github, SECOND, HEAD, STILL_BROKEN, {TEST_PATH: "print('mine')\n"})
    await review_in_actions(github, key, redis_url, llm, client, delivery=occupied)

    assert heads_tested(github, TEST_PATH) == [HEAD]
    gone, note = replies(github)
    assert note.body.startswith(
        f"Could not run at <code>{SECOND[:7]}</code>: <code>test&#95;refund.py</code>, which "
        "proved this finding, did not run there as a test (test_refund.py at the head is the "
        "pull request's own file now, and differs from the finding's test: the finding's "
        "test is not run over it)."
    )
    assert gone.body.startswith(f"No longer found at <code>{SECOND[:7]}</code>")
    assert not github.thread_resolved(REPO, NUMBER, thread(github).id)
    assert "0 still failing · 0 fixed and verified · 1 not run" in summary(github)


@pytest.mark.parametrize(
    ("payments", "said"), [(STILL_BROKEN, "Still fails at"), (FIXED, "Fixed at")]
)
async def test_a_proven_finding_whose_test_the_author_committed_is_decided_by_it_as_committed(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    client: TestClient,
    payments: str,
    said: str,
) -> None:
    """The push commits the finding's test as the review showed it, where it showed it (with
    Windows line endings): that file is run at the new head, and decides the finding."""
    llm = await proven_and_open(github, key, redis_url, client)

    committed = {TEST_PATH: REFUND_TEST.replace("\n", "\r\n")}
    push = pushed(github, SECOND, HEAD, payments, committed)
    await review_in_actions(github, key, redis_url, llm, client, delivery=push)

    assert heads_tested(github, TEST_PATH) == [HEAD, SECOND]
    assert replies(github)[-1].body.startswith(f"{said} <code>{SECOND[:7]}</code>")
    fixed = payments == FIXED
    assert github.thread_resolved(REPO, NUMBER, thread(github).id) is fixed
    shown = "0 still failing · 1 fixed and verified" if fixed else "1 still failing"
    assert shown in summary(github)


async def test_a_proven_finding_raised_again_is_decided_by_its_followed_test(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """The new review raises the followed finding again, on its changed line: it is not posted
    as a second finding beside the first; its test decides it, still failing, then fixed."""
    llm = await proven_and_open(github, key, redis_url, client, every_push=True)
    first = thread(github)

    still = pushed(github, SECOND, HEAD, STILL_BROKEN)
    await review_in_actions(github, key, redis_url, llm, client, delivery=still)

    roots = [c for c in github.review_comments(REPO, NUMBER) if c.in_reply_to is None]
    assert [c.id for c in roots] == [first.id]
    (note,) = replies(github)
    assert note.body.startswith(f"Still fails at <code>{SECOND[:7]}</code>")
    assert "1 still failing · 0 fixed and verified" in summary(github)
    check = check_of(github, SECOND)
    assert check.conclusion == "action_required"
    assert check.output["title"] == "1 unresolved finding · 1 proven finding still fails"

    # The push fixes it; the model still raises it: the test passing decides.
    fixed = pushed(github, THIRD, SECOND, FIXED)
    await review_in_actions(github, key, redis_url, llm, client, delivery=fixed)

    roots = [c for c in github.review_comments(REPO, NUMBER) if c.in_reply_to is None]
    assert [c.id for c in roots] == [first.id]
    note_now, answer = replies(github)
    assert note_now.id == note.id
    assert answer.body.startswith(f"Fixed at <code>{THIRD[:7]}</code>: its test passes now")
    assert github.thread_resolved(REPO, NUMBER, first.id)
    assert "0 still failing · 1 fixed and verified" in summary(github)
    assert github.issue_labels(REPO, NUMBER) == []
    check = check_of(github, THIRD)
    assert check.conclusion == "success"
    assert check.output["title"] == "No open findings · 1 fixed and verified"
