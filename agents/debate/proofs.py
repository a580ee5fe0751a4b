"""What the tests of one debate's findings showed, and the rules that follow from it.

With verification on (a :class:`Proving`), each finding that carries a reproduction has its
test run at the base and the head before the coder answers (:mod:`agents.verification`), and
each patch conceded on a finding whose test fails at the head is checked by running the test
again with the patch. The debate then obeys what ran, whatever the models say:

* a `reproduced` finding is proof, and so is an `introduced` one (its test fails at the head,
  and at the base only because the code it tests is not there: the debate judges the runs
  knowing what its unit's diff adds): a dispute of it is refused — the coder answers it with
  a patch — and so is the arbiter's warning: it can only be ruled fixed;
* a patch whose test still fails is not a fix: the tester's acceptance of it is refused, and
  the finding's outcome says so (`fix_verified` false), fixed or not;
* a finding whose test passes at the head is withdrawn, unless its tester gives another test
  (up to `max_attempts` tests a finding);
* a finding raised after the first report (an evaluation's new finding) must carry a test:
  later rounds are where debates add false alarms.

Whether a proven finding's test exercises its claim at all is the one question about it the
debate still hears (:mod:`agents.debate.relevance`): a test set aside as not testing its claim
binds nothing, its runs kept on the record as what they were.

A run that says the project's environment cannot run tests (`environment`: "No module named
pytest", a runner not found) shows nothing of the code: no rule above follows from it, and
the finding is debated as if its test had not run.

Each run is told in the finding's thread, so the transcript shows it.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from agents.debate.needs import Steps, check_fixes, reproduce
from agents.debate.relevance import Relevance, settled
from agents.debate.told import FindingRun, PatchRun, Runs, Tests
from agents.failures.additions import Additions
from agents.models.tokens import typical_tokens
from agents.outcome import FindingOutcome
from agents.protocol import (
    Answer,
    Decision,
    Evaluation,
    Finding,
    Patch,
    Reproduction,
    Ruling,
    RulingKind,
    Stance,
)
from agents.verification import Evidence, FixCheck, Verification, Verifier
from policies.verify import VerifyConfig

MAX_TAIL_SHOWN = 2_000
"""Characters of a run's output an agent is shown."""
PROVEN = {
    Evidence.REPRODUCED: "its test fails at the head and passes at the base",
    Evidence.INTRODUCED: "its test fails at the head, and the base does not have the code it tests",
}
"""Why a proven finding is proven, as a refusal says it."""
CONCEDED = "conceded with a patch that makes the test pass"


@dataclass(frozen=True)
class ProofTerms:
    """What a debate knows of its findings' tests: the command they run with (as the tester
    is told it) and how many tests one finding may have. Who runs them is its driver's."""

    command: str
    max_attempts: int = VerifyConfig().max_attempts


@dataclass(frozen=True)
class Proving:
    """Verification for a review: who runs the tests, and how many one finding may have."""

    verifier: Verifier
    max_attempts: int = VerifyConfig().max_attempts

    @property
    def terms(self) -> ProofTerms:
        return ProofTerms(self.verifier.command, self.max_attempts)


@dataclass
class Proofs:
    """The tests of one debate's findings: what each showed, and what it allows."""

    terms: ProofTerms | None = None
    added: Additions = field(default_factory=Additions)
    """What the unit's diff adds: what a test's failure at the base may be for the want of."""
    tests: dict[str, Reproduction] = field(default_factory=dict)
    """Each finding's latest test, by finding id, once it is known."""
    results: dict[str, Verification] = field(default_factory=dict)
    """What each finding's latest test showed."""
    attempts: dict[str, int] = field(default_factory=dict)
    fixes: dict[str, tuple[Patch, FixCheck]] = field(default_factory=dict)
    """The latest patch checked on each finding, and what its test did with it."""
    restored_fixes: dict[str, tuple[Patch | None, bool | None]] = field(default_factory=dict)
    """What a finished debate's outcome said of each finding's fix, for a debate picked up."""
    retesting: set[str] = field(default_factory=set)
    """Findings whose test passed at the head, waiting for the tester's next test or its
    withdrawal."""
    seconds: float = 0.0
    test_tokens: int = 0
    """About how many of the testers' output tokens went into writing tests."""
    relevance: Relevance = field(default_factory=Relevance)
    """The proven findings whose test the coder disputes as not testing its claim."""

    @property
    def on(self) -> bool:
        return self.terms is not None

    def proven(self, finding_id: str) -> bool:
        result = self.shown(finding_id)
        return result is not None and result.verdict.proof

    def shown(self, finding_id: str) -> Verification | None:
        """What the finding's latest test showed of the code, if it ran in an environment
        that can run tests (a run that says it cannot shows nothing, and binds nothing) and
        was not set aside as not testing its claim."""
        result = self.results.get(finding_id)
        if result is None or result.environment is not None or result.relevant is False:
            return None
        return result

    def testable(self, finding_id: str) -> bool:
        """Whether a patch on the finding can be checked: tests run here, and its test ran and
        fails at the head. A finished debate picked up where no test runs (the arbiter a
        person asks for) keeps its tests' results, but checks no patch against them."""
        result = self.shown(finding_id)
        if not self.on or result is None:
            return False
        return result.verdict in (Evidence.REPRODUCED, Evidence.INTRODUCED, Evidence.FAILS_AT_BASE)

    @property
    def about_tests(self) -> Tests | None:
        """What agents are told of the findings' tests, when tests are run."""
        return self.about if self.on else None

    def fix_verified(self, finding_id: str, patch: Patch | None) -> bool | None:
        """Whether `patch`, the finding's fix, made its test pass (None: not checked). A
        finding that ended without a fix (`patch` None) whose latest patch checked left its
        test failing says so: False."""
        checked = self.fixes.get(finding_id)
        earlier_patch, earlier = self.restored_fixes.get(finding_id, (None, None))
        if patch is None:
            latest = checked[1].verified if checked is not None else earlier
            return False if latest is False else None
        if checked is not None and checked[0] == patch:
            return checked[1].verified
        return earlier if patch == earlier_patch else None

    def restore(self, ended: FindingOutcome) -> None:
        """Take what a finished debate's outcome says of a finding's tests."""
        finding_id = ended.finding.id
        if ended.verification is not None:
            self.results[finding_id] = ended.verification
            if ended.finding.reproduction is not None:
                self.tests.setdefault(finding_id, ended.finding.reproduction)
        self.restored_fixes[finding_id] = (ended.patch, ended.fix_verified)

    # -- running ------------------------------------------------------------------------

    def give(self, finding: Finding) -> bool:
        """Take `finding`'s test, if it has one; True when there is a test to run."""
        if not self.on or finding.reproduction is None:
            return False
        self.tests[finding.id] = finding.reproduction
        self.attempts[finding.id] = self.attempts.get(finding.id, 0) + 1
        self.test_tokens += typical_tokens(finding.reproduction.content)
        return True

    def retest(self, finding_id: str, reproduction: Reproduction) -> None:
        """Take a finding's next test, given after its last one passed at the head."""
        self.retesting.discard(finding_id)
        self.tests[finding_id] = reproduction
        self.attempts[finding_id] = self.attempts.get(finding_id, 0) + 1
        self.test_tokens += typical_tokens(reproduction.content)

    def settle(self, finding_id: str, relevant: bool, why: str) -> None:
        """Settle whether the finding's test exercises its claim, for `why`."""
        self.relevance.disputed.pop(finding_id, None)
        if (result := self.results.get(finding_id)) is not None:
            self.results[finding_id] = settled(result, relevant, why)

    def may_retest(self, finding_id: str) -> bool:
        assert self.terms is not None
        return self.attempts.get(finding_id, 0) < self.terms.max_attempts

    def verify(self, finding_ids: Sequence[str]) -> Steps[list[Verification]]:
        """Run the latest test of each finding at the base and the head, all at once."""
        ran = yield from reproduce([self.tests[f] for f in finding_ids])
        # Judged here, knowing what the diff adds, whoever ran them and wherever.
        results = [result.judged(self.added) for result in ran]
        for finding_id, result in zip(finding_ids, results, strict=True):
            self.results[finding_id] = result
            self.seconds += result.seconds
        return results

    def check(self, fixes: Sequence[tuple[str, Patch]]) -> Steps[list[FixCheck]]:
        """Run each finding's test on the head with its patch, all at once."""
        checks = yield from check_fixes([(self.tests[f], patch) for f, patch in fixes])
        for (finding_id, patch), checked in zip(fixes, checks, strict=True):
            self.fixes[finding_id] = (patch, checked)
            self.seconds += checked.seconds
        return checks

    # -- the rules ----------------------------------------------------------------------

    def answer_problem(self, answer: Answer) -> str | None:
        if answer.stance is Stance.DISPUTE and (why := self._proven_by(answer.finding_id)):
            return (
                f"{why}: it is proven, and can only be {CONCEDED}, unless the pull request "
                "shows the change intended (intended, citing its evidence) or its test does not "
                "exercise the claim (irrelevant_test)"
            )
        return self.relevance.answer_problem(answer, self.proven(answer.finding_id))

    def evaluation_problem(self, evaluation: Evaluation) -> str | None:
        finding_id = evaluation.finding_id
        if finding_id in self.retesting:
            if evaluation.decision is Decision.REJECT and evaluation.reproduction is None:
                return "its test passed at the head: keep it with a new reproduction, or accept"
            return None
        if evaluation.reproduction is not None:
            may_retest = self.on and self.may_retest(finding_id)
            return self.relevance.evaluation_problem(evaluation, may_retest)
        checked = self.fixes.get(finding_id)
        binds = self.shown(finding_id) is not None
        if evaluation.decision is Decision.ACCEPT and checked and binds and _fails(checked[1]):
            return "the patch does not make its test pass: it is not a fix"
        return None

    def ruling_problem(self, ruling: Ruling) -> str | None:
        if problem := self.relevance.ruling_problem(ruling):
            return problem
        why = self._proven_by(ruling.finding_id)
        if ruling.ruling is RulingKind.ACCEPT_WITH_WARNING and why:
            also = ""
            if ruling.finding_id in self.relevance.disputed:
                also = ", test_relevant or test_irrelevant"
            return f"{why}: it is proven, and can only be ruled force_fix{also}"
        return None

    def _proven_by(self, finding_id: str) -> str | None:
        """Why the finding is proven, if it is."""
        result = self.shown(finding_id)
        return PROVEN.get(result.verdict) if result is not None else None

    def new_finding_problem(self, finding: Finding) -> str | None:
        if self.on and finding.reproduction is None:
            return "a finding raised after the first report must carry a reproduction"
        return None

    # -- what agents are shown ----------------------------------------------------------

    def about(self, finding_id: str) -> Runs:
        """What an agent is told of the finding's test and of the patch checked on it."""
        result = self.results.get(finding_id)
        test_run = None
        if result is not None:
            test_run = FindingRun(
                verdict=result.verdict,
                what_it_shows=result.reason,
                output_at_head=result.output_tail[-MAX_TAIL_SHOWN:],
            )
        patch_test_run = None
        if finding_id in self.fixes:
            _, checked = self.fixes[finding_id]
            patch_test_run = PatchRun(
                verified=checked.verified,
                what_it_shows=checked.reason,
                output=checked.output_tail[-MAX_TAIL_SHOWN:],
            )
        return Runs(test_run=test_run, patch_test_run=patch_test_run)


def _fails(checked: FixCheck) -> bool:
    """Whether a patch's test still fails with it, in an environment that can run tests."""
    return checked.verified is False and checked.environment is None


def told(verification: Verification) -> str:
    """A test run, as the finding's thread tells it."""
    return f"Test {verification.test}: {verification.verdict} ({verification.reason})."


def told_fix(checked: FixCheck) -> str:
    verdict = {True: "fix verified", False: "fix fails", None: "fix not checked"}[checked.verified]
    return f"Patch checked against the finding's test: {verdict} ({checked.reason})."
