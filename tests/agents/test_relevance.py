"""A proven finding's test that does not exercise its claim: the coder disputes its relevance,
the tester answers, the arbiter rules — driven through the machine by a plain loop.

Only a relevance ruling sets a proof aside: a dispute on the facts is still refused, and so is
the arbiter's warning on a proven finding whose test was never disputed.
"""

from typing import Any

from agents.debate.machine import DebateMachine
from agents.debate.needs import Trial, TrialResult
from agents.debate.proofs import ProofTerms
from agents.models.llm import Role
from agents.models.scripted import ScriptedLLM, by_role
from agents.outcome import Consensus, MessageKind, Outcome, Resolution
from agents.verification import Evidence, FixCheck, Run, Verification
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy
from tests.kits.machine import play
from tests.scenarios.debates import (
    LOG_FIX,
    LOG_LINE,
    UNDEFINED,
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    payments_unit,
    reject,
    report,
    rulings,
    warn,
)
from tests.scenarios.proofs import COMMAND, reproduction, runs_showing

GREP = "tests/test_refund_source.py"
GREPS = {
    **UNDEFINED,
    "reproduction": reproduction(GREP, "assert 'log(' not in open('app/payments.py').read()"),
}
"""The undefined-`log` finding, with a test that reads the source's text instead of calling
`refund`: it fails at the head and passes at the base all the same."""
CALLS = "tests/test_refund_calls.py"
READS_TEXT = "The test reads payments.py's text; it never calls refund()."
POLICY = DebatePolicy(max_exchanges_per_finding=1)
"""One exchange a finding: a finding its tester keeps goes to the arbiter."""


def irrelevant(finding_id: str, argument: str = READS_TEXT) -> dict[str, Any]:
    return {"finding_id": finding_id, "stance": "irrelevant_test", "argument": argument}


def ruled(finding_id: str, kind: str, **rest: Any) -> dict[str, Any]:
    return {"finding_id": finding_id, "ruling": kind, "reasoning": READS_TEXT, **rest}


def shows(evidence: dict[str, Evidence], fixes: dict[str, bool] | None = None) -> Any:
    """Each test's runs by its path; each patch passes its test if `fixes` says so."""

    def run(trial: Trial) -> TrialResult:
        if trial.checks_fix:
            passes = (fixes or {}).get(trial.patches[0].replacement, False)
            return FixCheck.of(trial.reproduction.path, Run(exit_code=0 if passes else 1))
        path = trial.reproduction.path
        head, base = runs_showing(path, evidence[path])
        return Verification.of(path, COMMAND, head, base)

    return run


def debate(
    policy: DebatePolicy = POLICY,
    evidence: dict[str, Evidence] | None = None,
    fixes: dict[str, bool] | None = None,
    attempts: int = 2,
    **script: list[Any],
) -> tuple[Outcome, ScriptedLLM]:
    llm = ScriptedLLM(by_role(**script))
    machine = DebateMachine(policy, payments_unit(), terms=ProofTerms(COMMAND, attempts))
    runs = shows(evidence or {GREP: Evidence.REPRODUCED}, fixes)
    outcome = play(machine.run(), llm, ceiling=TokenCeiling(policy.token_ceiling), shows=runs)
    return outcome, llm


def said(llm: ScriptedLLM, role: Role, turn: int = -1) -> str:
    return "".join(b.text for b in llm.calls(role)[turn].blocks)


def refusals(llm: ScriptedLLM, role: Role) -> list[str]:
    return [b.text for r in llm.calls(role) for b in r.blocks if "refused" in b.text]


def test_a_test_ruled_irrelevant_is_no_proof_and_the_finding_is_ruled_as_an_opinion() -> None:
    outcome, llm = debate(
        tester=[report(GREPS), evaluations(reject("F1", "A grep is a test."))],
        coder=[answers(irrelevant("F1"))],
        arbiter=[rulings(ruled("F1", "test_irrelevant", warning="log() is untested."))],
    )

    (result,) = outcome.findings
    assert (result.consensus, result.resolution) == (Consensus.ARBITER, Resolution.WARNING)
    assert result.warning == "log() is untested."
    tested = result.verification
    assert tested is not None
    # The runs stay on the record as what they were, set aside with the ruling's reason.
    assert tested.verdict is Evidence.REPRODUCED
    assert (tested.relevant, tested.relevance) == (False, READS_TEXT)
    thread = [m.text for m in outcome.transcript.thread("F1")]
    assert f"Its test does not exercise the claim: {READS_TEXT}" in thread
    assert any(t.startswith("Test ruled not to test its claim: The test reads") for t in thread)
    # Nobody was refused anything: the dispute of the test's relevance is heard.
    assert refusals(llm, Role.CODER) == refusals(llm, Role.ARBITER) == []
    # Each role was told how a test's relevance is disputed, answered and ruled on.
    assert "answer irrelevant_test" in said(llm, Role.CODER)
    assert "reject with a new `reproduction`" in said(llm, Role.TESTER)
    assert "test_irrelevant (say in reasoning why" in said(llm, Role.ARBITER)


def test_a_test_ruled_relevant_binds_and_its_fix_is_forced_and_checked() -> None:
    outcome, _ = debate(
        fixes={LOG_LINE: True},
        tester=[report(GREPS), evaluations(reject("F1", "It shows log( is called."))],
        coder=[answers(irrelevant("F1"))],
        arbiter=[rulings(ruled("F1", "test_relevant", patch=LOG_FIX))],
    )

    (result,) = outcome.findings
    assert (result.consensus, result.resolution) == (Consensus.ARBITER, Resolution.FIXED)
    assert result.verification is not None
    assert (result.verification.relevant, result.verification.relevance) == (True, READS_TEXT)
    assert result.fix_verified is True


def test_a_proven_finding_is_still_never_argued_away_on_the_facts() -> None:
    """A dispute on the facts is refused; the arbiter's warning on a proven finding is
    refused, unless it rules the test irrelevant; a relevance ruling on a test nobody
    disputed is refused."""
    outcome, llm = debate(
        tester=[report(GREPS), evaluations(reject("F1", "A grep is a test."))],
        coder=[answers(dispute("F1", "log is a builtin.")), answers(irrelevant("F1"))],
        arbiter=[
            rulings(warn("F1", "Fine.")),
            rulings(ruled("F1", "test_irrelevant", patch=LOG_FIX)),
        ],
    )

    (coder_refused,) = refusals(llm, Role.CODER)
    assert "it is proven, and can only be conceded with a patch" in coder_refused
    (arbiter_refused,) = refusals(llm, Role.ARBITER)
    assert "can only be ruled force_fix, test_relevant or test_irrelevant" in arbiter_refused
    (result,) = outcome.findings
    # Ruled irrelevant, the finding is an opinion the arbiter still upholds with a fix; the
    # fix is not checked against a test that proves nothing.
    assert (result.resolution, result.fix_verified) == (Resolution.FIXED, None)
    assert result.verification is not None
    assert result.verification.relevant is False


def test_a_relevance_ruling_on_an_undisputed_test_is_refused() -> None:
    outcome, llm = debate(
        tester=[report(GREPS), evaluations(reject("F1", "Still broken."))],
        coder=[answers(concede("F1", LOG_FIX))],
        arbiter=[rulings(ruled("F1", "test_irrelevant", warning="w")), rulings()],
    )

    (refused,) = refusals(llm, Role.ARBITER)
    assert "test_irrelevant is only for a test the coder answered irrelevant_test" in refused
    (result,) = outcome.findings
    assert result.resolution is Resolution.OPEN
    assert result.verification is not None
    assert result.verification.relevant is None


def test_an_unproven_finding_s_test_is_not_disputed_as_irrelevant() -> None:
    outcome, llm = debate(
        evidence={GREP: Evidence.FAILS_AT_BASE},
        tester=[report(GREPS), evaluations(accept("F1", "Agreed."))],
        coder=[answers(irrelevant("F1")), answers(dispute("F1", READS_TEXT))],
    )

    (refused,) = refusals(llm, Role.CODER)
    assert "only a proven finding's test is disputed as irrelevant" in refused
    (result,) = outcome.findings
    assert result.resolution is Resolution.WITHDRAWN


def test_the_tester_who_agrees_withdraws_the_finding_and_its_test_proves_nothing() -> None:
    outcome, _ = debate(
        tester=[report(GREPS), evaluations(accept("F1", "Right, it only greps."))],
        coder=[answers(irrelevant("F1"))],
    )

    (result,) = outcome.findings
    assert (result.consensus, result.resolution) == (Consensus.UNANIMOUS, Resolution.WITHDRAWN)
    assert result.verification is not None
    assert result.verification.relevant is False
    assert result.verification.relevance == f"its tester agreed: {READS_TEXT}"


def test_the_tester_answers_with_a_test_that_calls_the_code_and_it_binds() -> None:
    """A new test given in answer is run before the coder speaks again; it proves the finding,
    and the coder, disputing the facts again, is refused and concedes."""
    calls = reproduction(CALLS, "refund(Payment(10), 5)")
    outcome, llm = debate(
        policy=DebatePolicy(),
        evidence={GREP: Evidence.REPRODUCED, CALLS: Evidence.REPRODUCED},
        fixes={LOG_LINE: True},
        tester=[
            report(GREPS),
            evaluations({**reject("F1", "This one calls refund()."), "reproduction": calls}),
            evaluations(accept("F1", "Fixed.")),
        ],
        coder=[
            answers(irrelevant("F1")),
            answers(dispute("F1", "log is a builtin.")),
            answers(concede("F1", LOG_FIX)),
        ],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.fix_verified) == (Resolution.FIXED, True)
    assert result.finding.reproduction is not None
    assert result.finding.reproduction.path == CALLS
    assert result.verification is not None
    assert (result.verification.test, result.verification.relevant) == (CALLS, None)
    # The coder's next turn showed the new test's runs.
    assert CALLS in said(llm, Role.CODER, 1)
    assert "it is proven" in refusals(llm, Role.CODER)[0]
    kinds = [m.kind for m in outcome.transcript.thread("F1")]
    assert kinds.count(MessageKind.NOTICE) >= 2  # both tests' runs are told


def test_a_dispute_left_unresolved_is_ruled_on_relevance_when_a_person_asks() -> None:
    """With arbitration off the dispute ends unresolved; the arbiter a person asks for later
    is asked to rule on the test's relevance, and its ruling is taken."""
    debated, _ = debate(
        policy=DebatePolicy(max_exchanges_per_finding=1, arbitration=False),
        tester=[report(GREPS), evaluations(reject("F1", "A grep is a test."))],
        coder=[answers(irrelevant("F1"))],
    )
    (left,) = debated.findings
    assert left.resolution is Resolution.OPEN

    llm = ScriptedLLM(
        by_role(arbiter=[rulings(ruled("F1", "test_irrelevant", warning="log() is untested."))])
    )
    machine = DebateMachine(POLICY, payments_unit(), terms=ProofTerms(COMMAND))
    ceiling = TokenCeiling(POLICY.token_ceiling)
    outcome = play(machine.arbitrate(debated, ["F1"]), llm, ceiling=ceiling)

    assert refusals(llm, Role.ARBITER) == []
    (result,) = outcome.findings
    assert (result.consensus, result.resolution) == (Consensus.ARBITER, Resolution.WARNING)
    assert result.verification is not None
    assert (result.verification.relevant, result.verification.relevance) == (False, READS_TEXT)


def test_a_new_test_is_given_only_to_keep_the_finding_and_only_while_tests_are_left() -> None:
    calls = reproduction(CALLS, "refund(Payment(10), 5)")
    outcome, llm = debate(
        policy=DebatePolicy(max_exchanges_per_finding=1, max_turn_attempts=3),
        attempts=1,
        tester=[
            report(GREPS),
            evaluations({**accept("F1", "Here is a better one."), "reproduction": calls}),
            evaluations({**reject("F1", "This one calls refund()."), "reproduction": calls}),
            evaluations(reject("F1", "A grep is a test.")),
        ],
        coder=[answers(irrelevant("F1"))],
        arbiter=[rulings(ruled("F1", "test_irrelevant", warning="log() is untested."))],
    )

    accepting, used_up = refusals(llm, Role.TESTER)
    assert "accepting withdraws the finding: give a new reproduction only to keep it" in accepting
    assert "its tests are used up: keep it, or accept" in used_up
    (result,) = outcome.findings
    assert result.verification is not None
    assert (result.verification.test, result.verification.relevant) == (GREP, False)


def test_a_test_ruled_relevant_where_no_test_runs_forces_the_fix_unchecked() -> None:
    """The arbiter a person asks for runs where no test runs (a command of the App): the
    ruling binds on the test's recorded runs, and its fix is forced without a check."""
    debated, _ = debate(
        policy=DebatePolicy(max_exchanges_per_finding=1, arbitration=False),
        tester=[report(GREPS), evaluations(reject("F1", "It shows log( is called."))],
        coder=[answers(irrelevant("F1"))],
    )
    llm = ScriptedLLM(by_role(arbiter=[rulings(ruled("F1", "test_relevant", patch=LOG_FIX))]))
    machine = DebateMachine(POLICY, payments_unit())
    outcome = play(
        machine.arbitrate(debated, ["F1"]), llm, ceiling=TokenCeiling(POLICY.token_ceiling)
    )

    (result,) = outcome.findings
    assert (result.consensus, result.resolution, result.fix_verified) == (
        Consensus.ARBITER,
        Resolution.FIXED,
        None,
    )
    assert result.patch is not None
    assert result.patch.replacement == LOG_LINE
    assert result.verification is not None
    assert (result.verification.verdict, result.verification.relevant) == (
        Evidence.REPRODUCED,
        True,
    )
