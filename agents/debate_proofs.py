"""The steps of a debate that run its findings' tests (see `agents.proofs` for the rules).

A finding that comes with a test has it run at the base and the head as soon as it is raised,
before the coder answers; a finding whose test passes at the head goes back to its tester,
who withdraws it or gives another test, until its tests are used up; a patch conceded on a
finding whose test fails at the head is run against that test before the tester evaluates it.
"""

import functools
from collections.abc import Sequence

from agents import briefs
from agents.debate_state import DebateState
from agents.llm import Role
from agents.outcome import SYSTEM_SPEAKER, Consensus, MessageKind, Resolution
from agents.proofs import told
from agents.protocol import Decision, EvaluateAnswers, Stance, ToolName
from agents.threads import Closure, Thread
from agents.turns import Ask
from agents.verification import Evidence
from policies.errors import BudgetExhausted, OutOfTokens


class ProvingSteps(DebateState):
    """A debate's steps that run tests; nothing runs unless a `proving` was given."""

    async def _prove(self, threads: Sequence[Thread], *, retest: bool = True) -> None:
        """Run the tests the open `threads` came with, and (with `retest`) the tests their
        testers give next for those whose test passed at the head."""
        if not self.proofs.on:
            return
        testing = [t for t in threads if t.is_open and self.proofs.give(t.finding)]
        while testing:
            passing = await self._run_tests(testing)
            try:
                testing = await self._retest(passing) if passing and retest else []
            except OutOfTokens:
                # Running a test costs no tokens: the tests given before the ceiling was
                # reached are run, and a finding whose test passes again goes.
                given = [t for t in passing if t.is_open]
                for thread in await self._run_tests(given):
                    self._withdraw_untested(thread)
                raise

    async def _run_tests(self, testing: Sequence[Thread]) -> list[Thread]:
        """Run the latest test of each of `testing`, telling each thread what it showed;
        returns those whose test passed at the head."""
        if not testing:
            return []
        results = await self.proofs.verify([t.id for t in testing])
        for thread, result in zip(testing, results, strict=True):
            self._say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, told(result))
        return [
            t for t, r in zip(testing, results, strict=True) if r.verdict is Evidence.NOT_REPRODUCED
        ]

    async def _retest(self, threads: Sequence[Thread]) -> list[Thread]:
        """Ask the testers of `threads`, whose tests passed at the head, to withdraw each or
        give it another test; returns those given one. A finding whose tests are used up, or
        whose tester cannot be asked, is withdrawn — past the ceiling too."""
        given: list[str] = []
        try:
            for tester in dict.fromkeys(t.raised_by for t in threads):
                mine = [t for t in threads if t.raised_by == tester]
                asked = [t for t in mine if self.proofs.may_retest(t.id)]
                if tester in self.present and not self._edge(tester).exhausted and asked:
                    await self._ask_for_tests(tester, asked, given)
        finally:
            for thread in threads:
                if thread.id not in given and thread.is_open:
                    self._withdraw_untested(thread)
        return [t for t in threads if t.id in given]

    async def _ask_for_tests(self, tester: str, asked: Sequence[Thread], given: list[str]) -> None:
        self.proofs.retesting.update(t.id for t in asked)
        try:
            await self.turns.run(
                Ask(
                    Role.TESTER,
                    ToolName.EVALUATE_ANSWERS,
                    [
                        *briefs.unit_briefs(self.unit),
                        briefs.retest_brief(asked, tests=self.proofs.about),
                    ],
                    edges=[self._edge(tester)],
                    round=self.round,
                    subject=tuple(t.id for t in asked),
                    agent=tester,
                    focus=self.panel.focus(tester),
                ),
                self.checks.evaluations,
                functools.partial(self._retested, tester, given),
            )
        except BudgetExhausted:
            pass  # what it did not give a test is withdrawn
        finally:
            self.proofs.retesting.difference_update(t.id for t in asked)

    def _retested(self, tester: str, given: list[str], result: EvaluateAnswers) -> None:
        """Take a tester's word on its findings whose tests passed at the head."""
        for evaluation in result.evaluations:
            thread = self.threads[evaluation.finding_id]
            if evaluation.decision is Decision.ACCEPT:
                self._say(thread, tester, MessageKind.ACCEPT, evaluation.reason)
                self._withdraw_untested(thread, "its tester withdrew it")
            elif evaluation.reproduction is not None:
                self._say(thread, tester, MessageKind.REJECT, evaluation.reason)
                self.proofs.retest(thread.id, evaluation.reproduction)
                given.append(thread.id)

    def _withdraw_untested(self, thread: Thread, why: str = "") -> None:
        note = "its test passes at the head" + (f": {why}" if why else "")
        self._say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, f"Withdrawn: {note}.")
        thread.close(Closure(Consensus.UNANIMOUS, Resolution.WITHDRAWN, self.round, note=note))
        self.round_progress = True

    async def _check_concessions(self, threads: Sequence[Thread]) -> None:
        """Run the tests of `threads` conceded this round with the coder's patches."""
        await self._check_fixes(
            [
                (t, t.answer.patch)
                for t in threads
                if t.answer is not None
                and t.answer.stance is Stance.CONCEDE
                and t.answer.patch is not None
                and t.answered_in == self.round
            ]
        )
