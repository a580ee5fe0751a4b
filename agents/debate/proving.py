"""The steps of a debate that run its findings' tests (see `agents.debate.proofs` for the rules).

A finding that comes with a test has it run at the base and the head as soon as it is raised,
before the coder answers; a finding whose test passes at the head goes back to its tester,
who withdraws it or gives another test, until its tests are used up; a patch conceded on a
finding whose test fails at the head, or forced by the arbiter, is run against that test
before anyone weighs it. Each run is asked of the driver (:class:`agents.debate.needs.RunTests`),
every run of a step at once.
"""

import functools
from collections.abc import Sequence

from agents.debate import briefs
from agents.debate.findings import withdraw_untested
from agents.debate.needs import Steps
from agents.debate.proofs import told, told_fix
from agents.debate.state import DebateState
from agents.debate.threads import Thread
from agents.debate.turns import Ask
from agents.models.llm import Role
from agents.outcome import SYSTEM_SPEAKER, MessageKind
from agents.protocol import Decision, EvaluateAnswers, Patch, Stance, ToolName
from agents.verification import Evidence
from policies.errors import BudgetExhausted, OutOfTokens


class ProofSteps:
    """A debate's steps that run tests; nothing runs unless the debate has tests."""

    def __init__(self, state: DebateState) -> None:
        self.state = state

    def prove(self, threads: Sequence[Thread], *, retest: bool = True) -> Steps[None]:
        """Run the tests the open `threads` came with, and (with `retest`) the tests their
        testers give next for those whose test passed at the head."""
        proofs = self.state.proofs
        if not proofs.on:
            return
        yield from self._prove([t for t in threads if t.is_open and proofs.give(t.finding)], retest)

    def prove_given(self) -> Steps[None]:
        """Run the new tests testers gave, in answer to disputes of their findings' tests
        (`agents.debate.relevance`), as a finding's first test is run."""
        state = self.state
        given = state.proofs.relevance.take_given()
        testing = [state.threads[f] for f in given if state.threads[f].is_open]
        for thread in testing:
            state.proofs.retest(thread.id, given[thread.id])
        yield from self._prove(testing, retest=True)

    def _prove(self, testing: list[Thread], retest: bool) -> Steps[None]:
        while testing:
            passing = yield from self._run_tests(testing)
            try:
                testing = (yield from self._retest(passing)) if passing and retest else []
            except OutOfTokens:
                # Running a test costs no tokens: the tests given before the ceiling was
                # reached are run, and a finding whose test passes again goes.
                given = [t for t in passing if t.is_open]
                for thread in (yield from self._run_tests(given)):
                    withdraw_untested(self.state, thread)
                raise

    def check_fixes(self, fixes: Sequence[tuple[Thread, Patch]]) -> Steps[None]:
        """Run the test of each finding that has one failing at the head, with its patch."""
        proofs = self.state.proofs
        checkable = [(t, patch) for t, patch in fixes if proofs.testable(t.id)]
        if not checkable:
            return
        checks = yield from proofs.check([(t.id, patch) for t, patch in checkable])
        for (thread, _), checked in zip(checkable, checks, strict=True):
            self.state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, told_fix(checked))

    def check_concessions(self, threads: Sequence[Thread]) -> Steps[None]:
        """Run the tests of `threads` conceded this round with the coder's patches."""
        yield from self.check_fixes(
            [
                (t, t.answer.patch)
                for t in threads
                if t.answer is not None
                and t.answer.stance is Stance.CONCEDE
                and t.answer.patch is not None
                and t.answered_in == self.state.round
            ]
        )

    def _run_tests(self, testing: Sequence[Thread]) -> Steps[list[Thread]]:
        """Run the latest test of each of `testing`, telling each thread what it showed;
        returns those whose test passed at the head."""
        if not testing:
            return []
        results = yield from self.state.proofs.verify([t.id for t in testing])
        for thread, result in zip(testing, results, strict=True):
            self.state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, told(result))
        return [
            t for t, r in zip(testing, results, strict=True) if r.verdict is Evidence.NOT_REPRODUCED
        ]

    def _retest(self, threads: Sequence[Thread]) -> Steps[list[Thread]]:
        """Ask the testers of `threads`, whose tests passed at the head, to withdraw each or
        give it another test; returns those given one. A finding whose tests are used up, or
        whose tester cannot be asked, is withdrawn — past the ceiling too."""
        state = self.state
        given: list[str] = []
        try:
            for tester in dict.fromkeys(t.raised_by for t in threads):
                mine = [t for t in threads if t.raised_by == tester]
                asked = [t for t in mine if state.proofs.may_retest(t.id)]
                if tester in state.present and not state.edge(tester).exhausted and asked:
                    yield from self._ask_for_tests(tester, asked, given)
        finally:
            for thread in threads:
                if thread.id not in given and thread.is_open:
                    withdraw_untested(state, thread)
        return [t for t in threads if t.id in given]

    def _ask_for_tests(self, tester: str, asked: Sequence[Thread], given: list[str]) -> Steps[None]:
        state = self.state
        state.proofs.retesting.update(t.id for t in asked)
        try:
            yield from state.turns.run(
                Ask(
                    Role.TESTER,
                    ToolName.EVALUATE_ANSWERS,
                    [
                        *state.briefs,
                        briefs.retest_brief(asked, tests=state.proofs.about),
                    ],
                    edges=[state.edge(tester)],
                    round=state.round,
                    subject=tuple(t.id for t in asked),
                    agent=tester,
                    focus=state.panel.focus(tester),
                ),
                state.checks.evaluations,
                functools.partial(self._retested, tester, given),
            )
        except BudgetExhausted:
            pass  # what it did not give a test is withdrawn
        finally:
            state.proofs.retesting.difference_update(t.id for t in asked)

    def _retested(self, tester: str, given: list[str], result: EvaluateAnswers) -> None:
        """Take a tester's word on its findings whose tests passed at the head."""
        state = self.state
        for evaluation in result.evaluations:
            thread = state.threads[evaluation.finding_id]
            if evaluation.decision is Decision.ACCEPT:
                state.say(thread, tester, MessageKind.ACCEPT, evaluation.reason)
                withdraw_untested(state, thread, "its tester withdrew it")
            elif evaluation.reproduction is not None:
                state.say(thread, tester, MessageKind.REJECT, evaluation.reason)
                state.proofs.retest(thread.id, evaluation.reproduction)
                given.append(thread.id)
