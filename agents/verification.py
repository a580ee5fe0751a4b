"""What running a finding's test proves, and the one-method boundary that runs it.

A finding may carry a :class:`agents.protocol.Reproduction`: a test the tester wrote. Tiebreak
runs it at the pull request's base and at its head (:class:`Verifier`, implemented outside the
engine, in a sandbox), and what the two runs did decides the finding's :class:`Evidence`:

* `reproduced` — it fails at the head and passes at the base: the change brought the bug in.
  Proof: the coder can answer it only with a patch, the arbiter can rule it only fixed.
* `fails_at_base` — it fails at the base too: a bug older than the change, or a wrong test.
* `not_reproduced` — it passes at the head: the finding is withdrawn, unless the tester gives
  another test.
* `broken` — it did not run (a syntax or collection error, a missing import, a timeout, a
  path it may not be written at), or it ran at the head but not at the base: no evidence.
  So is a run in an environment that cannot run tests at all (`environment`: the pre-flight's
  trivial test failed), which proves nothing of the code and binds nothing.
* `not_run` — verification is off, or the review's runs are spent: no evidence.

The same test run again on the head with the coder's patch applied checks the patch: it
passes (the fix is verified) or still fails (the fix is not agreed).

What a run printed is kept without its terminal escape sequences (a test's colours): it is
read by agents and kept in JSON and comments, never a terminal (:mod:`agents.escapes`).

Pure: the runs themselves are the verifier's; what they mean is decided here.
"""

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, field_validator

from agents.escapes import without_escapes
from agents.protocol import Patch, Reproduction

UNFIT = "the project's environment cannot run its tests"
FAILING_EXIT_CODES = (1,)
"""Exit codes that mean the test ran and failed (pytest's, unittest's and most runners'). Any
other non-zero code means it did not run: pytest exits 2 on a collection error, 4 on a usage
error, 5 when no test was collected."""


class Evidence(StrEnum):
    REPRODUCED = "reproduced"
    FAILS_AT_BASE = "fails_at_base"
    NOT_REPRODUCED = "not_reproduced"
    BROKEN = "broken"
    NOT_RUN = "not_run"

    @property
    def proof(self) -> bool:
        """Whether the runs prove the change introduced the bug."""
        return self is Evidence.REPRODUCED


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
        return self.error is None and self.exit_code == 0

    @property
    def failed(self) -> bool:
        """Whether the test ran and failed: an exit code a failing test gives."""
        return self.error is None and self.exit_code in FAILING_EXIT_CODES

    def why_broken(self) -> str:
        """Why the test did not run, in words (empty if it ran)."""
        if self.error is not None:
            return self.error
        if self.passed or self.failed:
            return ""
        return f"it exited with {self.exit_code}, which says it did not run"


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
    seconds: float = 0.0
    """Both runs', as long as they took together (they run at once)."""
    reason: str = ""
    """In words, what the runs showed."""
    base_exit_code: int | None = None
    environment: str | None = None
    """Why the project's environment cannot run tests, when that is what the runs showed: the
    verdict is then `broken`, and nothing in the debate follows from it."""

    @classmethod
    def of(cls, test: str, command: str, head: Run, base: Run | None) -> "Verification":
        """What the runs at the head and at the base (None: not run, as the head's test
        passed or did not run) show."""
        seconds = max(head.seconds, base.seconds if base else 0.0)
        shown = cls(
            verdict=Evidence.BROKEN,
            test=test,
            command=command,
            exit_code=head.exit_code,
            output_tail=head.output_tail,
            seconds=seconds,
            base_exit_code=base.exit_code if base else None,
        )
        verdict, reason = _evidence(head, base)
        return shown.model_copy(update={"verdict": verdict, "reason": reason})

    @classmethod
    def not_run(cls, test: str, reason: str) -> "Verification":
        return cls(verdict=Evidence.NOT_RUN, test=test, reason=reason)

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


def _evidence(head: Run, base: Run | None) -> tuple[Evidence, str]:
    if not (head.passed or head.failed):
        return Evidence.BROKEN, f"at the head {head.why_broken()}"
    if head.passed:
        return Evidence.NOT_REPRODUCED, "it passes at the head"
    if base is None:
        return Evidence.BROKEN, "it fails at the head and was not run at the base"
    if base.passed:
        return Evidence.REPRODUCED, "it fails at the head and passes at the base"
    if base.failed:
        return Evidence.FAILS_AT_BASE, "it fails at the base too: no regression shown"
    return (
        Evidence.BROKEN,
        f"it fails at the head, but at the base {base.why_broken()}: no regression shown",
    )


class FixCheck(BaseModel):
    """A finding's test run again on the head with a patch applied."""

    model_config = ConfigDict(frozen=True)

    verified: bool | None
    """True: the test passes with the patch; False: it still fails; None: it did not run."""
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
    def of(cls, run: Run) -> "FixCheck":
        if run.passed:
            verified, reason = True, "the test passes with the patch"
        elif run.failed:
            verified, reason = False, "the test still fails with the patch"
        else:
            verified, reason = None, f"with the patch {run.why_broken()}"
        return cls(
            verified=verified,
            exit_code=run.exit_code,
            output_tail=run.output_tail,
            seconds=run.seconds,
            reason=reason,
        )


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
