"""The debate holds to what its findings' tests show: a reproduced finding is proof, a patch
its test rejects is no fix, a finding whose test passes at the head goes, and a finding raised
late must come with a test."""

from typing import Any

import pytest

from agents.debate.engine import Debate
from agents.debate.proofs import Proving
from agents.models.llm import Role
from agents.models.scripted import ScriptedLLM, by_role
from agents.outcome import Consensus, Outcome, Resolution
from agents.protocol import ToolName
from agents.verification import Evidence
from policies.debate import DebatePolicy
from tests.scenarios.debates import (
    LOG_FIX,
    LOG_LINE,
    NEGATIVE,
    NEGATIVE_FIX,
    UNDEFINED,
    accept,
    answers,
    concede,
    dispute,
    evaluations,
    force_fix,
    patch,
    payments_unit,
    reject,
    report,
    rulings,
    warn,
)
from tests.scenarios.proofs import ScriptedVerifier, reproduction

TESTED = {**UNDEFINED, "reproduction": reproduction("tests/test_refund.py")}
"""The undefined-`log` finding, with a test that calls `refund`."""
WRONG_FIX = patch(16, "    print('refund')")


async def debate(
    verifier: ScriptedVerifier,
    *,
    attempts: int = 2,
    policy: DebatePolicy | None = None,
    **script: list[Any],
) -> tuple[Outcome, ScriptedLLM]:
    llm = ScriptedLLM(by_role(**script))
    proving = Proving(verifier, max_attempts=attempts)
    outcome = await Debate(llm, policy, proving=proving).run(payments_unit())
    return outcome, llm


def refusals(llm: ScriptedLLM, role: Role) -> list[str]:
    """The reasons each of `role`'s retries was told its last input was refused."""
    return [b.text for r in llm.calls(role) for b in r.blocks if "refused" in b.text]


async def test_a_reproduced_finding_is_fixed_by_a_patch_its_test_passes_with() -> None:
    verifier = ScriptedVerifier({"tests/test_refund.py": Evidence.REPRODUCED}, {LOG_LINE: True})

    outcome, llm = await debate(
        verifier,
        tester=[report(TESTED), evaluations(accept("F1", "Fixed."))],
        coder=[
            answers(dispute("F1", "log is a builtin.")),
            answers(concede("F1", LOG_FIX, "Right.")),
        ],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.FIXED, Consensus.UNANIMOUS)
    assert result.verification is not None
    assert result.verification.verdict is Evidence.REPRODUCED
    assert result.verification.reason == "it fails at the head and passes at the base"
    assert result.fix_verified is True
    # The dispute was refused: a proven finding is answered with a patch.
    (refused,) = refusals(llm, Role.CODER)
    assert "it is proven" in refused
    assert verifier.ran == ["tests/test_refund.py"]
    assert verifier.checked == [("tests/test_refund.py", LOG_LINE)]
    # The coder was shown the test's verdict and its output.
    first = "".join(b.text for b in llm.calls(Role.CODER)[0].blocks)
    assert "reproduced" in first
    assert "AssertionError: 3 != 2" in first
    assert outcome.verification_seconds == pytest.approx(1.5)
    assert outcome.test_tokens > 0


async def test_a_patch_its_test_still_fails_with_is_not_a_fix() -> None:
    verifier = ScriptedVerifier({"tests/test_refund.py": Evidence.REPRODUCED}, {LOG_LINE: True})

    outcome, llm = await debate(
        verifier,
        tester=[
            report(TESTED),
            evaluations(accept("F1", "Fine.")),
            evaluations(reject("F1", "The test still fails.")),
            evaluations(accept("F1", "Fixed.")),
        ],
        coder=[
            answers(concede("F1", WRONG_FIX, "Printed.")),
            answers(concede("F1", LOG_FIX, "Logged.")),
        ],
    )

    (result,) = outcome.findings
    assert result.resolution is Resolution.FIXED
    assert result.patch is not None
    assert result.patch.replacement == LOG_LINE
    assert result.fix_verified is True
    (refused,) = refusals(llm, Role.TESTER)
    assert "the patch does not make its test pass" in refused
    assert [r for _, r in verifier.checked] == [WRONG_FIX["replacement"], LOG_LINE]


async def test_a_finding_whose_test_passes_at_the_head_is_withdrawn_before_the_coder_speaks() -> (
    None
):
    verifier = ScriptedVerifier({"tests/test_refund.py": Evidence.NOT_REPRODUCED})

    outcome, llm = await debate(
        verifier,
        tester=[report(TESTED), evaluations(accept("F1", "My test shows it works."))],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.WITHDRAWN, Consensus.UNANIMOUS)
    assert result.verification is not None
    assert result.verification.verdict is Evidence.NOT_REPRODUCED
    assert llm.calls(Role.CODER) == []
    retest = llm.calls(Role.TESTER)[1]
    assert retest.tool.name is ToolName.EVALUATE_ANSWERS
    assert "pass at the change's head" in "".join(b.text for b in retest.blocks)


async def test_a_tester_may_give_another_test_until_its_attempts_are_used() -> None:
    verifier = ScriptedVerifier(
        {"tests/test_refund.py": Evidence.NOT_REPRODUCED, "tests/test_log.py": Evidence.REPRODUCED},
        {LOG_LINE: True},
    )
    second = reproduction("tests/test_log.py", "refund(Payment(1), 1)")

    outcome, _ = await debate(
        verifier,
        tester=[
            report(TESTED),
            evaluations({**reject("F1", "This one calls refund."), "reproduction": second}),
            evaluations(accept("F1", "Fixed.")),
        ],
        coder=[answers(concede("F1", LOG_FIX))],
    )

    (result,) = outcome.findings
    assert verifier.ran == ["tests/test_refund.py", "tests/test_log.py"]
    assert result.verification is not None
    assert result.verification.verdict is Evidence.REPRODUCED
    assert result.verification.test == "tests/test_log.py"
    # The finding is posted with the test that proved it.
    assert result.finding.reproduction is not None
    assert result.finding.reproduction.path == "tests/test_log.py"
    assert (result.resolution, result.fix_verified) == (Resolution.FIXED, True)


async def test_with_its_attempts_used_a_finding_whose_test_passes_goes_without_asking() -> None:
    verifier = ScriptedVerifier({"tests/test_refund.py": Evidence.NOT_REPRODUCED})

    outcome, llm = await debate(verifier, attempts=1, tester=[report(TESTED)])

    (result,) = outcome.findings
    assert result.resolution is Resolution.WITHDRAWN
    assert len(llm.requests) == 1


@pytest.mark.parametrize("proven", [Evidence.REPRODUCED, Evidence.INTRODUCED])
async def test_the_arbiter_cannot_rule_a_proven_finding_away_with_a_warning(
    proven: Evidence,
) -> None:
    verifier = ScriptedVerifier({"tests/test_refund.py": proven}, {LOG_LINE: True})

    outcome, llm = await debate(
        verifier,
        policy=DebatePolicy(max_rounds=1),
        tester=[report(TESTED), evaluations(reject("F1", "Still wrong."))],
        coder=[answers(concede("F1", WRONG_FIX))],
        arbiter=[
            rulings(warn("F1", "Refunds may fail.")),
            rulings(force_fix("F1", LOG_FIX)),
        ],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.FIXED, Consensus.ARBITER)
    assert result.fix_verified is True
    (refused,) = refusals(llm, Role.ARBITER)
    assert "can only be ruled force_fix" in refused


async def test_a_finding_in_code_the_base_does_not_have_is_proven_in_new_code() -> None:
    """At the base its test cannot import what the change adds: the finding is no bug
    older than the change, and binds the debate as a reproduced one does."""
    verifier = ScriptedVerifier({"tests/test_refund.py": Evidence.INTRODUCED}, {LOG_LINE: True})

    outcome, llm = await debate(
        verifier,
        tester=[report(TESTED), evaluations(accept("F1", "Fixed."))],
        coder=[
            answers(dispute("F1", "It fails at the base too: not this change's bug.")),
            answers(concede("F1", LOG_FIX, "Right.")),
        ],
    )

    (result,) = outcome.findings
    assert result.verification is not None
    assert result.verification.verdict is Evidence.INTRODUCED
    assert result.verification.reason == (
        "the base has no name 'shares' in app.payments, which the change adds"
    )
    assert (result.resolution, result.fix_verified) == (Resolution.FIXED, True)
    (refused,) = refusals(llm, Role.CODER)
    assert "the base does not have the code it tests: it is proven" in refused
    # The coder was told the verdict, and what the base showed is kept.
    assert "introduced" in "".join(b.text for b in llm.calls(Role.CODER)[0].blocks)
    assert "cannot import name 'shares'" in result.verification.base_output_tail


async def test_a_finding_left_open_with_a_patch_its_test_still_fails_with_says_so() -> None:
    """The patch conceded was checked and refused: the outcome says the fix fails, not that
    none was checked."""
    verifier = ScriptedVerifier({"tests/test_refund.py": Evidence.REPRODUCED})

    outcome, _ = await debate(
        verifier,
        policy=DebatePolicy(max_rounds=1, arbitration=False),
        tester=[
            report(TESTED),
            evaluations(accept("F1", "Fine.")),
            evaluations(reject("F1", "The test still fails.")),
        ],
        coder=[answers(concede("F1", WRONG_FIX, "Printed."))],
    )

    (result,) = outcome.findings
    assert result.resolution is Resolution.OPEN
    assert result.patch is None
    assert result.fix_verified is False


@pytest.mark.parametrize("evidence", [Evidence.FAILS_AT_BASE, Evidence.BROKEN])
async def test_a_test_that_proves_no_regression_leaves_the_finding_an_opinion(
    evidence: Evidence,
) -> None:
    verifier = ScriptedVerifier({"tests/test_refund.py": evidence})

    outcome, llm = await debate(
        verifier,
        tester=[report(TESTED), evaluations(accept("F1", "Convinced."))],
        coder=[answers(dispute("F1", "log is a module-level logger defined elsewhere."))],
    )

    (result,) = outcome.findings
    assert (result.resolution, result.consensus) == (Resolution.WITHDRAWN, Consensus.UNANIMOUS)
    assert result.verification is not None
    assert result.verification.verdict is evidence
    assert refusals(llm, Role.CODER) == []


async def test_a_finding_raised_late_must_carry_a_test() -> None:
    verifier = ScriptedVerifier(
        {
            "tests/test_refund.py": Evidence.REPRODUCED,
            "tests/test_negative.py": Evidence.REPRODUCED,
        },
        {LOG_LINE: True, NEGATIVE_FIX["replacement"]: True},
    )
    late = {**NEGATIVE, "reproduction": reproduction("tests/test_negative.py")}

    outcome, llm = await debate(
        verifier,
        tester=[
            report(TESTED),
            evaluations(accept("F1", "Fixed."), new=(NEGATIVE,)),
            evaluations(new=(late,)),
            evaluations(accept("F2", "Fixed.")),
        ],
        coder=[
            answers(concede("F1", LOG_FIX)),
            answers(concede("F2", NEGATIVE_FIX)),
        ],
    )

    (refused,) = refusals(llm, Role.TESTER)
    assert "must carry a reproduction" in refused
    assert [f.finding.claim for f in outcome.findings] == [UNDEFINED["claim"], NEGATIVE["claim"]]
    assert verifier.ran == ["tests/test_refund.py", "tests/test_negative.py"]
    assert [f.fix_verified for f in outcome.findings] == [True, True]


async def test_without_verification_nothing_is_run_and_no_tool_offers_a_test() -> None:
    llm = ScriptedLLM(
        by_role(
            tester=[report(TESTED), evaluations(accept("F1", "Fixed."))],
            coder=[answers(concede("F1", LOG_FIX))],
        )
    )

    outcome = await Debate(llm).run(payments_unit())

    (result,) = outcome.findings
    assert (result.verification, result.fix_verified) == (None, None)
    assert all("reproduction" not in str(r.tool.input_schema()) for r in llm.requests)
