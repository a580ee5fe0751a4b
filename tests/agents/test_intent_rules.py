"""A proven behaviour change is a fact; whether it is a defect is still judged: the coder may
show, with evidence in the pull request, that the change is intended, and the tester or the
arbiter may settle it so. What cites nothing checkable is refused, and a change without any
evidence stays a proven finding."""

from typing import Any

from agents.debate.engine import Debate
from agents.debate.intent_rules import NO_EVIDENCE
from agents.debate.machine import DebateMachine
from agents.debate.proofs import ProofTerms, Proving
from agents.diff import ReviewUnit
from agents.models.llm import Role
from agents.models.scripted import ScriptedLLM, by_role
from agents.outcome import Consensus, MessageKind, Outcome, Resolution
from agents.verification import Evidence
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy
from tests.kits.machine import play, shown_by
from tests.scenarios.debates import (
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    reject,
    report,
    rulings,
    warn,
)
from tests.scenarios.intended import (
    CART,
    CART_TEST,
    CHANGELOG,
    CHANGELOG_HEAD,
    CHANGELOG_LINE,
    OLD_RULE_TEST,
    RULE_LINE,
    finding,
    intended,
    intended_unit,
    split_unit,
)
from tests.scenarios.proofs import COMMAND, ScriptedVerifier

ONE_ROUND = DebatePolicy(max_rounds=1)
NO_ARBITER = DebatePolicy(max_rounds=1, arbitration=False)


def verifier(*, own_test_passes: bool = True) -> ScriptedVerifier:
    """The old rule's test reproduces; the project's own test passes at the head, or not."""
    return ScriptedVerifier(
        {OLD_RULE_TEST.path: Evidence.REPRODUCED}, own={CART_TEST: own_test_passes}
    )


async def debate(
    verifying: ScriptedVerifier | None,
    unit: ReviewUnit | None = None,
    policy: DebatePolicy | None = None,
    **script: list[Any],
) -> tuple[Outcome, ScriptedLLM]:
    llm = ScriptedLLM(by_role(**script))
    proving = Proving(verifying) if verifying is not None else None
    outcome = await Debate(llm, policy, proving=proving).run(unit or intended_unit())
    return outcome, llm


def refusals(llm: ScriptedLLM, role: Role) -> list[str]:
    return [b.text for r in llm.calls(role) for b in r.blocks if "refused" in b.text]


def intended_ruling(finding_id: str = "F1") -> dict[str, Any]:
    return {"finding_id": finding_id, "ruling": "intended", "reasoning": "The rule moved."}


async def test_a_proven_change_shown_intended_ends_a_behaviour_change_with_its_evidence() -> None:
    verifying = verifier()

    outcome, llm = await debate(
        verifying,
        tester=[report(finding()), evaluations(accept("F1", "The changelog says so."))],
        coder=[answers(intended())],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.INTENDED, Consensus.UNANIMOUS)
    assert result.verification is not None
    assert result.verification.verdict is Evidence.REPRODUCED
    assert result.behaviour_change
    assert result.patch is None
    assert result.intended is not None
    assert [c.path or c.quote for c in result.intended.citations] == [
        "total() now leaves negative prices out",
        CHANGELOG,
        CART_TEST,
    ]
    # The project's test the coder cited ran at the head, unchanged, and passed.
    assert verifying.ran_own == [CART_TEST]
    (own,) = result.intended.tests
    assert (own.test, own.passed) == (CART_TEST, True)
    said = [m.text for m in outcome.transcript.thread("F1")]
    assert any(f"its test {CART_TEST} run at the head: it passes at the head" in s for s in said)
    assert MessageKind.INTENDED in {m.kind for m in outcome.transcript.thread("F1")}
    assert not refusals(llm, Role.CODER)
    # The tester reads the coder's citations, and what was checked of them.
    (evaluated,) = llm.calls(Role.TESTER)[1:]
    assert '"citations"' in evaluated.blocks[-1].text
    assert f"its test {CART_TEST} run at the head: it passes at the head" in (
        evaluated.blocks[-1].text
    )


async def test_an_intended_answer_that_cites_nothing_checkable_is_refused_with_the_reason() -> None:
    nothing = intended(cited=[])
    unsaid = intended(cited=[{"quote": "refunds were always a bug"}])
    unchanged = intended(cited=[{"path": CART, "start_line": 1, "end_line": 2}])
    elsewhere = intended(cited=[{"path": "docs/rules.md", "start_line": 1, "end_line": 1}])

    outcome, llm = await debate(
        verifier(),
        tester=[report(finding()), evaluations(accept("F1", "Right."))],
        coder=[
            answers(nothing),
            answers(unsaid),
            answers(unchanged),
            answers(elsewhere),
            answers(intended()),
        ],
        policy=DebatePolicy(max_turn_attempts=5),
    )

    (result,) = outcome.findings
    assert result.resolution is Resolution.INTENDED
    said = refusals(llm, Role.CODER)
    assert NO_EVIDENCE in said[0]
    assert "the pull request's description does not say 'refunds were always a bug'" in said[1]
    assert f"{CART}:1-2 are not lines this change adds or changes" in said[2]
    assert "docs/rules.md is not a file this change adds or changes" in said[3]


async def test_evidence_changed_in_another_unit_of_a_large_pull_request_shows_the_intent() -> None:
    """The changelog and the project's test are other units' slices of the pull request: the
    unit of the code checks their citation against the whole pull request's changed lines,
    and runs the cited test at the head, without reading their diff."""
    verifying = verifier()
    changelog = {"path": CHANGELOG, "start_line": CHANGELOG_LINE, "end_line": CHANGELOG_LINE}
    own_test = {"path": CART_TEST, "start_line": 8, "end_line": 9}

    cited = answers(intended(cited=[changelog, own_test]))

    # The coder gives its evidence again should its answer be refused, as a model would.
    outcome, llm = await debate(
        verifying,
        split_unit(),
        NO_ARBITER,
        tester=[report(finding()), evaluations(accept("F1", "The changelog says so."))],
        coder=[cited, cited],
    )

    assert not refusals(llm, Role.CODER)
    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.INTENDED, Consensus.UNANIMOUS)
    assert result.behaviour_change
    assert result.intended is not None
    assert [c.path for c in result.intended.citations] == [CHANGELOG, CART_TEST]
    # The test of the pull request's that another unit changes ran at the head, and passed.
    assert verifying.ran_own == [CART_TEST]
    (own,) = result.intended.tests
    assert (own.test, own.passed) == (CART_TEST, True)
    # Every call read where the other units' evidence is, never their diff.
    for request in llm.requests:
        read = "\n".join(b.text for b in request.blocks)
        assert f"{CHANGELOG} (lines 1-3)" in read
        assert CHANGELOG_HEAD.splitlines()[2] not in read


async def test_a_citation_of_lines_no_unit_of_the_pull_request_changes_is_still_refused() -> None:
    unchanged = intended(cited=[{"path": CHANGELOG, "start_line": 7, "end_line": 7}])
    elsewhere = intended(cited=[{"path": "docs/rules.md", "start_line": 1, "end_line": 1}])
    cited = {"path": CHANGELOG, "start_line": CHANGELOG_LINE, "end_line": CHANGELOG_LINE}

    outcome, llm = await debate(
        verifier(),
        split_unit(),
        policy=DebatePolicy(max_turn_attempts=3),
        tester=[report(finding()), evaluations(accept("F1", "Right."))],
        coder=[answers(unchanged), answers(elsewhere), answers(intended(cited=[cited]))],
    )

    said = refusals(llm, Role.CODER)
    assert f"{CHANGELOG}:7-7 are not lines this change adds or changes" in said[0]
    assert "docs/rules.md is not a file this change adds or changes" in said[1]
    (result,) = outcome.findings
    assert result.resolution is Resolution.INTENDED


async def test_the_same_change_without_evidence_stays_a_proven_finding() -> None:
    cited = [{"quote": "total() now leaves negative prices out"}]

    outcome, llm = await debate(
        verifier(),
        intended_unit(evidence=False),
        DebatePolicy(max_rounds=1, max_turn_attempts=4),
        tester=[report(finding()), evaluations(reject("F1", "Refunds are charged now."))],
        coder=[
            answers(intended(cited=cited)),
            answers(dispute("F1", "It is deliberate.")),
            answers(intended(cited=[{"path": CART, "start_line": 7, "end_line": 9}])),
            answers(dispute("F1", "It is deliberate.")),
        ],
        arbiter=[
            rulings(intended_ruling()),
            rulings(warn("F1", "Refunds are left out.")),
            rulings(intended_ruling()),
            rulings(warn("F1", "Refunds are left out.")),
        ],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.OPEN, Consensus.UNRESOLVED)
    assert result.verification is not None
    assert result.verification.verdict is Evidence.REPRODUCED
    assert not result.behaviour_change
    coder = refusals(llm, Role.CODER)
    assert "the pull request has no description to quote" in coder[0]
    # On the facts, a proven finding is not argued away.
    assert "it is proven" in coder[1]
    # Nor by citing the change itself.
    assert f"{CART}:7-9 are the lines the finding is on, not evidence of intent" in coder[2]
    arbiter = refusals(llm, Role.ARBITER)
    assert "the coder has not shown, with evidence in the pull request" in arbiter[0]
    assert "can only be ruled force_fix" in arbiter[1]


async def test_a_rejected_intent_may_be_ruled_intended_by_the_arbiter() -> None:
    outcome, llm = await debate(
        verifier(),
        policy=ONE_ROUND,
        tester=[report(finding()), evaluations(reject("F1", "A refund must lower the total."))],
        coder=[answers(intended())],
        arbiter=[rulings(intended_ruling())],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.INTENDED, Consensus.ARBITER)
    assert result.behaviour_change
    assert not refusals(llm, Role.ARBITER)
    said = [m.text for m in outcome.transcript.thread("F1")]
    assert any("the change of behaviour is intended" in s for s in said)


async def test_a_cited_test_that_fails_at_the_head_backs_no_intent() -> None:
    outcome, llm = await debate(
        verifier(own_test_passes=False),
        policy=DebatePolicy(max_rounds=1, max_turn_attempts=3),
        tester=[
            report(finding()),
            evaluations(accept("F1", "Fine.")),
            evaluations(reject("F1", "Its own test fails.")),
        ],
        coder=[answers(intended())],
        arbiter=[
            rulings(intended_ruling()),
            rulings(warn("F1", "Refunds are left out.")),
            rulings(intended_ruling()),
        ],
    )

    (result,) = outcome.findings
    assert result.resolution is Resolution.OPEN
    (tester,) = refusals(llm, Role.TESTER)
    assert f"the pull request's test {CART_TEST} fails at the head" in tester
    arbiter = refusals(llm, Role.ARBITER)
    assert f"the pull request's test {CART_TEST} fails at the head" in arbiter[0]
    assert "can only be ruled force_fix" in arbiter[1]


async def test_only_a_proven_finding_is_ruled_intended() -> None:
    unproven = ScriptedVerifier({OLD_RULE_TEST.path: Evidence.FAILS_AT_BASE})

    outcome, llm = await debate(
        unproven,
        policy=ONE_ROUND,
        tester=[report(finding()), evaluations(reject("F1", "Still a bug."))],
        coder=[answers(intended())],
        arbiter=[rulings(intended_ruling()), rulings(warn("F1", "Refunds are left out."))],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.WARNING, Consensus.ARBITER)
    (refused,) = refusals(llm, Role.ARBITER)
    assert "only a proven finding is ruled intended" in refused


async def test_without_tests_only_the_citations_are_checked_and_it_says_so() -> None:
    unit = intended_unit()
    plain = {k: v for k, v in finding().items() if k != "reproduction"}

    outcome, _ = await debate(
        None,
        unit,
        tester=[report(plain), evaluations(accept("F1", "The changelog says so."))],
        coder=[answers(intended())],
    )

    (result,) = outcome.findings
    assert result.resolution is Resolution.INTENDED
    assert result.intended is not None
    assert result.intended.tests == []
    assert not result.behaviour_change  # nothing proved the behaviour changed
    said = [m.text for m in outcome.transcript.thread("F1")]
    assert any(f"its test {CART_TEST} not run (tests are not run" in s for s in said)


async def test_an_intent_shown_after_a_patch_its_test_rejected_may_be_accepted() -> None:
    """The patch was no fix; the coder then shows the change is meant: the tester weighs
    that answer, not the patch before it."""
    wrong = {"path": CART, "start_line": RULE_LINE, "end_line": RULE_LINE, "replacement": "x"}

    outcome, llm = await debate(
        verifier(),
        tester=[
            report(finding()),
            evaluations(reject("F1", "The test still fails.")),
            evaluations(accept("F1", "The changelog says so.")),
        ],
        coder=[answers(concede("F1", wrong)), answers(intended())],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.INTENDED, Consensus.UNANIMOUS)
    assert result.fix_verified is False  # the patch it gave first is still said to fail
    assert not refusals(llm, Role.TESTER)


def arbitrated_later(
    verifying: ScriptedVerifier, *rulings_asked: Any
) -> tuple[Outcome, Outcome, ScriptedLLM]:
    """A debate without an arbiter, driven by a plain loop, that ends with the coder's intent
    rejected and the finding open; then, as stored and read back, the arbiter a person asks
    for later, given `rulings_asked`."""
    machine = DebateMachine(NO_ARBITER, intended_unit(), terms=ProofTerms(COMMAND))
    debating = ScriptedLLM(
        by_role(
            tester=[report(finding()), evaluations(reject("F1", "A refund must lower it."))],
            coder=[answers(intended())],
        )
    )
    ceiling = TokenCeiling(NO_ARBITER.token_ceiling)
    debated = play(machine.run(), debating, ceiling=ceiling, shows=shown_by(verifying))
    stored = Outcome.model_validate_json(debated.model_dump_json())

    later = DebateMachine(ONE_ROUND, intended_unit(), terms=ProofTerms(COMMAND))
    llm = ScriptedLLM(by_role(arbiter=list(rulings_asked)))
    ruled = play(
        later.arbitrate(stored, ["F1"]), llm, ceiling=TokenCeiling(ONE_ROUND.token_ceiling)
    )
    return debated, ruled, llm


def test_an_intent_left_open_may_be_ruled_intended_when_a_person_asks_later() -> None:
    """With arbitration off the rejected intent ends open; the arbiter a person asks for later
    rules it intended, on the evidence the coder cited in the debate."""
    verifying = verifier()

    # A second ruling is there for the arbiter's retry, should its first be refused.
    debated, ruled, llm = arbitrated_later(
        verifying, rulings(intended_ruling()), rulings(intended_ruling())
    )

    (left,) = debated.findings
    assert (left.resolution, left.consensus) == (Resolution.OPEN, Consensus.UNRESOLVED)
    assert verifying.ran_own == [CART_TEST]
    assert refusals(llm, Role.ARBITER) == []
    assert len(llm.calls(Role.ARBITER)) == 1
    (result,) = ruled.findings
    assert (result.resolution, result.consensus) == (Resolution.INTENDED, Consensus.ARBITER)
    assert result.behaviour_change
    assert result.intended is not None
    assert [c.path or c.quote for c in result.intended.citations] == [
        "total() now leaves negative prices out",
        CHANGELOG,
        CART_TEST,
    ]
    # The cited test's run at the head in the debate is still the evidence.
    (own,) = result.intended.tests
    assert (own.test, own.passed) == (CART_TEST, True)
    assert verifying.ran_own == [CART_TEST]


def test_a_cited_test_that_failed_in_the_debate_still_refuses_an_intended_ruling_later() -> None:
    verifying = verifier(own_test_passes=False)

    _, ruled, llm = arbitrated_later(
        verifying, rulings(intended_ruling()), rulings(intended_ruling())
    )

    (result,) = ruled.findings
    assert result.resolution is Resolution.OPEN
    refused = refusals(llm, Role.ARBITER)
    assert f"the pull request's test {CART_TEST} fails at the head" in refused[0]
