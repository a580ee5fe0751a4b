"""Publishing a panel's review: the vote, the testers by name, a finding that stands by
majority, and a tie sent to the arbiter — as a user reads them on the pull request."""

import re

import pytest

from agents.models.scripted import ScriptedLLM, by_agent
from agents.outcome import Consensus, MessageKind, Resolution
from agents.protocol import Severity
from app.bodies import AnnotationLevel, Conclusion, ReviewEvent
from app.publishing.finding_text import TRIGGER
from app.publishing.plan import plan
from app.publishing.publication import LabelAction, Publication
from policies.arbitration import ArbitrationTrigger
from policies.panel import Vote
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.panel import PANEL_DIFF, panel_review
from tests.kits.plan import (
    BIG,
    RUN,
    draft,
    publish,
    raw_html_tags,
    read_fences,
    result,
    says,
    table_rows,
    the_comment,
    unit,
    visible_text,
)
from tests.kits.review import run_review
from tests.scenarios.debates import LOG_LINE, PAYMENTS
from tests.scenarios.panels import (
    CORRECTNESS,
    FIXED_BY_MAJORITY,
    KEPT,
    PERFORMANCE,
    SECURITY,
    TIE_FIXED,
    TIE_WARNED,
    WITHDRAWN_BY_MAJORITY,
    Script,
)
from tests.scenarios.reviews import BASE, NUMBER, REPO

VOTE_KEPT = (
    "Kept by 2 of 3 testers (tester-correctness, tester-security); tester-performance "
    "accepted the coder's answer."
)


async def published(script: Script, testers: int = 3, **limits: int) -> Publication:
    review = await panel_review(script, testers, **limits)
    run = RUN.model_copy(update={"event_on_unresolved": ReviewEvent.REQUEST_CHANGES})
    return plan(review, PANEL_DIFF, run=run)


async def test_a_finding_a_majority_keeps_stands_with_each_keeping_tester_s_reason() -> None:
    publication = await published(KEPT, max_exchanges_per_finding=2)

    body = the_comment(publication).body
    assert body.startswith("**🔴 Blocker** · stands · kept by 2 of 3 testers against the coder")
    assert f"**The panel's vote**\nRaised by {CORRECTNESS}. {VOTE_KEPT}" in body
    # Each keeping tester's latest reason, by name; the accepting tester's is not a position.
    assert f"**Kept by {CORRECTNESS}**\nThe patch logs, but nothing imports logger either." in body
    assert f"**Kept by {SECURITY}**\nThe refund is still aborted after the balance moved." in body
    assert "Nothing imports log." not in body
    assert f"Kept by {PERFORMANCE}" not in body
    # The coder's position and its last patch, shown but not offered for commit.
    assert "**The coder's position**\nThen use the module's logger." in body
    assert "Its last patch for <code>app/payments.py:16</code>, not agreed:" in body
    assert [(b.info, b.lines) for b in read_fences(body)[0]] == [("", [LOG_LINE])]
    why = body.split("**Why it stands**\n", 1)[1]
    assert why.startswith("A majority of the testers keeps it against the coder's answer")
    assert "The debate on it ended: too many exchanges on this finding." in why
    assert "/tiebreak arbitrate" in why
    # It stands by majority: nothing calls it unresolved or a disagreement.
    for text in (body, publication.check.text, publication.summary):
        assert "unresolved" not in text.lower()
        assert "no agreement" not in text


async def test_a_finding_that_stands_asks_for_action_and_puts_the_label_on() -> None:
    publication = await published(KEPT, max_exchanges_per_finding=2)

    assert publication.check.conclusion is Conclusion.ACTION_REQUIRED
    assert publication.check.title == "1 finding stands by majority"
    assert publication.label is LabelAction.ADD
    assert draft(publication).event is ReviewEvent.REQUEST_CHANGES
    ((row,),) = [table_rows(publication.check.summary)]
    assert row[3:5] == ["stands", "majority 2 of 3 · exchange limit"]
    assert "**1 finding** (1 standing by majority)" in publication.check.summary
    ((annotation,),) = publication.check.annotation_batches
    assert annotation.annotation_level is AnnotationLevel.FAILURE
    assert annotation.title.startswith("F1 · blocker · stands: ")
    assert "Stands: a majority of the testers keeps it against the coder." in annotation.message
    assert VOTE_KEPT in annotation.message
    assert "Unresolved" not in annotation.message


async def test_a_fix_accepted_by_a_majority_is_committable_and_names_the_outvoted_tester() -> None:
    publication = await published(FIXED_BY_MAJORITY)

    comment = the_comment(publication)
    body = comment.body
    assert body.startswith("**🔴 Blocker** · fix suggested · accepted by 2 of 3 testers")
    assert (
        "Accepted by 2 of 3 testers (tester-correctness, tester-security); tester-performance "
        "kept it against the coder's answer."
    ) in body
    assert f"**Outvoted: {PERFORMANCE} kept it**\nLogging every refund is slow." in body
    assert [(b.info, b.lines) for b in read_fences(body)[0]] == [("suggestion", [LOG_LINE])]
    assert (comment.path, comment.line) == (PAYMENTS, 16)
    assert publication.check.conclusion is Conclusion.NEUTRAL
    assert publication.label is LabelAction.REMOVE
    assert table_rows(publication.check.summary)[0][3:5] == ["fix suggested", "majority 2 of 3"]


async def test_a_finding_withdrawn_by_a_majority_names_the_tester_that_kept_it() -> None:
    publication = await published(WITHDRAWN_BY_MAJORITY)

    assert publication.review is None
    line = next(x for x in publication.summary.split("\n") if x.startswith("- **F1**"))
    assert "the coder: split() only feeds a preview." in line
    assert line.endswith(
        "Accepted by 2 of 3 testers (tester-security, tester-performance); tester-correctness "
        "kept it against the coder's answer."
    )
    section = publication.check.text
    assert "withdrawn · <code>app/payments.py:8</code>" in section
    assert "_accepted by 2 of 3 testers · closed in round 1" in section
    assert f"**Outvoted: {CORRECTNESS} kept it**\nSplitting must never lose a cent." in section
    assert publication.check.title == "No open findings (1 withdrawn)"


async def test_a_tie_sent_to_the_arbiter_names_the_split_as_the_reason() -> None:
    publication = await published(TIE_FIXED, testers=2)

    body = the_comment(publication).body
    assert body.startswith("**🔴 Blocker** · fix suggested · the arbiter ruled (the testers split")
    split = (
        "The testers split evenly: tester-correctness kept it; tester-security accepted the "
        "coder's answer."
    )
    assert split in body
    assert [b.info for b in read_fences(body)[0]] == ["suggestion"]
    assert table_rows(publication.check.summary)[0][3:5] == ["fix suggested", "arbiter · tie"]
    ((annotation,),) = publication.check.annotation_batches
    assert split in annotation.message


async def test_a_warning_after_a_tie_overrules_the_keeping_tester_by_name() -> None:
    publication = await published(TIE_WARNED, testers=2)

    body = the_comment(publication).body
    assert "accepted with a warning · the arbiter ruled (the testers split evenly)" in body
    assert "log exists only on the production runtime." in body
    assert f"**Overruled: {CORRECTNESS} kept it**\nNothing imports log." in body
    assert "the tester's position" not in body


def test_every_trigger_is_put_into_words() -> None:
    assert set(TRIGGER) == set(ArbitrationTrigger)
    assert TRIGGER[ArbitrationTrigger.TIE] == "the testers split evenly"


def test_a_unanimous_panel_reads_as_agreement_of_every_tester() -> None:
    votes = {CORRECTNESS: Vote.ACCEPT, SECURITY: Vote.ACCEPT, PERFORMANCE: Vote.ACCEPT}
    fixed = result("F1", BIG, 5).model_copy(update={"votes": votes, "raised_by": SECURITY})

    body = the_comment(publish(unit(fixed))).body

    assert body.startswith("**🟠 Major** · fix suggested · the testers and the coder agreed")
    assert (
        "Raised by tester-security. Accepted by all 3 testers (tester-correctness, "
        "tester-security, tester-performance)."
    ) in body


def test_a_single_tester_s_finding_shows_no_panel() -> None:
    stuck = result("F1", BIG, 5, resolution=Resolution.OPEN)
    thread = [
        says("F1", MessageKind.DISPUTE, "Fine as it is."),
        says("F1", MessageKind.REJECT, "No."),
    ]

    body = the_comment(publish(unit(stuck, messages=thread))).body

    assert "panel" not in body
    assert "Raised by" not in body
    assert "**The tester's position**\nNo." in body


def test_tester_names_are_text_too() -> None:
    # A review loaded from a transcript carries its names as data: they act on nothing.
    hostile = "@octocat <details>"
    votes = {hostile: Vote.KEEP, "tester-b": Vote.KEEP, "tester-c": Vote.ACCEPT}
    standing = result(
        "F1", BIG, 5, resolution=Resolution.OPEN, consensus=Consensus.MAJORITY, note="kept"
    ).model_copy(update={"votes": votes, "raised_by": hostile})
    thread = [
        says("F1", MessageKind.DISPUTE, "Fine as it is."),
        says("F1", MessageKind.REJECT, "Broken.").model_copy(update={"speaker": hostile}),
    ]

    publication = publish(unit(standing, messages=thread))

    body = the_comment(publication).body
    assert raw_html_tags(body) == []
    assert re.findall(r"@[A-Za-z0-9]", visible_text(body)) == []
    assert "**Kept by @\u200doctocat &lt;details>**\nBroken." in body
    ((annotation,),) = publication.check.annotation_batches
    assert "@octocat" not in annotation.message


@pytest.mark.parametrize(
    ("severity", "standing"),
    [(Severity.NIT, 1), (Severity.BLOCKER, 2)],
)
def test_the_title_counts_standing_and_unresolved_findings_apart(
    severity: Severity, standing: int
) -> None:
    votes = {CORRECTNESS: Vote.KEEP, SECURITY: Vote.KEEP, PERFORMANCE: Vote.ACCEPT}
    stands = [
        result(
            f"F{i}", BIG, 5, resolution=Resolution.OPEN, consensus=Consensus.MAJORITY
        ).model_copy(update={"votes": votes, "raised_by": CORRECTNESS})
        for i in range(1, standing + 1)
    ]
    stuck = result("F9", BIG, 30, resolution=Resolution.OPEN, severity=severity)

    publication = publish(unit(*stands, stuck))

    findings = "finding stands" if standing == 1 else "findings stand"
    assert publication.check.title == f"1 unresolved finding · {standing} {findings} by majority"
    assert publication.label is LabelAction.ADD


async def test_a_panel_s_standing_finding_labels_the_pull_request(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    config = "debate:\n  testers: 3\n  max_exchanges_per_finding: 2\n"
    github.set_file(REPO, BASE, ".github/tiebreak.yml", config)

    conclusion, _ = await run_review(github, key, redis_url, ScriptedLLM(by_agent(KEPT)))

    assert conclusion == "action_required"
    assert github.issue_labels(REPO, NUMBER) == ["Unresolved"]
    (review,) = github.reviews(REPO, NUMBER)
    (comment,) = review.comments
    assert VOTE_KEPT in comment.body
    assert f"**Kept by {SECURITY}**" in comment.body
    (check,) = github.check_runs(REPO)
    assert check.output["title"] == "1 finding stands by majority"


def test_the_tally_in_the_table_of_a_review_with_no_votes_still_reads() -> None:
    # A majority outcome without its votes (an older transcript) falls back to plain words.
    fixed = result("F1", BIG, 5, consensus=Consensus.MAJORITY)

    publication = publish(unit(fixed))

    assert the_comment(publication).body.startswith(
        "**🟠 Major** · fix suggested · a majority of the testers agreed"
    )
    assert table_rows(publication.check.summary)[0][4] == "majority"
