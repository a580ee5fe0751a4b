"""Units of one run, each its own job, sharing the run's ceiling on a real Redis: a call whose
worst case does not fit beside another unit's call under way waits for it to settle, rather
than ending its unit at the ceiling."""

import asyncio
from datetime import UTC, datetime

from arq.connections import ArqRedis

from agents.diff import Diff, ReviewUnit
from agents.models.llm import LLMRequest, LLMResponse
from agents.models.scripted import ScriptedLLM, by_role
from agents.outcome import StopReason
from app.jobs.deps import WorkerDeps
from app.jobs.unit import debate_unit
from app.store import keys
from app.store.live import LiveRuns
from app.store.redis_typing import reply
from policies.debate import DebatePolicy
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.scenarios.debates import agreed_by_role
from tests.scenarios.reviews import DIFF, planned, worker_setup

RUN = "run-turns"
TODAY = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
CEILING = 15_000
"""Each call of the scripted debate reserves 8,191 to 8,326 tokens and uses about 1,000: one
unit's call fits beside what both units spend, two calls under way at once do not."""


class Logged:
    """A scripted model that logs its calls' starts and ends as `(unit, event)`; with `gate`,
    its first call holds until the gate opens."""

    def __init__(self, unit: int, log: list[tuple[int, str]], gate: asyncio.Event | None) -> None:
        self.llm = ScriptedLLM(by_role(**agreed_by_role()))
        self.unit = unit
        self.log = log
        self.gate = gate
        self.started = asyncio.Event()

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.log.append((self.unit, "start"))
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
            self.gate = None
        response = await self.llm.complete(request)
        self.log.append((self.unit, "end"))
        return response


async def waiting(redis: ArqRedis, unit: asyncio.Task[object]) -> None:
    """Until a call waits in the run's line, or the unit's job has ended."""
    in_line = await reply(redis.hlen(keys.line(RUN)))
    while not unit.done() and not in_line:
        await asyncio.sleep(0.01)
        in_line = await reply(redis.hlen(keys.line(RUN)))


async def test_a_units_call_waits_for_another_units_call_to_settle_rather_than_end_its_unit(
    github: FakeGitHub, key: AppKey, redis: ArqRedis
) -> None:
    log: list[tuple[int, str]] = []
    gate = asyncio.Event()
    models = [Logged(0, log, gate), Logged(1, log, None)]
    deps = [
        WorkerDeps.started(worker_setup(github, key, m, heartbeat=60.0, clock=lambda: TODAY), redis)
        for m in models
    ]
    diff = Diff.parse(DIFF)
    units = [ReviewUnit("u0", diff), ReviewUnit("u1", diff)]
    await planned(redis, RUN, diff, units, DebatePolicy(token_ceiling=CEILING))

    first = asyncio.create_task(debate_unit({"deps": deps[0]}, RUN, 0, 1))
    await models[0].started.wait()  # unit 0's first call holds its reservation
    second = asyncio.create_task(debate_unit({"deps": deps[1]}, RUN, 1, 1))
    await waiting(redis, second)
    gate.set()
    await asyncio.gather(first, second)

    outcomes = await LiveRuns(redis, 60.0).outcomes(RUN, [0, 1])
    ended = {n: (o.stop, o.error) for n, o in outcomes.items()}
    assert ended == {0: (StopReason.SETTLED, None), 1: (StopReason.SETTLED, None)}
    # Unit 1's first call started only once unit 0's first call had ended.
    assert log.index((1, "start")) > log.index((0, "end"))
    spent = int(await redis.get(keys.spent(RUN)) or 0)
    assert 0 < spent <= CEILING
    assert not await reply(redis.hlen(keys.held(RUN)))
