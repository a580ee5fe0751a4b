"""The record of a debate's test runs: how a debate that waited for its tests resumes.

The engine is deterministic given what the models answer and what the findings' tests show.
The models' answers are journaled (:mod:`agents.journal`); the tests' results are recorded
here, each under the digest of what was run (:func:`run_digest`: the test, its command and,
for a fix check, the patches). A :class:`RecordedVerifier` asked for a run that is recorded
answers from the record and runs nothing; asked for one that is not, it has its verifier run
it and records the result. So a debate started again over the same unit, on any worker,
replays its calls and its test runs and arrives where the last attempt stopped.

A verifier that runs tests elsewhere (a workflow in the repository's CI) raises
:class:`agents.errors.AwaitingTests` instead of answering: the debate suspends, and the
results are recorded under the same digests when they arrive.
"""

import hashlib
import json
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from agents.protocol import Patch, Reproduction
from agents.verification import FixCheck, Verification, Verifier


class RecordedRun(BaseModel):
    """What one run showed: a reproduction's verification, or a fix check."""

    model_config = ConfigDict(frozen=True)

    verification: Verification | None = None
    fix: FixCheck | None = None


class RecordedRuns(Protocol):
    """Where one unit's test runs are kept between attempts (Redis, in the App)."""

    async def recorded(self, digest: str) -> RecordedRun | None: ...

    async def record(self, digest: str, run: RecordedRun) -> None: ...


def run_digest(command: str, reproduction: Reproduction, patches: Sequence[Patch] = ()) -> str:
    """The sha256 of what a run runs: the command, the test, and the patches applied (none
    for a reproduction at the base and the head; a fix check always has one)."""
    asked = {
        "command": command,
        "test": reproduction.model_dump(mode="json"),
        "patches": [p.model_dump(mode="json") for p in patches] if patches else None,
    }
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()


class RecordedVerifier:
    """`verifier`, its results recorded in `runs` and answered from there when asked again."""

    def __init__(self, verifier: Verifier, runs: RecordedRuns) -> None:
        self.verifier = verifier
        self.runs = runs

    @property
    def command(self) -> str:
        return self.verifier.command

    async def reproduce(self, reproduction: Reproduction) -> Verification:
        digest = run_digest(self.command, reproduction)
        recorded = await self.runs.recorded(digest)
        if recorded is not None and recorded.verification is not None:
            return recorded.verification
        result = await self.verifier.reproduce(reproduction)
        await self.runs.record(digest, RecordedRun(verification=result))
        return result

    async def check_fix(self, reproduction: Reproduction, patches: Sequence[Patch]) -> FixCheck:
        digest = run_digest(self.command, reproduction, patches)
        recorded = await self.runs.recorded(digest)
        if recorded is not None and recorded.fix is not None:
            return recorded.fix
        result = await self.verifier.check_fix(reproduction, patches)
        await self.runs.record(digest, RecordedRun(fix=result))
        return result


class MemoryRecordedRuns:
    """Recorded runs in memory: for tests, and for runs that need no recovery."""

    def __init__(self) -> None:
        self.kept: dict[str, RecordedRun] = {}

    async def recorded(self, digest: str) -> RecordedRun | None:
        return self.kept.get(digest)

    async def record(self, digest: str, run: RecordedRun) -> None:
        self.kept[digest] = run
