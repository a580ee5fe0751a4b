"""The driver that performs a debate machine's needs: the model asked, the tests run.

A call is answered from the unit's journal when the journal recorded it (a debate taken up
again pays for no call twice), else reserved on the review's token ceiling, made, settled
with what it used and journaled. Tests are run by a :class:`TrialRunner`: here, at once (a
local verifier, :class:`LocalTrials`); or elsewhere, in which case the runner may answer that
the debate must wait (:class:`Waiting`): the driver stops there and says so, and the debate
is taken up again, by any process, once the results are in
(:mod:`agents.debate.recorded_tests`).
"""

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from agents.debate.journal import JournalEntry, Replay, request_digest
from agents.debate.needs import AskModel, CallEnd, OwnTest, Reply, Run, Steps, TrialResult
from agents.errors import LLMUnavailable
from agents.models.llm import LLMClient, LLMRequest, LLMResponse, Usage
from agents.verification import Verifier
from policies.budget import TokenCeiling
from policies.errors import OutOfTokens

R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Waiting:
    """The debate waits for test runs under way elsewhere (their digests,
    :func:`agents.debate.recorded_tests.run_digest`). Not a failure: it is taken up again once
    their results are recorded."""

    runs: tuple[str, ...]

    def __str__(self) -> str:
        return f"waiting for {len(self.runs)} test run(s)"


async def every(runs: Iterable[Awaitable[T]]) -> list[T]:
    """Each of `runs`' results, all run at once. Every run is awaited before a failure is
    raised (the first, in order): none is left running unwatched."""
    done = await asyncio.gather(*runs, return_exceptions=True)
    failed = next((r for r in done if isinstance(r, BaseException)), None)
    if failed is not None:
        raise failed
    return [r for r in done if not isinstance(r, BaseException)]


class TrialRunner(Protocol):
    """Runs a debate's test runs, all at once: their results in order, or :class:`Waiting`."""

    async def run(self, runs: Sequence[Run]) -> tuple[TrialResult, ...] | Waiting: ...


class LocalTrials:
    """Runs tests with a verifier, here and now."""

    def __init__(self, verifier: Verifier) -> None:
        self.verifier = verifier

    async def run(self, runs: Sequence[Run]) -> tuple[TrialResult, ...]:
        return tuple(await every(self._one(run) for run in runs))

    async def _one(self, run: Run) -> TrialResult:
        if isinstance(run, OwnTest):
            return await self.verifier.run_own(run.test)
        if run.checks_fix:
            return await self.verifier.check_fix(run.reproduction, run.patches)
        return await self.verifier.reproduce(run.reproduction)


Asking = Callable[[LLMRequest], None]
"""Told of each call a debate makes live, before the call is reserved on its ceiling."""


class Driver:
    """Performs the needs of one machine with `llm` under `ceiling`, its calls answered from
    `replay` first, its tests run by `tests`; `asking` is told of each live call before it is
    reserved (where the reservation is written, what it shows can be written with it)."""

    def __init__(
        self,
        llm: LLMClient,
        ceiling: TokenCeiling,
        *,
        replay: Replay | None = None,
        tests: TrialRunner | None = None,
        asking: Asking | None = None,
    ) -> None:
        self.llm = llm
        self.ceiling = ceiling
        self.replay = replay
        self.tests = tests
        self.asking = asking

    async def drive(self, steps: Steps[R]) -> R | Waiting:
        """Perform `steps`' needs until it returns, or until its tests must be waited for."""
        reply: Reply | None = None
        try:
            need = next(steps)
            while True:
                if isinstance(need, AskModel):
                    reply = await self.call(need.request)
                else:
                    if self.tests is None:
                        raise TypeError("a debate without tests asked for test runs")
                    results = await self.tests.run(need.runs)
                    if isinstance(results, Waiting):
                        return results
                    reply = results
                need = steps.send(reply)
        except StopIteration as stop:
            result: R = stop.value
            return result
        finally:
            steps.close()

    async def call(self, request: LLMRequest) -> CallEnd:
        """How `request` ended: answered from the journal, or made live and journaled."""
        if self.replay is not None and (entry := await self.replay.recorded(request)):
            # Charged to this review's ceiling as spent, not reserved: it was paid for once.
            usage = entry.response.usage if entry.response else Usage()
            self.ceiling.settle(0, usage.billed)
            return CallEnd(response=entry.response, unavailable=entry.unavailable)
        reserved = request.estimated_tokens()
        if self.asking is not None:
            self.asking(request)
        try:
            settle = await self.ceiling.take(reserved)
        except OutOfTokens as exc:
            return CallEnd(refused=exc)
        usage, answered = Usage(), False
        try:
            response = await self.llm.complete(request)
            usage, answered = response.usage, True
        except LLMUnavailable as exc:
            answered = True  # the API refused the call: nothing was billed
            await self._journal(request, unavailable=str(exc))
            return CallEnd(unavailable=str(exc))
        finally:
            # A call cancelled in flight may have been billed in full: count its reservation.
            await settle(usage.billed if answered else reserved)
        await self._journal(request, response=response)
        return CallEnd(response=response)

    async def _journal(
        self,
        request: LLMRequest,
        *,
        response: LLMResponse | None = None,
        unavailable: str | None = None,
    ) -> None:
        if self.replay is not None:
            entry = JournalEntry(
                request=request_digest(request), response=response, unavailable=unavailable
            )
            await self.replay.record(entry)
