"""A debate whose tests run elsewhere suspends when it asks for them, every run asked at once
dispatched first, and resumes from its journal and its recorded runs to the outcome it would
have reached had the tests answered at once, paying for no model call twice."""

from collections.abc import Sequence
from typing import Any

import pytest

from agents.engine import Debate
from agents.errors import AwaitingTests
from agents.journal import MemoryJournal
from agents.proofs import Proving
from agents.protocol import Patch, Reproduction
from agents.recorded_tests import MemoryRecordedRuns, RecordedRun, RecordedVerifier, run_digest
from agents.scripted import ScriptedLLM, by_role
from agents.verification import Evidence, FixCheck, Verification
from tests.kits.proofs import COMMAND, ScriptedVerifier, reproduction
from tests.scenarios.debates import (
    LOG_FIX,
    LOG_LINE,
    NEGATIVE,
    NEGATIVE_FIX,
    UNDEFINED,
    accept,
    answers,
    concede,
    evaluations,
    payments_unit,
    report,
)

TESTED = {**UNDEFINED, "reproduction": reproduction("tests/test_refund.py")}
NEGATIVE_TESTED = {**NEGATIVE, "reproduction": reproduction("tests/test_negative.py")}
SHOWS = {"tests/test_refund.py": Evidence.REPRODUCED, "tests/test_negative.py": Evidence.REPRODUCED}
FIXES = {LOG_LINE: True, NEGATIVE_FIX["replacement"]: True}


def script() -> ScriptedLLM:
    """Two findings, each with a test that reproduces it, each fixed by a patch its test
    passes with."""
    return ScriptedLLM(
        by_role(
            tester=[
                report(TESTED, NEGATIVE_TESTED),
                evaluations(accept("F1", "Fixed."), accept("F2", "Fixed.")),
            ],
            coder=[answers(concede("F1", LOG_FIX), concede("F2", NEGATIVE_FIX))],
        )
    )


class Elsewhere:
    """A verifier whose runs happen elsewhere: each run asked is dispatched (kept here), and
    the debate waits for it; the results come later, through the record."""

    def __init__(self) -> None:
        self.dispatched: list[str] = []

    @property
    def command(self) -> str:
        return COMMAND

    async def reproduce(self, reproduction: Reproduction) -> Verification:
        raise self._dispatch(run_digest(COMMAND, reproduction))

    async def check_fix(self, reproduction: Reproduction, patches: Sequence[Patch]) -> FixCheck:
        raise self._dispatch(run_digest(COMMAND, reproduction, patches))

    def _dispatch(self, digest: str) -> AwaitingTests:
        self.dispatched.append(digest)
        return AwaitingTests([digest])


async def answer(runs: MemoryRecordedRuns, digests: list[str], asked: dict[str, Any]) -> None:
    """Record what the runs showed, as the App does when their workflows complete."""
    oracle = ScriptedVerifier(SHOWS, FIXES)
    for digest in digests:
        reproduction, patches = asked[digest]
        if patches:
            fix = await oracle.check_fix(reproduction, patches)
            await runs.record(digest, RecordedRun(fix=fix))
        else:
            verification = await oracle.reproduce(reproduction)
            await runs.record(digest, RecordedRun(verification=verification))


def what_was_asked() -> dict[str, Any]:
    """Every run the script can ask, by digest."""
    refund = Reproduction.model_validate(TESTED["reproduction"])
    negative = Reproduction.model_validate(NEGATIVE_TESTED["reproduction"])
    log_fix, negative_fix = Patch.model_validate(LOG_FIX), Patch.model_validate(NEGATIVE_FIX)
    return {
        run_digest(COMMAND, refund): (refund, ()),
        run_digest(COMMAND, negative): (negative, ()),
        run_digest(COMMAND, refund, [log_fix]): (refund, [log_fix]),
        run_digest(COMMAND, negative, [negative_fix]): (negative, [negative_fix]),
    }


async def test_a_debate_suspends_for_its_tests_and_resumes_to_the_same_outcome() -> None:
    direct_llm = script()
    direct = await Debate(direct_llm, proving=Proving(ScriptedVerifier(SHOWS, FIXES))).run(
        payments_unit()
    )
    llm, journal, runs = script(), MemoryJournal(), MemoryRecordedRuns()
    asked = what_was_asked()
    suspensions: list[tuple[list[str], list[str]]] = []

    outcome = None
    while outcome is None:
        elsewhere = Elsewhere()
        debate = Debate(llm, proving=Proving(RecordedVerifier(elsewhere, runs)))
        try:
            outcome = await debate.run(payments_unit(), journal=journal)
        except AwaitingTests as waiting:
            suspensions.append((waiting.runs, elsewhere.dispatched))
            await answer(runs, waiting.runs, asked)

    assert outcome.model_dump(mode="json") == direct.model_dump(mode="json")
    # The two reproductions, then the two fixes: each pair dispatched before the debate
    # suspended for both.
    assert [sorted(w) for w, _ in suspensions] == [sorted(d) for _, d in suspensions]
    assert [len(w) for w, _ in suspensions] == [2, 2]
    # Every model call was answered once: the journal replayed them on each resumption.
    assert llm.requests == direct_llm.requests
    assert [f.fix_verified for f in outcome.findings] == [True, True]


async def test_a_run_recorded_is_answered_from_the_record_without_running() -> None:
    runs = MemoryRecordedRuns()
    verifier = ScriptedVerifier(SHOWS, FIXES)
    recorded = RecordedVerifier(verifier, runs)
    test = Reproduction.model_validate(TESTED["reproduction"])
    fix = Patch.model_validate(LOG_FIX)

    first = await recorded.reproduce(test)
    again = await RecordedVerifier(verifier, runs).reproduce(test)
    checked = await recorded.check_fix(test, [fix])
    checked_again = await RecordedVerifier(verifier, runs).check_fix(test, [fix])

    assert again == first
    assert checked_again == checked
    assert verifier.ran == ["tests/test_refund.py"]
    assert verifier.checked == [("tests/test_refund.py", LOG_LINE)]


@pytest.mark.parametrize(
    ("changed", "same"),
    [
        ({"command": "pytest {test}"}, False),
        ({"content": "def test_it():\n    assert 1\n"}, False),
        ({}, True),
    ],
)
def test_a_runs_digest_is_of_what_runs(changed: dict[str, str], same: bool) -> None:
    test = Reproduction.model_validate(TESTED["reproduction"])
    other = test.model_copy(update={k: v for k, v in changed.items() if k != "command"})
    command = changed.get("command", COMMAND)

    assert (run_digest(command, other) == run_digest(COMMAND, test)) is same
