"""Whether a proven finding's test exercises its claim, and who settles it.

A test can fail at the head and pass at the base and still show nothing of what its finding
claims: it reads the source's text and checks for `'> 10'`, it mocks the code it claims to
test, it asserts a constant. Its runs are facts about the test, not about the claim. So the
one dispute of a proven finding the debate hears is of its test's relevance: the coder
answers `irrelevant_test`, saying how the test fails to exercise the claim (any other
dispute of a proven finding is still refused, `agents.debate.proofs`). The tester answers it:
it keeps the test (reject), gives another test that does exercise the claim (reject with a
`reproduction`, run as soon as it is given), or agrees and withdraws the finding (accept).
On deadlock the arbiter rules on relevance: `test_relevant` — the proof binds, the fix is
forced — or `test_irrelevant` — the test is set aside: its runs are no longer proof, and the
finding is ruled as an opinion, a fix forced or the code left standing with a warning.

A test set aside keeps its runs on the record, marked (`Verification.relevant` false, with
why), so that what is posted says the test was ruled not to test its claim, and why, rather
than that it proves the finding. Nothing else sets a proof aside: whatever the models say of
the facts, a relevant test's runs bind.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from agents.outcome import Message, MessageKind
from agents.protocol import Answer, Decision, Evaluation, Reproduction, Ruling, RulingKind, Stance
from agents.verification import Verification

DISPUTED = "Its test does not exercise the claim"
"""How the coder's `irrelevant_test` answer opens on the finding's thread."""
RULED_OUT = "Test ruled not to test its claim"
"""How the finding's thread says its test was set aside."""
RELEVANCE_RULINGS = (RulingKind.TEST_RELEVANT, RulingKind.TEST_IRRELEVANT)

TO_CODER = (
    " If a proven finding's test does not exercise its claim (it reads the source's text, "
    "mocks the code it claims to test, or asserts a constant), answer irrelevant_test instead, "
    "saying how; no other dispute of a proven finding is heard."
)
TO_TESTER = (
    " An answer irrelevant_test says the finding's test does not exercise its claim: reject "
    "to keep the test, reject with a new `reproduction` whose test does, or accept to "
    "withdraw the finding."
)
TO_ARBITER = (
    " Where the coder answered irrelevant_test, rule on the test's relevance instead: "
    "test_relevant (it exercises the claim: give the patch the coder must adopt) or "
    "test_irrelevant (say in reasoning why it does not; then rule the finding on its merits "
    "with a patch or a warning, as force_fix or accept_with_warning would)."
)


@dataclass
class Relevance:
    """The proven findings whose test the coder disputes as not testing its claim, and the
    new tests given in answer, waiting to run."""

    disputed: dict[str, str] = field(default_factory=dict)
    """The coder's argument, by finding id, while its latest answer disputes the test."""
    given: dict[str, Reproduction] = field(default_factory=dict)
    """New tests given in answer to a dispute, by finding id, not yet run."""

    def answered(self, answer: Answer) -> None:
        """Take the coder's latest answer on a finding."""
        if answer.stance is Stance.IRRELEVANT_TEST:
            self.disputed[answer.finding_id] = answer.argument
        else:
            self.disputed.pop(answer.finding_id, None)

    def give(self, finding_id: str, reproduction: Reproduction) -> None:
        """Take a new test the tester gave in answer to the dispute, to run after its turn."""
        self.given[finding_id] = reproduction

    def restore(self, finding_id: str, coder_said: Sequence[Message]) -> None:
        """Take a finished debate's open dispute of the finding's test back from what the
        coder said last on its thread, for a ruling asked for later."""
        last = coder_said[-1] if coder_said else None
        opening = f"{DISPUTED}: "
        if last is not None and last.kind is MessageKind.DISPUTE and last.text.startswith(opening):
            self.disputed[finding_id] = last.text.removeprefix(opening)

    def take_given(self) -> dict[str, Reproduction]:
        """The new tests given, each now to run: the dispute was of the test it replaces."""
        given, self.given = self.given, {}
        for finding_id in given:
            self.disputed.pop(finding_id, None)
        return given

    # -- the rules ----------------------------------------------------------------------

    @staticmethod
    def answer_problem(answer: Answer, proven: bool) -> str | None:
        if answer.stance is Stance.IRRELEVANT_TEST and not proven:
            return "only a proven finding's test is disputed as irrelevant: dispute or concede it"
        return None

    def evaluation_problem(self, evaluation: Evaluation, may_retest: bool) -> str | None:
        """Whether a tester's evaluation may carry a new test (None) or not (why)."""
        if evaluation.finding_id not in self.disputed:
            return (
                "a new reproduction is only for a finding whose test passed at the head, or "
                "whose test the coder answered irrelevant_test"
            )
        if evaluation.decision is Decision.ACCEPT:
            return "accepting withdraws the finding: give a new reproduction only to keep it"
        if not may_retest:
            return "its tests are used up: keep it, or accept"
        return None

    def ruling_problem(self, ruling: Ruling) -> str | None:
        if ruling.ruling in RELEVANCE_RULINGS and ruling.finding_id not in self.disputed:
            return f"{ruling.ruling} is only for a test the coder answered irrelevant_test"
        return None


def forces_fix(ruling: Ruling) -> bool:
    """Whether the ruling closes its finding fixed with its patch (else with its warning)."""
    return ruling.ruling in (RulingKind.FORCE_FIX, RulingKind.TEST_RELEVANT) or (
        ruling.ruling is RulingKind.TEST_IRRELEVANT and ruling.patch is not None
    )


def said(answer: Answer) -> str:
    """The coder's answer as its thread tells it."""
    if answer.stance is Stance.IRRELEVANT_TEST:
        return f"{DISPUTED}: {answer.argument}"
    return answer.argument


def settled(verification: Verification, relevant: bool, why: str) -> Verification:
    """The test's runs, its relevance settled for `why`."""
    return verification.model_copy(update={"relevant": relevant, "relevance": why or None})


def told_set_aside(why: str) -> str:
    return f"{RULED_OUT}: {why.rstrip('. ')}. Its runs prove nothing of the claim."
