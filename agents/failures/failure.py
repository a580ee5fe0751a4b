"""How a test failed, as its runner's output tells it.

A runner's output is read (:mod:`agents.failures.reading`) into a :class:`OutputReading`: which
runner family printed it, each failure it shows — the exception, its message, the line of
the test file it failed at, whether it failed loading the test file or running it, and what
it says is not there (a module, a name) — and, when no test ran at all, why. Comparing the
failures at the base and at the head is what tells a bug older than the change from code the
base does not have (:mod:`agents.verification`).

Pure, and untrusted: the output is the test's, and a test can print anything. What is read
is bounded, and output nothing recognises reads as no failure at all.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum

MESSAGE_CHARS = 200
"""Characters of a failure's message kept."""


class Stage(StrEnum):
    """Where a test failed."""

    RUNNING = "running"
    """The test ran, and an assertion or an exception failed it."""
    LOADING = "loading"
    """Its file could not be loaded: an error importing or collecting it, before any test."""


class Absence(StrEnum):
    MODULE = "module"
    NAME = "name"


@dataclass(frozen=True, slots=True)
class Missing:
    """What a failure says is not there: a module (by its dotted name), or a name — of a
    module, a class or an object, as `within` says when the failure does."""

    absence: Absence
    name: str
    within: str | None = None

    def __str__(self) -> str:
        where = f" in {self.within}" if self.within else ""
        return f"no {self.absence} '{self.name}'{where}"


@dataclass(frozen=True, slots=True)
class Failure:
    """One failure a runner shows."""

    exception: str
    """Its type as printed (`AssertionError`, `ImportError`); empty when the output does not
    say."""
    message: str = ""
    """The first line of its message, cut at :data:`MESSAGE_CHARS`."""
    line: int | None = None
    """The line of the test file it failed at, when the output shows it."""
    stage: Stage = Stage.RUNNING
    missing: Missing | None = None

    def same_as(self, other: "Failure") -> bool:
        """Whether `other` is the same failure: the same exception at the same line of the
        test (the values an assertion compared may differ)."""
        return (self.exception, self.line, self.missing) == (
            other.exception,
            other.line,
            other.missing,
        )

    def __str__(self) -> str:
        shown = self.exception or "a failure"
        if self.line is not None:
            shown += f" at line {self.line}"
        return f"{shown}: {self.message}" if self.message else shown


@dataclass(frozen=True, slots=True)
class OutputReading:
    """What one run's output tells: the runner family that printed it (empty when none was
    recognised), its failures in order, and why no test ran, when the runner says so."""

    runner: str = ""
    failures: tuple[Failure, ...] = ()
    problem: str | None = None
    """The runner ran no test: none was collected, each was skipped, it was misused, or it is
    not there."""

    @property
    def loading(self) -> Failure | None:
        """The first failure loading the test file, if any."""
        return next((f for f in self.failures if f.stage is Stage.LOADING), None)

    def same_as(self, other: "OutputReading") -> bool:
        """Whether `other` shows the same failures (both showing some)."""
        return (
            bool(self.failures)
            and len(self.failures) == len(other.failures)
            and all(a.same_as(b) for a, b in zip(self.failures, other.failures, strict=True))
        )


SKIPPED = "the test was skipped"
SKIPPING = frozenset({"skipped", "pending"})
"""The words runners count a skipped test by (mocha's `pending`)."""


def none_ran(counts: Mapping[str, int], ran: Collection[str]) -> str | None:
    """Why no test ran though the runner counted some, as its totals show: `counts`, each by
    the runner's word for it, none of those that say a test ran (`ran`: passed, failed) —
    each skipped, or else set aside (deselected, expected to fail, left to do). None when a
    test ran, or none was counted."""
    shown = {word: n for word, n in counts.items() if n}
    if not shown or any(word in ran for word in shown):
        return None
    said = ", ".join(f"{n} {word}" for word, n in shown.items())
    if SKIPPING.intersection(shown):
        return f"{SKIPPED} ({said})"
    return f"no test passed or failed ({said})"
