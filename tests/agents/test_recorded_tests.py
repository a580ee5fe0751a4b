"""A debate whose tests run elsewhere waits when it asks for them, every run asked at once
started first, and is taken up again, fed its journal and its recorded runs, to the outcome it
would have reached had the tests answered at once, paying for no model call twice."""

from typing import Any

import pytest

from agents.debate.driver import Waiting
from agents.debate.engine import Debate
from agents.debate.journal import MemoryJournal
from agents.debate.needs import OwnTest, Run, Trial, TrialResult
from agents.debate.proofs import Proving
from agents.debate.recorded_tests import (
    MemoryRecordedRuns,
    RecordedRun,
    RecordedTrials,
    run_digest,
)
from agents.models.scripted import ScriptedLLM, by_role
from agents.protocol import Patch, Reproduction
from agents.verification import Evidence
from policies.verify import VerifyConfig
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
from tests.scenarios.proofs import COMMAND, ScriptedVerifier, reproduction

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
    """Tests that run elsewhere: each run asked is started (kept here), and the debate waits
    for it; the results come later, through the record."""

    def __init__(self) -> None:
        self.started: list[str] = []

    @property
    def command(self) -> str:
        return COMMAND

    async def start(self, run: Run, digest: str) -> TrialResult | None:
        self.started.append(digest)
        return None


class AtOnce:
    """Tests that run elsewhere and answer at once, through `verifier`."""

    def __init__(self, verifier: ScriptedVerifier) -> None:
        self.verifier = verifier

    @property
    def command(self) -> str:
        return COMMAND

    async def start(self, run: Run, digest: str) -> TrialResult | None:
        if isinstance(run, OwnTest):
            return await self.verifier.run_own(run.test)
        if run.checks_fix:
            return await self.verifier.check_fix(run.reproduction, run.patches)
        return await self.verifier.reproduce(run.reproduction)


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

    while True:
        elsewhere = Elsewhere()
        outcome = await Debate(llm).advance(
            payments_unit(),
            journal=journal,
            elsewhere=elsewhere,
            record=runs,
            max_attempts=VerifyConfig().max_attempts,
        )
        if not isinstance(outcome, Waiting):
            break
        suspensions.append((list(outcome.runs), elsewhere.started))
        await answer(runs, list(outcome.runs), asked)

    assert outcome.model_dump(mode="json") == direct.model_dump(mode="json")
    # The two reproductions, then the two fixes: each pair started before the debate
    # waited for both.
    assert [sorted(w) for w, _ in suspensions] == [sorted(d) for _, d in suspensions]
    assert [len(w) for w, _ in suspensions] == [2, 2]
    # Every model call was answered once: the journal answered them when taken up again.
    assert llm.requests == direct_llm.requests
    assert [f.fix_verified for f in outcome.findings] == [True, True]


async def test_a_run_recorded_is_answered_from_the_record_without_running() -> None:
    runs = MemoryRecordedRuns()
    verifier = ScriptedVerifier(SHOWS, FIXES)
    recorded = RecordedTrials(AtOnce(verifier), runs)
    test = Reproduction.model_validate(TESTED["reproduction"])
    fix = Patch.model_validate(LOG_FIX)

    first = await recorded.run([Trial(test)])
    again = await RecordedTrials(AtOnce(verifier), runs).run([Trial(test)])
    checked = await recorded.run([Trial(test, (fix,))])
    checked_again = await RecordedTrials(AtOnce(verifier), runs).run([Trial(test, (fix,))])

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
