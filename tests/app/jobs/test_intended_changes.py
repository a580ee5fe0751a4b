"""A pull request that moves a rule on purpose, through the App end to end: its webhook at the
real endpoint, a real worker, the finding's test run in the repository's Actions by
Tiebreak's own template (bash on the fake GitHub's snapshots), and a scripted model. The
description says the rule moved, and every agent reads it; the changelog says so too. The
tester's test of the old rule is reproduced, the coder shows the change intended, and it is
posted as a behaviour change: no suggestion that reverts it, no blocker, no `Unresolved`
label, a check run that does not fail, and the summary lists it with its test."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.debate.briefs import INTENT_INTRO
from agents.models.llm import LLMRequest
from agents.models.scripted import Reply, ScriptedLLM, by_role
from agents.protocol import ToolName
from app.settings import Settings
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.actions import CONFIG, comment, review_in_actions
from tests.kits.review import asked, run_worker, summary
from tests.scenarios.debates import (
    PAYMENTS,
    PAYMENTS_AFTER,
    PAYMENTS_BEFORE,
    accept,
    answers,
    evaluations,
    git_diff,
    reject,
    report,
    rulings,
)
from tests.scenarios.reviews import BASE, HEAD, NUMBER, REPO
from tests.scenarios.webhooks import SECRET

TITLE = "Refuse refunds larger than the balance"
BODY = "A refund larger than the payment's balance is now refused with a ValueError."
QUOTE = "is now refused with a ValueError"
CHANGELOG = "CHANGELOG.md"
CHANGES = "# Changes\n\n- Refunds larger than the balance are refused.\n"
OWN_TEST = "test_refusals.py"
LOADED = """\
import importlib.util

spec = importlib.util.spec_from_file_location("payments", "app/payments.py")
payments = importlib.util.module_from_spec(spec)
spec.loader.exec_module(payments)


class Payment:
    balance, id = 10, 7


"""
OWN_TEST_TEXT = (
    LOADED
    + """\
try:
    payments.refund(Payment(), 15)
except ValueError:
    pass
else:
    raise SystemExit("a refund over the balance was not refused")
"""
)
OWN_TEST_LINES = (12, 17)
"""The project's test of the new rule: the lines that refuse the refund."""
OVERDRAWN_TEST = LOADED + "assert payments.refund(Payment(), 15).balance == -5\n"
OVERDRAWN = {
    "path": PAYMENTS,
    "start_line": 15,
    "end_line": 16,
    "severity": "major",
    "claim": "A refund over the balance now raises ValueError instead of overdrawing it.",
    "reproduction": {"path": "test_overdrawn.py", "content": OVERDRAWN_TEST},
}
INTENDED = {
    "finding_id": "F1",
    "stance": "intended",
    "argument": "Refusing such refunds is what this pull request is for.",
    "citations": [
        {"quote": QUOTE},
        {"path": CHANGELOG, "start_line": 3, "end_line": 3},
        {"path": OWN_TEST, "start_line": OWN_TEST_LINES[0], "end_line": OWN_TEST_LINES[1]},
    ],
}


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as test_client:
        yield test_client


def described(github: FakeGitHub) -> None:
    """The scenarios' pull request with its description, a changelog and a test of its own."""
    head = {PAYMENTS: PAYMENTS_AFTER, CHANGELOG: CHANGES, OWN_TEST: OWN_TEST_TEXT}
    github.add_pull(
        REPO,
        NUMBER,
        head_sha=HEAD,
        base_sha=BASE,
        diff=git_diff(
            {
                PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER),
                CHANGELOG: (None, CHANGES),
                OWN_TEST: (None, OWN_TEST_TEXT),
            }
        ),
        head_ref="feature",
        title=TITLE,
        body=BODY,
        base_files={PAYMENTS: PAYMENTS_BEFORE},
        head_files=head,
    )
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG)


def shown_intended() -> ScriptedLLM:
    return ScriptedLLM(
        by_role(
            tester=[report(OVERDRAWN), evaluations(accept("F1", "The description says so."))],
            coder=[answers(INTENDED)],
        )
    )


async def test_an_intended_described_change_is_posted_as_a_behaviour_change(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    described(github)
    llm = shown_intended()

    await review_in_actions(github, key, redis_url, llm, client)

    body = comment(github).body
    assert "**🔵 Behaviour change** · behaviour change · tester and coder agreed" in body
    assert "**Reproduced**: <code>test&#95;overdrawn.py</code> fails at the head" in body
    assert "<details><summary>The test, <code>test&#95;overdrawn.py</code></summary>" in body
    assert f"the description says “{QUOTE}”" in body
    assert "<code>CHANGELOG.md:3</code>, changed by the pull request" in body
    # The pull request's own test, cited, ran in the workflow at the head as it is, and passed.
    assert (
        "the pull request's test <code>test&#95;refusals.py</code>: it passes at the head" in body
    )
    runs = sorted(github.workflow_runs(REPO), key=lambda r: r.id)
    assert [(r.inputs["test_path"], r.inputs.get("own_test", "")) for r in runs] == [
        ("test_overdrawn.py", ""),
        (OWN_TEST, "true"),
    ]
    assert "```suggestion" not in body
    assert "Blocker" not in body
    (review,) = github.reviews(REPO, NUMBER)
    assert review.event == "COMMENT"
    said = summary(github)
    assert "**Proven behaviour changes**" in said
    assert "shown by <code>test&#95;overdrawn.py</code>" in said
    assert "### Tiebreak: 1 behaviour change\n" in said
    assert "**1 finding** (1 intended)" in said
    assert github.issue_labels(REPO, NUMBER) == []
    (check,) = github.check_runs(REPO)
    assert check.conclusion == "success"
    # Every agent read the pull request's description.
    assert all(_read(request.blocks, BODY) for request in llm.requests)


async def test_an_intent_left_open_is_ruled_a_behaviour_change_when_a_person_asks_the_arbiter(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    described(github)
    no_arbiter = "debate:\n  arbitration: false\n  max_exchanges_per_finding: 1\n"
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG + no_arbiter)
    rejected = ScriptedLLM(
        by_role(
            tester=[report(OVERDRAWN), evaluations(reject("F1", "An overdraft is the rule."))],
            coder=[answers(INTENDED)],
        )
    )
    await review_in_actions(github, key, redis_url, rejected, client)
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    ruled = {"finding_id": "F1", "ruling": "intended", "reasoning": "The refusal is the point."}
    # A second ruling is there for the arbiter's retry, should its first be refused.
    llm = ScriptedLLM(by_role(arbiter=[rulings(ruled), rulings(ruled)]))
    asking = asked(github, ("arbitrate", None), association="OWNER")

    await run_worker(github, key, redis_url, llm, asking.enqueue)

    retried = "was refused for the reasons below"
    assert [b.text for r in llm.requests for b in r.blocks if retried in b.text] == []
    _, ruling = github.reviews(REPO, NUMBER)
    (posted,) = ruling.comments
    assert (
        "**🔵 Behaviour change** · behaviour change · the arbiter ruled (a person asked for a "
        "ruling)" in posted.body
    )
    # The evidence is the debate's: what the coder cited, and its cited test's run at the head.
    assert f"the description says “{QUOTE}”" in posted.body
    assert "<code>CHANGELOG.md:3</code>, changed by the pull request" in posted.body
    assert (
        "the pull request's test <code>test&#95;refusals.py</code>: it passes at the head"
        in posted.body
    )
    assert "```suggestion" not in posted.body
    assert github.issue_labels(REPO, NUMBER) == []
    (check,) = github.check_runs(REPO)
    assert check.states[-1] == ("completed", "success")


async def test_a_changelog_the_config_leaves_out_of_the_review_is_evidence_for_a_later_ruling(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """The config's `paths` leave the changelog out of the review, not out of the pull
    request: it is cited in the debate, and the arbiter a person asks for later weighs it."""
    described(github)
    settings = "debate:\n  arbitration: false\n  max_exchanges_per_finding: 1\n"
    left_out = "paths:\n  exclude: [CHANGELOG.md]\n"
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG + settings + left_out)
    rejected = ScriptedLLM(
        by_role(
            tester=[report(OVERDRAWN), evaluations(reject("F1", "An overdraft is the rule."))],
            coder=[answers(INTENDED)],
        )
    )
    await review_in_actions(github, key, redis_url, rejected, client)
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    assert all(CHANGES not in "".join(b.text for b in r.blocks) for r in rejected.requests)
    ruled = {"finding_id": "F1", "ruling": "intended", "reasoning": "The refusal is the point."}
    llm = ScriptedLLM(by_role(arbiter=[rulings(ruled), rulings(ruled)]))
    asking = asked(github, ("arbitrate", None), association="OWNER")

    await run_worker(github, key, redis_url, llm, asking.enqueue)

    retried = "was refused for the reasons below"
    assert [b.text for r in llm.requests for b in r.blocks if retried in b.text] == []
    _, ruling = github.reviews(REPO, NUMBER)
    (posted,) = ruling.comments
    assert "**🔵 Behaviour change**" in posted.body
    assert "<code>CHANGELOG.md:3</code>, changed by the pull request" in posted.body
    assert github.issue_labels(REPO, NUMBER) == []


def citing(request: LLMRequest) -> Reply:
    """The agents of the pull request split a file to a unit: in the code's unit the tester
    proves its finding and the coder shows it intended, citing the changelog and the test,
    as often as it is asked; the others' testers find nothing."""
    if f"+++ b/{PAYMENTS}" not in request.blocks[0].text:
        return report()
    if request.tool.name is ToolName.REPORT_FINDINGS:
        return report(OVERDRAWN)
    if request.tool.name is ToolName.ANSWER_FINDINGS:
        return answers(INTENDED)
    return evaluations(accept("F1", "The changelog says so."))


async def test_a_change_whose_changelog_another_unit_reviews_is_posted_as_a_behaviour_change(
    github: FakeGitHub, key: AppKey, redis_url: str, client: TestClient
) -> None:
    """A pull request large enough to be split, a file to a unit: the coder of the code's unit
    cites the changelog and the test that other units review, and shows the change intended."""
    described(github)
    no_arbiter = "debate:\n  arbitration: false\n"
    github.set_file(REPO, BASE, ".github/tiebreak.yml", CONFIG + no_arbiter)
    llm = ScriptedLLM(citing)

    await review_in_actions(github, key, redis_url, llm, client, unit_tokens=1)

    assert len({r.unit for r in llm.requests}) == 3  # the code, the changelog, the test
    body = comment(github).body
    assert "**🔵 Behaviour change** · behaviour change · tester and coder agreed" in body
    assert "<code>CHANGELOG.md:3</code>, changed by the pull request" in body
    assert (
        "the pull request's test <code>test&#95;refusals.py</code>: it passes at the head" in body
    )
    runs = sorted(github.workflow_runs(REPO), key=lambda r: r.id)
    assert [(r.inputs["test_path"], r.inputs.get("own_test", "")) for r in runs] == [
        ("test_overdrawn.py", ""),
        (OWN_TEST, "true"),
    ]
    assert "```suggestion" not in body
    assert "### Tiebreak: 1 behaviour change\n" in summary(github)
    assert github.issue_labels(REPO, NUMBER) == []
    (check,) = github.check_runs(REPO)
    assert check.conclusion == "success"
    # The code's unit read where the changelog's lines are, never the changelog itself.
    coder = [r for r in llm.requests if r.agent == "coder"]
    assert coder
    for request in coder:
        read = "\n".join(b.text for b in request.blocks)
        assert "CHANGELOG.md (lines 1-3)" in read
        assert "Refunds larger than the balance are refused." not in read


def _read(blocks: Any, text: str) -> bool:
    return any(b.text.startswith(INTENT_INTRO) and text in b.text for b in blocks)
