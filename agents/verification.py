"""What running a finding's test proves, and the one-method boundary that runs it.

A finding may carry a :class:`agents.protocol.Reproduction`: a test the tester wrote. Tiebreak
runs it at the pull request's base and at its head (:class:`Verifier`, implemented outside the
engine, in a sandbox or in the repository's Actions), and how the two runs ended — their exit
codes, and their failures as their output tells them (:mod:`agents.failures`) — decides the
finding's :class:`Evidence`:

* `reproduced` — it fails at the head and passes at the base: the change brought the bug in.
  Proof: the coder can answer it only with a patch, the arbiter can rule it only fixed.
* `introduced` — it fails at the head, and at the base only because the code it tests is not
  there: a module or name the change adds (:mod:`agents.failures.additions`). The bug is in
  new code: proof, binding as `reproduced` is.
* `fails_at_base` — it fails at the base too, the same way or another: a bug older than the
  change, or a wrong test.
* `not_reproduced` — it passes at the head: the finding is withdrawn, unless the tester gives
  another test.
* `broken` — it did not run as a test: at the head a timeout, a path it may not be written at,
  an error collecting or loading it, or a runner that ran nothing (pytest's exit codes 2 to 5,
  no tests ran, the test skipped, the runner itself not installed where it runs — the
  environment's fault, not the code's); or it failed at the head but did not run at the base,
  or was skipped there. No evidence.
  So is a run in an environment that cannot run tests at all (`environment`: the pre-flight's
  trivial test failed), which proves nothing of the code and binds nothing.
* `not_run` — verification is off, or the review's runs are spent: no evidence.

What the change adds is the debate's to know (the unit's diff): a verifier's runs are judged
without it (:meth:`Verification.of`), and the debate judges them again with it
(:meth:`Verification.judged`), so that the verdict is the same wherever the test ran.

A run's exit code alone never makes a pass: most runners exit 0 having skipped every test
(`1 skipped`, `OK (skipped=1)`), so what it printed is read first, and a run that shows no
test ran is no run of the test, at either side (:func:`_not_a_test`).

The same test run again on the head with the coder's patch applied checks the patch: it
passes (the fix is verified) or still does not (it is no fix); a run that did not happen, or
ran no test, checks nothing.

What a run printed is kept without its terminal escape sequences (a test's colours): it is
read by agents and kept in JSON and comments, never a terminal (:mod:`agents.failures.escapes`).

A proven finding's test run again at a later head of its pull request shows, by the head
alone, whether the bug is still there (:class:`Retest`): it still fails, it passes (fixed), or
it did not run there as a test, which shows nothing.

Pure: the runs themselves are the verifier's; what they mean is decided here.
"""

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, field_validator

from agents.failures.additions import Additions
from agents.failures.escapes import without_escapes
from agents.failures.failure import Absence, Missing, OutputReading
from agents.failures.reading import read_output
from agents.protocol import Patch, Reproduction

NOTHING_ADDED = Additions()
UNFIT = "the project's environment cannot run its tests"
FAILING_EXIT_CODES = (1,)
"""Exit codes that mean the test ran and failed (pytest's, unittest's and most runners'). Any
other non-zero code means it did not run: pytest exits 2 on a collection error, 4 on a usage
error, 5 when no test was collected."""


class Evidence(StrEnum):
    REPRODUCED = "reproduced"
    INTRODUCED = "introduced"
    FAILS_AT_BASE = "fails_at_base"
    NOT_REPRODUCED = "not_reproduced"
    BROKEN = "broken"
    NOT_RUN = "not_run"

    @property
    def proof(self) -> bool:
        """Whether the runs prove the change brought the bug in: into code the base had, or
        with code the base does not have."""
        return self in (Evidence.REPRODUCED, Evidence.INTRODUCED)


class Retest(StrEnum):
    """What a proven finding's test shows, run again at a later head of its pull request."""

    FAILS = "fails"
    """It still fails there: the bug it proved is still in the code."""
    PASSES = "passes"
    """It passes there: the bug it proved is fixed."""
    NOT_RUN = "not_run"
    """It did not run there as a test (the file it loads is gone, the environment broke, the
    run was refused or never finished): it shows nothing of the code."""


class Run(BaseModel):
    """One run of a test command in one tree: how it ended and the end of what it printed."""

    model_config = ConfigDict(frozen=True)

    exit_code: int | None = None
    """None when it did not run to an end of its own."""
    output_tail: str = ""
    """The last lines of its standard output and error, together, cut at a bound."""
    seconds: float = 0.0
    error: str | None = None
    """Why it did not run, or was stopped: a timeout, a refused path, a failed setup."""

    @field_validator("output_tail")
    @classmethod
    def _cleaned(cls, tail: str) -> str:
        """The tail without escape sequences, cleaned once, where every run is recorded."""
        return without_escapes(tail)

    @property
    def passed(self) -> bool:
        """Whether the command exited 0, of its own. Of a test's run, not yet that the test
        passed: a runner exits 0 having skipped it, which only its output tells
        (:func:`_not_a_test`)."""
        return self.error is None and self.exit_code == 0

    @property
    def failed(self) -> bool:
        """Whether the test ran and failed: an exit code a failing test gives."""
        return self.error is None and self.exit_code in FAILING_EXIT_CODES


class Verification(BaseModel):
    """A finding's test, run at the base and the head: what it proves, and how it ran."""

    model_config = ConfigDict(frozen=True)

    verdict: Evidence
    test: str
    """The test's path in the repository."""
    command: str = ""
    """The command that ran it, as it ran."""
    exit_code: int | None = None
    """At the head."""
    output_tail: str = ""
    """At the head: the end of what the test printed there."""
    error: str | None = None
    """At the head: why it did not run there, or was stopped."""
    seconds: float = 0.0
    """Both runs', as long as they took together (they run at once)."""
    reason: str = ""
    """In words, what the runs showed."""
    base_exit_code: int | None = None
    base_output_tail: str = ""
    """At the base: the end of what the test printed there."""
    base_error: str | None = None
    """At the base: why it did not run there, or was stopped."""
    environment: str | None = None
    """Why the project's environment cannot run tests, when that is what the runs showed: the
    verdict is then `broken`, and nothing in the debate follows from it."""
    relevant: bool | None = None
    """Whether the test exercises its finding's claim, when that was disputed and settled
    (`agents.debate.relevance`): False sets the runs aside, they prove nothing of the claim;
    None: never disputed."""
    relevance: str | None = None
    """Why it was settled so: the arbiter's reasoning, or the argument the testers accepted."""

    @classmethod
    def of(
        cls,
        test: str,
        command: str,
        head: Run,
        base: Run | None,
        added: Additions = NOTHING_ADDED,
    ) -> "Verification":
        """What the runs at the head and at the base (None: not run, as the head's test
        passed or did not run) show, the change adding `added`."""
        verdict, reason = _evidence(test, head, base, added)
        return cls(
            verdict=verdict,
            test=test,
            command=command,
            exit_code=head.exit_code,
            output_tail=head.output_tail,
            error=head.error,
            seconds=max(head.seconds, base.seconds if base else 0.0),
            reason=reason,
            base_exit_code=base.exit_code if base else None,
            base_output_tail=base.output_tail if base else "",
            base_error=base.error if base else None,
        )

    @classmethod
    def not_run(cls, test: str, reason: str) -> "Verification":
        return cls(verdict=Evidence.NOT_RUN, test=test, reason=reason)

    def judged(self, added: Additions) -> "Verification":
        """The same runs judged knowing what the change adds: `introduced` where the base
        failed only for the want of it, else as they were."""
        if (
            self.verdict not in (Evidence.FAILS_AT_BASE, Evidence.BROKEN)
            or self.error
            or self.environment
        ):
            return self
        head = Run(exit_code=self.exit_code, output_tail=self.output_tail)
        base = Run(
            exit_code=self.base_exit_code, output_tail=self.base_output_tail, error=self.base_error
        )
        again = Verification.of(self.test, self.command, head, base, added)
        if again.verdict is not Evidence.INTRODUCED:
            return self
        return self.model_copy(update={"verdict": again.verdict, "reason": again.reason})

    def retested(self) -> tuple["Retest", str]:
        """What this run, of a proven finding's test again at a later head, shows there: the
        head alone decides (the base is as it was when the test proved the finding), and a
        run that was no run of the test there shows nothing, and why."""
        if self.environment is not None or self.verdict is Evidence.NOT_RUN:
            return Retest.NOT_RUN, self.reason
        if self.error is not None:
            return Retest.NOT_RUN, f"at the head {self.error}"
        head = Run(exit_code=self.exit_code, output_tail=self.output_tail)
        if why := _not_a_test(head, read_output(head.output_tail, self.test)):
            return Retest.NOT_RUN, f"at the head {why}"
        if head.passed:
            return Retest.PASSES, "it passes at the head"
        return Retest.FAILS, "it still fails at the head"

    @classmethod
    def unfit(cls, test: str, environment: str) -> "Verification":
        """The test not run, the project's environment being unable to run any (why:
        `environment`)."""
        return cls(
            verdict=Evidence.BROKEN,
            test=test,
            reason=f"{UNFIT}: {environment}",
            environment=environment,
        )


def _evidence(test: str, head: Run, base: Run | None, added: Additions) -> tuple[Evidence, str]:
    if head.error is not None:
        return Evidence.BROKEN, f"at the head {head.error}"
    at_head = read_output(head.output_tail, test)
    if why := _not_a_test(head, at_head):
        return Evidence.BROKEN, f"at the head {why}"
    if head.passed:
        return Evidence.NOT_REPRODUCED, "it passes at the head"
    if base is None:
        return Evidence.BROKEN, "it fails at the head and was not run at the base"
    if base.error is not None:
        why = base.error
        return Evidence.BROKEN, f"it fails at the head, but at the base {why}: {NO_REGRESSION}"
    at_base = read_output(base.output_tail, test)
    if absent := _absent(at_head, at_base, added):
        return Evidence.INTRODUCED, f"the base has {absent}, which the change adds"
    if why := _not_a_test(base, at_base):
        return Evidence.BROKEN, f"it fails at the head, but at the base {why}: {NO_REGRESSION}"
    if base.passed:
        return Evidence.REPRODUCED, "it fails at the head and passes at the base"
    return _failing_at_both(head, base, at_head, at_base)


NO_REGRESSION = "no regression shown"


def _not_a_test(run: Run, reading: OutputReading) -> str | None:
    """Why `run`, which ran to an exit of its own, was no run of the test, `reading` what it
    printed: the runner ran nothing or skipped the test, whatever its exit code (0 among
    them: unittest before Python 3.12 passes running nothing, pytest passes a skipped test),
    or it did not pass and could not load the test file, or said so by its exit code. None:
    the test ran, and passed (`run.passed`) or failed."""
    if reading.problem is not None:
        return reading.problem
    if run.passed:
        return None
    if (loading := reading.loading) is not None:
        return f"the test could not be loaded ({loading})"
    if not run.failed:
        return f"it exited with {run.exit_code}, which says it did not run"
    return None


def _absent(at_head: OutputReading, at_base: OutputReading, added: Additions) -> Missing | None:
    """What the base lacks that the change adds, when the test failed there for nothing
    else: each of its failures says something is missing, the change adds each, and the head
    got past them."""
    absent = [f.missing for f in at_base.failures]
    if not absent or at_base.problem is not None:
        return None
    if any(missing is None or not added.provide(missing) for missing in absent):
        return None
    if any(f.missing in absent for f in at_head.failures):
        return None
    return absent[0]


def _failing_at_both(
    head: Run, base: Run, at_head: OutputReading, at_base: OutputReading
) -> tuple[Evidence, str]:
    if at_head.same_as(at_base):
        modules = [
            f.missing.name
            for f in at_head.failures
            if f.missing is not None and f.missing.absence is Absence.MODULE
        ]
        if len(modules) == len(at_head.failures):
            # Neither side can import it: the environment lacks it, whatever the code does.
            shown = ", ".join(dict.fromkeys(modules))
            return Evidence.BROKEN, f"it cannot import {shown} at the head or the base"
        failure = at_head.failures[0]
        return Evidence.FAILS_AT_BASE, f"the same failure at the base and the head: {failure}"
    if at_base.failures and at_head.failures:
        return Evidence.FAILS_AT_BASE, f"another failure at the base: {at_base.failures[0]}"
    codes = f"{head.exit_code} at the head, {base.exit_code} at the base"
    return Evidence.FAILS_AT_BASE, f"it exits with {codes}"


class FixCheck(BaseModel):
    """A finding's test run again on the head with a patch applied."""

    model_config = ConfigDict(frozen=True)

    verified: bool | None
    """True: the test passes with the patch; False: it ran and does not pass, or could not be
    loaded; None: it did not run (the runner ran no test, or skipped it)."""
    exit_code: int | None = None
    output_tail: str = ""
    seconds: float = 0.0
    reason: str = ""
    environment: str | None = None
    """Why the project's environment cannot run tests, when that is why the test did not run
    (`verified` is then None)."""

    @classmethod
    def unfit(cls, environment: str) -> "FixCheck":
        """The patch not checked, the project's environment being unable to run any test."""
        return cls(verified=None, reason=f"{UNFIT}: {environment}", environment=environment)

    @classmethod
    def of(cls, test: str, run: Run) -> "FixCheck":
        """What `run`, of the test at `test` (its path in the repository) on the head with
        the patch, shows of the patch."""
        # A patch that breaks the test's loading (a syntax error, a name it removed) is no
        # fix either; only a run that ran no test checks nothing.
        verified, why = _outcome(test, run)
        if why is not None:
            reason = f"with the patch {why}"
        elif verified:
            reason = "the test passes with the patch"
        else:
            reason = "the test still fails with the patch"
        return cls(
            verified=verified,
            exit_code=run.exit_code,
            output_tail=run.output_tail,
            seconds=run.seconds,
            reason=reason,
        )


class OwnTestRun(BaseModel):
    """A test of the pull request, run at the head as it is there."""

    model_config = ConfigDict(frozen=True)

    test: str
    """The test's path in the repository."""
    passed: bool | None
    """True: it passes at the head; False: it ran and does not, or could not be loaded; None:
    it did not run (the runner ran no test, or skipped it)."""
    exit_code: int | None = None
    output_tail: str = ""
    seconds: float = 0.0
    reason: str = ""
    environment: str | None = None
    """Why the project's environment cannot run tests, when that is why it did not run."""

    @classmethod
    def of(cls, test: str, run: Run) -> "OwnTestRun":
        passed, why = _outcome(test, run)
        if passed is None:
            reason = f"it did not run at the head: {why}"
        elif why is not None:
            reason = f"at the head {why}"
        else:
            reason = "it passes at the head" if passed else "it fails at the head"
        return cls(
            test=test,
            passed=passed,
            exit_code=run.exit_code,
            output_tail=run.output_tail,
            seconds=run.seconds,
            reason=reason,
        )

    @classmethod
    def not_run(cls, test: str, reason: str) -> "OwnTestRun":
        return cls(test=test, passed=None, reason=reason)

    @classmethod
    def unfit(cls, test: str, environment: str) -> "OwnTestRun":
        """Not run, the project's environment being unable to run any test."""
        return cls(
            test=test, passed=None, reason=f"{UNFIT}: {environment}", environment=environment
        )


def _outcome(test: str, run: Run) -> tuple[bool | None, str | None]:
    """Whether the test at `test` passed in `run`, and why when it did not pass or fail as a
    test: None when it did not run (the run's own error, a runner that ran no test or skipped
    it); False when it failed, or its file could not be loaded."""
    if run.error is not None:
        return None, run.error
    reading = read_output(run.output_tail, test)
    if reading.problem is not None:
        return None, reading.problem
    return run.passed, _not_a_test(run, reading)


class Verifier(Protocol):
    """Runs findings' tests for one review: at the base and the head, and with a patch."""

    @property
    def command(self) -> str:
        """The command a test is run with (`{test}` stands for its path), as the tester is
        told it."""
        ...

    async def reproduce(self, reproduction: Reproduction) -> Verification:
        """Run `reproduction` at the base and at the head."""
        ...

    async def check_fix(self, reproduction: Reproduction, patches: Sequence[Patch]) -> FixCheck:
        """Run `reproduction` at the head with `patches` applied."""
        ...

    async def run_own(self, test: str) -> OwnTestRun:
        """Run the pull request's own test `test` at the head, as it is there."""
        ...
