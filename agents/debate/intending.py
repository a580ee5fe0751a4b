"""The step of a debate that checks the coder's evidence that a behaviour change is intended
(see `agents.debate.intent_rules` for the rules).

After each coder's turn, the pull request's own tests that its `intended` answers cite are
run at the head, every one of them at once, each once a debate (:class:`agents.debate.needs.
OwnTest`); what was checked of each answer's evidence is told in its finding's thread, so
the tester, the arbiter and the transcript read it.
"""

from collections.abc import Sequence

from agents.debate.needs import Steps, run_own
from agents.debate.state import DebateState
from agents.debate.threads import Thread
from agents.outcome import SYSTEM_SPEAKER, MessageKind
from agents.protocol import Answer, Stance


class IntentSteps:
    """A debate's step that checks the evidence of intent the coder cites."""

    def __init__(self, state: DebateState) -> None:
        self.state = state

    def check(self, threads: Sequence[Thread]) -> Steps[None]:
        """Run the tests the `intended` answers of `threads` given this round cite, and tell
        each thread what was checked of its evidence."""
        state, intents = self.state, self.state.intents
        answered = [(t, a) for t in threads if (a := self._intended_now(t)) is not None]
        if not answered:
            return
        tests = list(dict.fromkeys(test for _, a in answered for test in intents.unrun(a)))
        if tests:
            for ran in (yield from run_own(tests)):
                intents.runs[ran.test] = ran
        for thread, answer in answered:
            # The runs go on the record with the notice: a ruling asked for later weighs them.
            cited = intents.ran(answer)
            state.say(thread, SYSTEM_SPEAKER, MessageKind.NOTICE, intents.told(answer), tests=cited)

    def _intended_now(self, thread: Thread) -> Answer | None:
        answer = thread.answer
        if answer is None or answer.stance is not Stance.INTENDED:
            return None
        return answer if thread.answered_in == self.state.round else None
