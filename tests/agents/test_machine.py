"""The debate as a machine: given what happened, it says what it needs next.

Driven here by plain loops — canned answers and test results, no event loop, no model client
— and, over random scripts and test results, it keeps the bounds the engine promises: calls
bounded, proof never argued away, every agreed fix's test passing; a debate whose tests wait
at any point is taken up again to the same outcome without asking any model twice.
"""

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.debate.driver import Waiting
from agents.debate.engine import Debate
from agents.debate.journal import MemoryJournal
from agents.debate.machine import DebateMachine
from agents.debate.needs import AskModel, CallEnd, RunTests, Trial
from agents.debate.proofs import ProofTerms, Proving
from agents.debate.recorded_tests import MemoryRecordedRuns, RecordedRun
from agents.models.llm import LLMRequest, LLMResponse, Role, Usage
from agents.models.scripted import ScriptedLLM
from agents.outcome import Consensus, Resolution
from agents.protocol import ToolName
from agents.verification import Evidence, FixCheck, OwnTestRun, Run, Verification
from policies.budget import TokenCeiling
from policies.debate import DebatePolicy
from tests.agents.test_engine_properties import (
    ChaosVerifier,
    ChaosWithTests,
    holds_to_its_tests,
    policies,
)
from tests.kits.machine import play
from tests.scenarios.debates import (
    LOG_FIX,
    UNDEFINED,
    accept,
    answers,
    concede,
    evaluations,
    payments_unit,
    report,
)
from tests.scenarios.proofs import COMMAND, reproduction, runs_showing

TESTED = {**UNDEFINED, "reproduction": reproduction("tests/test_refund.py")}


def answered(tool_input: dict[str, Any]) -> CallEnd:
    return CallEnd(response=LLMResponse(tool_input=tool_input, usage=Usage(input_tokens=100)))


def test_the_whole_debate_is_a_loop_over_what_the_machine_asks() -> None:
    """A finding with its test: the tester's report, its test at the base and the head, the
    coder's patch, the patch checked against the test, the tester's acceptance — each asked
    by the machine in turn and answered by hand."""
    machine = DebateMachine(DebatePolicy(), payments_unit(), terms=ProofTerms(COMMAND))
    steps = machine.run()
    asked: list[str] = []

    need = next(steps)
    assert isinstance(need, AskModel)
    assert (need.request.role, need.request.tool.name) == (Role.TESTER, "report_findings")
    asked.append("report")
    need = steps.send(answered(report(TESTED)))

    assert isinstance(need, RunTests)
    (run,) = need.runs
    assert isinstance(run, Trial)
    assert (run.reproduction.path, run.patches) == ("tests/test_refund.py", ())
    failing, passing = Run(exit_code=1, output_tail="NameError"), Run(exit_code=0)
    need = steps.send((Verification.of(run.reproduction.path, COMMAND, failing, passing),))

    assert isinstance(need, AskModel)
    assert (need.request.role, need.request.tool.name) == (Role.CODER, "answer_findings")
    # The coder is told the test reproduces the bug before it answers.
    assert "reproduced" in need.request.blocks[-1].text
    need = steps.send(answered(answers(concede("F1", LOG_FIX))))

    assert isinstance(need, RunTests)
    (fix,) = need.runs
    assert isinstance(fix, Trial)
    assert fix.checks_fix
    assert fix.patches[0].replacement == LOG_FIX["replacement"]
    need = steps.send((FixCheck.of(fix.reproduction.path, Run(exit_code=0)),))

    assert isinstance(need, AskModel)
    assert need.request.tool.name == ToolName.EVALUATE_ANSWERS
    try:
        steps.send(answered(evaluations(accept("F1", "The test passes."))))
    except StopIteration as stop:
        outcome = stop.value
    else:
        raise AssertionError("the machine asked for more after the tester accepted")

    (result,) = outcome.findings
    assert (result.consensus, result.resolution) == (Consensus.UNANIMOUS, Resolution.FIXED)
    assert result.verification is not None
    assert result.verification.verdict is Evidence.REPRODUCED
    assert result.fix_verified is True
    assert outcome.calls == 3


def test_a_proven_finding_disputed_is_sent_back_to_the_coder_not_argued_away() -> None:
    """The machine refuses a dispute of a reproduced finding and asks the coder again, about
    it alone, with the reason: the proof binds whatever the model says."""
    machine = DebateMachine(DebatePolicy(), payments_unit(), terms=ProofTerms(COMMAND))
    steps = machine.run()
    next(steps)
    need = steps.send(answered(report(TESTED)))
    assert isinstance(need, RunTests)
    failing, passing = Run(exit_code=1), Run(exit_code=0)
    need = steps.send((Verification.of("tests/test_refund.py", COMMAND, failing, passing),))

    need = steps.send(
        answered(answers({"finding_id": "F1", "stance": "dispute", "argument": "No."}))
    )

    assert isinstance(need, AskModel)
    assert need.request.role is Role.CODER
    assert need.request.subject == ("F1",)
    assert "it is proven" in need.request.blocks[-1].text


def test_a_finding_proven_in_new_code_disputed_is_sent_back_to_the_coder() -> None:
    """What the payments change adds is the machine's to know: the verifier's runs, judged
    without it (`fails at base`), are judged again by the machine, whoever ran them."""
    machine = DebateMachine(DebatePolicy(), payments_unit(), terms=ProofTerms(COMMAND))
    steps = machine.run()
    next(steps)
    need = steps.send(answered(report(TESTED)))
    assert isinstance(need, RunTests)
    head, base = runs_showing("tests/test_refund.py", Evidence.INTRODUCED)
    ran = Verification.of("tests/test_refund.py", COMMAND, head, base)
    assert ran.verdict is Evidence.BROKEN  # the base could not collect it

    need = steps.send((ran,))
    need = steps.send(
        answered(answers({"finding_id": "F1", "stance": "dispute", "argument": "No."}))
    )

    assert isinstance(need, AskModel)
    assert need.request.role is Role.CODER
    assert need.request.subject == ("F1",)
    assert "the base does not have the code it tests: it is proven" in (
        need.request.blocks[-1].text
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), attempts=st.integers(1, 3), data=st.data())
def test_driven_by_a_plain_loop_any_script_and_any_tests_keep_the_bounds(
    policy: DebatePolicy, attempts: int, data: st.DataObject
) -> None:
    llm = ScriptedLLM(ChaosWithTests(data))
    verifier = ChaosVerifier(data)
    machine = DebateMachine(policy, payments_unit(), terms=ProofTerms(COMMAND, attempts))

    def shows(run: Any) -> Verification | FixCheck:
        if run.checks_fix:
            return asyncio.run(verifier.check_fix(run.reproduction, run.patches))
        return asyncio.run(verifier.reproduce(run.reproduction))

    outcome = play(machine.run(), llm, ceiling=TokenCeiling(policy.token_ceiling), shows=shows)

    assert len(llm.requests) == outcome.calls <= policy.max_calls(attempts - 1)
    assert outcome.usage.billed <= policy.token_ceiling
    holds_to_its_tests(outcome)


class Later:
    """Tests run elsewhere, each started and waited for; what they show comes later."""

    def __init__(self) -> None:
        self.started: list[Any] = []

    @property
    def command(self) -> str:
        return COMMAND

    async def start(self, run: Any, digest: str) -> None:
        self.started.append((digest, run))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), data=st.data())
def test_a_debate_that_waits_for_its_tests_comes_to_the_same_end_asking_nothing_twice(
    policy: DebatePolicy, data: st.DataObject
) -> None:
    """Waiting for tests run elsewhere, and taken up again each time their results are in, a
    debate comes to the outcome it reaches when its tests answer at once, and no model is
    asked anything twice."""
    script = data.draw(st.lists(st.integers(0, 10**6), min_size=200, max_size=200))
    shown = data.draw(st.lists(st.integers(0, 3), min_size=64, max_size=64))

    def chaos(request: LLMRequest) -> dict[str, Any]:
        return Replayable(script, request).tool_input()

    def verdict(n: int) -> Evidence:
        shown = [Evidence.REPRODUCED, Evidence.NOT_REPRODUCED, Evidence.FAILS_AT_BASE]
        return [*shown, Evidence.INTRODUCED][n % 4]

    oracle = Oracle(verdict, shown)
    direct_llm = ScriptedLLM(chaos)
    direct = asyncio.run(
        Debate(direct_llm, policy, proving=Proving(oracle, 2)).run(payments_unit())
    )

    llm, journal, record = ScriptedLLM(chaos), MemoryJournal(), MemoryRecordedRuns()
    waits = 0
    while True:
        later = Later()
        outcome = asyncio.run(
            Debate(llm, policy).advance(
                payments_unit(), journal=journal, elsewhere=later, record=record, max_attempts=2
            )
        )
        if not isinstance(outcome, Waiting):
            break
        waits += 1
        assert sorted(d for d, _ in later.started) == sorted(outcome.runs)
        for digest, run in later.started:
            result = asyncio.run(oracle.run(run))
            asyncio.run(record.record(digest, RecordedRun.of(result)))

    assert outcome.model_dump(mode="json") == direct.model_dump(mode="json")
    assert llm.requests == direct_llm.requests  # each asked once, in the same order
    assert waits <= outcome.calls + 1


class Replayable:
    """A deterministic chaotic answer: drawn from a fixed list by the request's content, so
    the same request is answered the same way however often it is asked."""

    def __init__(self, script: list[int], request: LLMRequest) -> None:
        self.request = request
        seed = sum(ord(c) for b in request.blocks for c in b.text[-200:]) + request.round
        self.numbers = script[seed % 100 :]

    def pick(self, options: list[Any], i: int) -> Any:
        return options[self.numbers[i] % len(options)]

    def tool_input(self) -> dict[str, Any]:
        request = self.request
        if request.role is Role.TESTER and request.tool.name == "report_findings":
            return report(TESTED) if self.pick([True, False], 0) else report()
        if request.role is Role.CODER:
            ids = request.subject
            return answers(
                *[
                    self.pick(
                        [
                            concede(i, LOG_FIX),
                            {"finding_id": i, "stance": "dispute", "argument": "No."},
                        ],
                        n + 1,
                    )
                    for n, i in enumerate(ids)
                ]
            )
        if request.role is Role.ARBITER:
            return {"rulings": []}
        return evaluations(*[self.pick([accept(i)], 0) for i in request.subject])


class Oracle:
    """What each test shows, the same every time it is asked: by the order it was first
    asked in."""

    def __init__(self, verdict: Any, shown: list[int]) -> None:
        self.verdict = verdict
        self.shown = shown
        self.order: dict[str, int] = {}

    @property
    def command(self) -> str:
        return COMMAND

    def _n(self, key: str) -> int:
        return self.shown[self.order.setdefault(key, len(self.order)) % len(self.shown)]

    async def run(self, run: Any) -> Verification | FixCheck:
        if run.checks_fix:
            return await self.check_fix(run.reproduction, run.patches)
        return await self.reproduce(run.reproduction)

    async def reproduce(self, reproduction: Any) -> Verification:
        head, base = runs_showing(reproduction.path, self.verdict(self._n(reproduction.path)))
        return Verification.of(reproduction.path, COMMAND, head, base)

    async def check_fix(self, reproduction: Any, patches: Any) -> FixCheck:
        return FixCheck.of(reproduction.path, Run(exit_code=self._n(reproduction.path + "fix") % 2))

    async def run_own(self, test: str) -> OwnTestRun:
        return OwnTestRun.of(test, Run(exit_code=self._n(test + "own") % 2))
