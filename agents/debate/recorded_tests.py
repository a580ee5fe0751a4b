"""The record of a debate's test runs: how a debate whose tests run elsewhere waits, and
resumes.

The machine is deterministic given what the models answer and what the findings' tests show.
The models' answers are journaled (:mod:`agents.debate.journal`); the tests' results are
recorded here, each under the digest of what was run (:func:`run_digest`: the test, its
command and, for a fix check, the patches). :class:`RecordedTrials` answers a run that is
recorded from the record; one that is not, it has started where tests run
(:class:`TrialsElsewhere`, a workflow in the repository's CI) and answers that the debate
waits (:class:`agents.debate.driver.Waiting`), every run it asked for at once started first.
Taken up again, on any worker, the debate is fed its journal and its recorded runs and
arrives where it stopped, with the results it waited for.
"""

import hashlib
import json
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from agents.debate.driver import Waiting, every
from agents.debate.needs import OwnTest, Run, TrialResult
from agents.protocol import Patch, Reproduction
from agents.verification import FixCheck, OwnTestRun, Verification


class RecordedRun(BaseModel):
    """What one run showed: a reproduction's verification, a fix check, or the pull
    request's own test run at the head."""

    model_config = ConfigDict(frozen=True)

    verification: Verification | None = None
    fix: FixCheck | None = None
    own: OwnTestRun | None = None

    @classmethod
    def of(cls, result: TrialResult) -> "RecordedRun":
        if isinstance(result, FixCheck):
            return cls(fix=result)
        if isinstance(result, OwnTestRun):
            return cls(own=result)
        return cls(verification=result)

    def result(self, run: Run) -> TrialResult | None:
        """What it showed of `run`, if it is the same kind of run."""
        if isinstance(run, OwnTest):
            return self.own
        return self.fix if run.checks_fix else self.verification


class RecordedRuns(Protocol):
    """Where one unit's test runs are kept between attempts (Redis, in the App)."""

    async def recorded(self, digest: str) -> RecordedRun | None: ...

    async def record(self, digest: str, run: RecordedRun) -> None: ...


class TrialsElsewhere(Protocol):
    """Starts test runs where they run, their results recorded under their digests once in."""

    @property
    def command(self) -> str:
        """The command a test is run with (`{test}` stands for its path)."""
        ...

    async def start(self, run: Run, digest: str) -> TrialResult | None:
        """Start `run`; None once it is under way (or was already), or what it shows at once
        without running (not run, and why)."""
        ...


def run_digest(command: str, reproduction: Reproduction, patches: Sequence[Patch] = ()) -> str:
    """The sha256 of what a run runs: the command, the test, and the patches applied (none
    for a reproduction at the base and the head; a fix check always has one)."""
    asked = {
        "command": command,
        "test": reproduction.model_dump(mode="json"),
        "patches": [p.model_dump(mode="json") for p in patches] if patches else None,
    }
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()


def own_digest(command: str, test: str) -> str:
    """The sha256 of a run of the pull request's own `test` at the head."""
    asked = {"command": command, "own_test": test}
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()


def digest_of(command: str, run: Run) -> str:
    """The digest `run` is recorded under."""
    if isinstance(run, OwnTest):
        return own_digest(command, run.test)
    return run_digest(command, run.reproduction, run.patches)


class RecordedTrials:
    """Test runs answered from `record`, the others started `elsewhere` and waited for."""

    def __init__(self, elsewhere: TrialsElsewhere, record: RecordedRuns) -> None:
        self.elsewhere = elsewhere
        self.record = record

    async def run(self, runs: Sequence[Run]) -> tuple[TrialResult, ...] | Waiting:
        digests = [digest_of(self.elsewhere.command, r) for r in runs]
        results = await every(self._one(r, d) for r, d in zip(runs, digests, strict=True))
        waiting = tuple(d for d, result in zip(digests, results, strict=True) if result is None)
        if waiting:
            return Waiting(waiting)
        return tuple(r for r in results if r is not None)

    async def _one(self, run: Run, digest: str) -> TrialResult | None:
        recorded = await self.record.recorded(digest)
        if recorded is not None and (result := recorded.result(run)) is not None:
            return result
        result = await self.elsewhere.start(run, digest)
        if result is not None:
            await self.record.record(digest, RecordedRun.of(result))
        return result


class MemoryRecordedRuns:
    """Recorded runs in memory: for tests, and for runs that need no recovery."""

    def __init__(self) -> None:
        self.kept: dict[str, RecordedRun] = {}

    async def recorded(self, digest: str) -> RecordedRun | None:
        return self.kept.get(digest)

    async def record(self, digest: str, run: RecordedRun) -> None:
        self.kept[digest] = run
