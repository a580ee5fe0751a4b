"""A proven finding whose test only reads the source's text, through the App end to end: the
pull request's webhook and the workflow runs' webhooks at the real endpoint, a real worker,
the test run in the repository's Actions by Tiebreak's own template (bash on the fake
GitHub's snapshots), and the real SDK against the fake Messages API.

The test fails at the head and passes at the base — reproduced — but never calls the code it
claims to test. The coder disputes its relevance, the tester keeps it, and the arbiter rules:
ruled out, the finding is posted as the arbiter's opinion, the test shown but not as proof;
ruled in, the proof binds and the arbiter's fix is forced and checked against the test in
Actions, as for any reproduced finding. The debate waits for each run and resumes where it
stopped: no model is asked anything twice."""

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.models.claude import ClaudeLLM
from app.publishing.markers import SUMMARY_MARKER
from app.settings import Settings
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.messages_api import FakeMessagesAPI, QueuedResponder
from tests.kits.actions import (
    CONFIG,
    PRINT_FIX,
    REFUND_TEST,
    TEST_PATH,
    Deliveries,
    comment,
    fixed_by_agreement,
    review_in_actions,
)
from tests.kits.review import asked, run_worker, summary
from tests.scenarios.debates import (
    LOG_FIX,
    LOG_LINE,
    UNDEFINED,
    accept,
    answers,
    concede,
    evaluations,
    reject,
    report,
    rulings,
)
from tests.scenarios.reviews import BASE, NUMBER, REPO
from tests.scenarios.webhooks import SECRET

GREP = "test_refund_source.py"
GREP_TEST = "assert 'log(' not in open('app/payments.py').read(), 'refund() calls log()'\n"
"""Fails at the head, which calls `log(`, and passes at the base — without calling refund()."""
GREPS = {**UNDEFINED, "reproduction": {"path": GREP, "content": GREP_TEST}}
READS_TEXT = "The test reads payments.py's text; it never calls refund()"
WARNING = "Every refund may raise NameError; no test calls refund() to show it."
ONE_EXCHANGE = "debate:\n  max_exchanges_per_finding: 1\n"
"""A finding its tester keeps goes to the arbiter after one exchange."""

CALLS_LOG = "The line it finds is the call the claim is about: refund() calls log()"
RULED_OUT = {"ruling": "test_irrelevant", "reasoning": READS_TEXT, "warning": WARNING}
RULED_IN = {"ruling": "test_relevant", "reasoning": CALLS_LOG, "patch": LOG_FIX}


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


def script(ruling: dict[str, Any]) -> QueuedResponder:
    """The tester proves the finding with the grep, the coder disputes the test's relevance,
    the tester keeps it, the arbiter gives `ruling`: one answer for each call, no more."""
    return QueuedResponder(
        report_findings=[report(GREPS)],
        answer_findings=[
            answers({"finding_id": "F1", "stance": "irrelevant_test", "argument": READS_TEXT})
        ],
        evaluate_answers=[evaluations(reject("F1", "The text is what matters."))],
        arbitrate=[rulings({"finding_id": "F1", **ruling})],
    )


async def reviewed(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    client: TestClient,
    ruling: dict[str, Any],
    debate: str = ONE_EXCHANGE,
) -> tuple[Counter[str | None], Deliveries]:
    """The review of the scenarios' pull request with its tests in Actions, the config's
    `debate` section, and the arbiter giving `ruling` if asked: how often each tool was asked
    for, and the webhooks delivered."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG + debate)
    with FakeMessagesAPI(script(ruling)) as api:
        llm = ClaudeLLM.connect(api_key=api.api_key, base_url=api.base_url, max_retries=0)
        try:
            sent = await review_in_actions(github, key, redis_url, llm, client)
        finally:
            await llm.aclose()
    return Counter(r.tool for r in api.requests), sent


async def arbitrated(
    github: FakeGitHub, key: AppKey, redis_url: str, ruling: dict[str, Any]
) -> str:
    """A writer's `/tiebreak arbitrate` on the pull request, the arbiter giving `ruling`: the
    comment the ruling posted."""
    arbiter = QueuedResponder(arbitrate=[rulings({"finding_id": "F1", **ruling})])
    asking = asked(github, ("arbitrate", None), association="OWNER")
    with FakeMessagesAPI(arbiter) as api:
        llm = ClaudeLLM.connect(api_key=api.api_key, base_url=api.base_url, max_retries=0)
        try:
            await run_worker(github, key, redis_url, llm, asking.enqueue)
        finally:
            await llm.aclose()
    assert [r.tool for r in api.requests] == ["arbitrate"]
    said = [c.body for c in github.issue_comments(REPO, NUMBER) if c.author_type == "Bot"]
    replies = [b for b in said if SUMMARY_MARKER not in b]
    reviews = github.reviews(REPO, NUMBER)
    assert len(reviews) == 2, f"no ruling was posted; Tiebreak answered {replies}"
    ruled = reviews[1]
    (posted,) = ruled.comments
    return posted.body


async def test_a_test_ruled_not_to_test_its_claim_is_not_posted_as_proof(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    await reviewed(github, key, redis_url, client, RULED_OUT)

    body = comment(github).body
    assert (
        f"**Test ruled not to test its claim**: <code>test&#95;refund&#95;source.py</code> "
        f"({READS_TEXT}); its runs prove nothing." in body
    )
    # Not proof: neither reproduced nor proven is claimed, nor how it failed shown as such.
    assert "**Reproduced**" not in body
    assert "Proven" not in body
    assert "How it fails at the head" not in body
    # The test is still shown, as what was ruled out.
    assert "<details><summary>The test, <code>test&#95;refund&#95;source.py</code>" in body
    # The finding is the arbiter's opinion: the code stands, with its warning.
    assert WARNING in body
    assert "```suggestion" not in body
    said = summary(github)
    assert "ruled not to test its claim" in said
    assert "reproduced" not in said
    assert github.issue_labels(REPO, NUMBER) == []
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "neutral")
    assert check.output["title"] == "1 warning"


async def test_a_test_ruled_to_test_its_claim_binds_and_forces_the_fix(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    await reviewed(github, key, redis_url, client, RULED_IN)

    body = comment(github).body
    assert (
        "**Reproduced**: <code>test&#95;refund&#95;source.py</code> fails at the head and passes "
        "at the base." in body
    )
    assert f"**Test ruled to test its claim**: {CALLS_LOG}." in body
    assert "AssertionError: refund() calls log()" in body
    assert "ruled not to test its claim" not in body
    # The arbiter's fix is forced, committable, and checked against the test in Actions.
    assert f"```suggestion\n{LOG_LINE}\n```" in body
    assert "**Fix verified**: the finding's test passes with this patch." in body
    runs = sorted(github.workflow_runs(REPO), key=lambda r: r.id)
    assert [bool(r.inputs["patches"]) for r in runs] == [False, True]
    assert "| fix suggested · reproduced, fix verified |" in summary(github)
    (check,) = github.check_runs(REPO)
    relevant = (check.states[-1], check.output["title"], github.issue_labels(REPO, NUMBER))
    assert relevant == (("completed", "neutral"), "1 fix suggested", [])


async def test_what_a_reproduced_finding_s_fix_shows_a_ruled_relevant_one_shows_too(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """The check run and the label of the same finding, proven by the same test, whose fix
    the coder conceded: what the ruling binds the debate to."""
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG + ONE_EXCHANGE)

    await review_in_actions(github, key, redis_url, fixed_by_agreement(GREPS), client)

    (check,) = github.check_runs(REPO)
    agreed = (check.states[-1], check.output["title"], github.issue_labels(REPO, NUMBER))
    assert agreed == (("completed", "neutral"), "1 fix suggested", [])
    assert "**Reproduced**" in comment(github).body


@pytest.mark.parametrize(
    ("ruling", "runs"), [(RULED_OUT, 1), (RULED_IN, 2)], ids=["ruled out", "ruled in"]
)
async def test_the_debate_resumes_after_each_run_and_asks_no_model_anything_twice(
    github: FakeGitHub,
    key: AppKey,
    redis_url: str,
    client: TestClient,
    ruling: dict[str, Any],
    runs: int,
) -> None:
    """Ruled out, the debate waits once (the test at the base and the head); ruled in, once
    more for the forced fix's check."""
    asked, sent = await reviewed(github, key, redis_url, client, ruling)

    assert len(github.workflow_runs(REPO)) == runs
    assert sent.sent.count(("completed", "enqueued")) == runs
    assert asked == {
        "report_findings": 1,
        "answer_findings": 1,
        "evaluate_answers": 1,
        "arbitrate": 1,
    }


async def test_a_dispute_left_open_is_ruled_on_relevance_when_a_person_asks_the_arbiter(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """Without arbitration the test's relevance is left disputed: the finding is open; the
    arbiter a person asks for later rules the test out, and the finding's comment, label and
    check run say so."""
    no_arbiter = "debate:\n  arbitration: false\n  max_exchanges_per_finding: 1\n"
    asked_first, _ = await reviewed(github, key, redis_url, client, RULED_OUT, no_arbiter)
    assert "arbitrate" not in asked_first
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    assert "**Reproduced**" in comment(github).body

    body = await arbitrated(github, key, redis_url, RULED_OUT)

    assert "the arbiter ruled (a person asked for a ruling)" in body
    assert (
        f"**Test ruled not to test its claim**: <code>test&#95;refund&#95;source.py</code> "
        f"({READS_TEXT}); its runs prove nothing." in body
    )
    assert "**Reproduced**" not in body
    assert WARNING in body
    assert github.issue_labels(REPO, NUMBER) == []
    (check,) = github.check_runs(REPO)
    assert (check.states[-1], check.output["title"]) == (("completed", "neutral"), "1 warning")


async def test_a_test_ruled_relevant_by_the_arbiter_a_person_asks_for_forces_its_fix(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """Ruled in after the debate, the proof binds and the arbiter's fix is forced; no test
    runs for a command, so the fix is posted unchecked."""
    no_arbiter = "debate:\n  arbitration: false\n  max_exchanges_per_finding: 1\n"
    await reviewed(github, key, redis_url, client, RULED_IN, no_arbiter)
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]

    body = await arbitrated(github, key, redis_url, RULED_IN)

    assert "fix suggested · the arbiter ruled (a person asked for a ruling)" in body
    assert "**Reproduced**: <code>test&#95;refund&#95;source.py</code> fails at the head" in body
    assert f"**Test ruled to test its claim**: {CALLS_LOG}." in body
    assert f"```suggestion\n{LOG_LINE}\n```" in body
    assert "Fix verified" not in body
    assert "Fix not verified" not in body
    assert len(github.workflow_runs(REPO)) == 1  # the test's run at the base and the head
    assert github.issue_labels(REPO, NUMBER) == []
    (check,) = github.check_runs(REPO)
    assert (check.states[-1], check.output["title"]) == (
        ("completed", "neutral"),
        "1 fix suggested",
    )


async def test_a_test_given_in_answer_runs_in_actions_and_binds_the_debate_it_resumes(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """The tester answers the dispute with a test that calls refund(): the debate waits for
    its run, resumes with it, and the coder, bound by it, concedes a fix checked against it."""
    calls = {"path": TEST_PATH, "content": REFUND_TEST}
    script = QueuedResponder(
        report_findings=[report(GREPS)],
        answer_findings=[
            answers({"finding_id": "F1", "stance": "irrelevant_test", "argument": READS_TEXT}),
            answers(concede("F1", PRINT_FIX)),
        ],
        evaluate_answers=[
            evaluations({**reject("F1", "This one calls refund()."), "reproduction": calls}),
            evaluations(accept("F1", "Fixed.")),
        ],
    )
    # A second test for the finding is allowed.
    two_tests = CONFIG.replace("max_attempts: 1", "max_attempts: 2")
    github.set_file(REPO, BASE, ".github/tiebreak.yml", two_tests)
    with FakeMessagesAPI(script) as api:
        llm = ClaudeLLM.connect(api_key=api.api_key, base_url=api.base_url, max_retries=0)
        try:
            await review_in_actions(github, key, redis_url, llm, client)
        finally:
            await llm.aclose()

    body = comment(github).body
    assert "**Reproduced**: <code>test&#95;refund.py</code> fails at the head and passes" in body
    assert "NameError: name 'log' is not defined" in body
    # The test shown is the one given in answer, not the grep.
    assert "<details><summary>The test, <code>test&#95;refund.py</code>" in body
    assert "test&#95;refund&#95;source.py" not in body
    assert "ruled not to test its claim" not in body
    assert f"```suggestion\n{PRINT_FIX['replacement']}\n```" in body
    assert "**Fix verified**: the finding's test passes with this patch." in body
    runs = sorted(github.workflow_runs(REPO), key=lambda r: r.id)
    shown = [(r.inputs["test_path"], bool(r.inputs["patches"])) for r in runs]
    assert shown == [(GREP, False), (TEST_PATH, False), (TEST_PATH, True)]
    assert Counter(r.tool for r in api.requests) == {
        "report_findings": 1,
        "answer_findings": 2,
        "evaluate_answers": 2,
    }
