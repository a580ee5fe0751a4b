"""What the debate machine asks of its driver, and what the driver answers.

The machine never awaits. Each step is a generator: it yields what it needs next — a model
asked (:class:`AskModel`), findings' tests run (:class:`RunTests`) — and is sent back what
happened (:class:`CallEnd`, the tests' results); its return value is what it came to (an
:class:`agents.outcome.Outcome`). A driver performs each need however it can: the engine's
(`agents.debate.driver`) calls the model and runs the tests; a unit of the App whose tests
run in the repository's Actions stops at the tests and comes back with their results; a test
answers from a script, with no event loop at all.
"""

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from agents.models.llm import LLMRequest, LLMResponse
from agents.protocol import Patch, Reproduction
from agents.verification import FixCheck, OwnTestRun, Verification
from policies.errors import OutOfTokens

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class AskModel:
    """Ask a model `request`; answered with a :class:`CallEnd`."""

    request: LLMRequest


@dataclass(frozen=True, slots=True)
class CallEnd:
    """How a call ended: answered; refused by the API, billing nothing (`unavailable`); or
    never made, because it could cross a token limit (`refused`)."""

    response: LLMResponse | None = None
    unavailable: str | None = None
    refused: OutOfTokens | None = None


@dataclass(frozen=True, slots=True)
class Trial:
    """One run of a finding's test: at the base and the head, or, with `patches`, at the head
    with them applied (a fix check)."""

    reproduction: Reproduction
    patches: tuple[Patch, ...] = ()

    @property
    def checks_fix(self) -> bool:
        return bool(self.patches)


@dataclass(frozen=True, slots=True)
class OwnTest:
    """One run of a test the pull request adds or changes, at the head as it is there (no
    file written): whether it passes, asked when the coder cites it as evidence of intent."""

    test: str


Run = Trial | OwnTest


@dataclass(frozen=True, slots=True)
class RunTests:
    """Run `runs`, all at once; answered with their results in the same order: a
    :class:`Verification` for a reproduction, a :class:`FixCheck` for a fix check, an
    :class:`OwnTestRun` for the pull request's own test."""

    runs: tuple[Run, ...]


TrialResult = Verification | FixCheck | OwnTestRun
Need = AskModel | RunTests
Reply = CallEnd | tuple[TrialResult, ...]
Steps = Generator[Need, Reply, T]
"""A step of the machine: yields needs, is sent replies, returns a `T`."""


def call(request: LLMRequest) -> Steps[CallEnd]:
    """Ask for `request` to be answered; raise what made it impossible (a token limit)."""
    end = yield AskModel(request)
    if not isinstance(end, CallEnd):
        raise TypeError(f"a call was answered with {type(end).__name__}")
    if end.refused is not None:
        raise end.refused
    return end


def reproduce(tests: Sequence[Reproduction]) -> Steps[list[Verification]]:
    """Have each of `tests` run at the base and the head."""
    results = yield from _run(tuple(Trial(t) for t in tests))
    return [_of(Verification, r) for r in results]


def check_fixes(fixes: Sequence[tuple[Reproduction, Patch]]) -> Steps[list[FixCheck]]:
    """Have each test run at the head with its patch applied."""
    results = yield from _run(tuple(Trial(t, (patch,)) for t, patch in fixes))
    return [_of(FixCheck, r) for r in results]


def run_own(tests: Sequence[str]) -> Steps[list[OwnTestRun]]:
    """Have each of the pull request's own `tests` run at the head."""
    results = yield from _run(tuple(OwnTest(t) for t in tests))
    return [_of(OwnTestRun, r) for r in results]


def _run(runs: tuple[Run, ...]) -> Steps[tuple[TrialResult, ...]]:
    results = yield RunTests(runs)
    if not isinstance(results, tuple) or len(results) != len(runs):
        raise TypeError(f"{len(runs)} test runs were answered with {results!r}")
    return results


def _of(kind: type[T], result: TrialResult) -> T:
    if not isinstance(result, kind):
        raise TypeError(f"a {kind.__name__} was expected, not {type(result).__name__}")
    return result
