"""One attempt at one review unit, as Redis sees it: what the redis-server receives while a
real unit job debates a scripted model, counted by the server itself (`INFO stats`).

Each round trip costs the worker's event loop, shared by every unit it debates, about a tenth
of a millisecond; a unit's calls wait for one another's."""

import asyncio
from datetime import UTC, datetime
from itertools import pairwise

from arq.connections import ArqRedis

from agents.debate.journal import JournalEntry
from agents.diff import Diff
from agents.errors import LLMUnavailable
from agents.models.llm import LLMRequest, LLMResponse, Role
from agents.models.scripted import ScriptedLLM, by_role
from app.jobs.deps import WorkerDeps
from app.jobs.job_results import JobResult
from app.jobs.unit import debate_unit
from app.store import keys
from app.store.live import LiveRuns
from app.store.records import State
from app.store.redis_typing import reply
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.store import Received, ServerCounts
from tests.scenarios.debates import agreed_by_role
from tests.scenarios.reviews import DIFF, INSTALLATION, planned, worker_setup

RUN = "run-unit"
TODAY = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
START_AND_END = 2
"""Round trips of a unit's start and end around its calls: its reads and its end (its start
rides with its first call's reservation)."""


class Sampled:
    """A scripted model that reads what the server received as each of its calls starts."""

    def __init__(self, llm: ScriptedLLM, server: ServerCounts) -> None:
        self.llm = llm
        self.server = server
        self.starts: list[Received] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.starts.append(await self.server.received())
        return await self.llm.complete(request)


async def debate(
    github: FakeGitHub, key: AppKey, redis: ArqRedis, model: Sampled, run: str = RUN
) -> tuple[JobResult, Received, Received]:
    """Plan a one-unit run as its coordinator does, then run its unit's job (attempt 1) on
    `model`; return what the job returned and what the server had received before and after."""
    # A heartbeat that is not renewed during the debate.
    setup = worker_setup(github, key, model, heartbeat=60.0, clock=lambda: TODAY)
    deps = WorkerDeps.started(setup, redis)
    diff = Diff.parse(DIFF)
    units = diff.units()
    await planned(redis, run, diff, units)
    before = await model.server.received()
    result = await debate_unit({"deps": deps}, run, 0, 1)
    after = await model.server.received()
    return result, before, after


async def spent(redis: ArqRedis) -> tuple[int, int]:
    """The run's ceiling's counter and the installation's day's counter."""
    run, day = await redis.mget([keys.spent(RUN), keys.allowance(INSTALLATION, TODAY.date())])
    return int(run or 0), int(day or 0)


async def journal(redis: ArqRedis) -> list[JournalEntry]:
    raw = await reply(redis.lrange(keys.journal(RUN, 0), 0, -1))
    return [JournalEntry.model_validate_json(entry) for entry in raw]


def billed(entries: list[JournalEntry]) -> int:
    return sum(e.response.usage.billed for e in entries if e.response)


async def test_each_model_call_of_a_unit_costs_one_redis_round_trip(
    github: FakeGitHub, key: AppKey, redis: ArqRedis, counts: ServerCounts
) -> None:
    # A worker's first unit also loads what it runs on Redis once: the second is measured.
    first = Sampled(ScriptedLLM(by_role(**agreed_by_role())), counts)
    await debate(github, key, redis, first, "first")
    await redis.delete(keys.allowance(INSTALLATION, TODAY.date()))
    model = Sampled(ScriptedLLM(by_role(**agreed_by_role())), counts)

    _, before, after = await debate(github, key, redis, model)

    calls = len(model.starts)
    # Between two calls' starts: the first's end and the second's start (and one reading).
    between = [b.reads - a.reads - 1 for a, b in pairwise(model.starts)]
    commands = [b.commands - a.commands - 1 for a, b in pairwise(model.starts)]
    assert calls >= 3
    # The call's reservation, with what the last one left and its agent shown active.
    assert max(between) == 1, f"round trips between calls: {between}, commands: {commands}"
    whole = after.reads - before.reads - (calls + 1)
    assert whole <= calls + START_AND_END, f"{whole} round trips for {calls} calls"
    # Nothing was left out: every call journaled, settled on both pools, the unit complete.
    status = (await LiveRuns(redis, 60.0).units(RUN, [0]))[0]
    assert (status.state, status.calls) == (State.COMPLETE, calls)
    entries = await journal(redis)
    assert len(entries) == calls
    assert status.tokens == billed(entries) > 0
    assert await spent(redis) == (billed(entries), billed(entries))
    assert await redis.get(keys.outcome(RUN, 0)) is not None
    assert await reply(redis.lrange(keys.done(RUN), 0, -1)) == [b"0"]


async def test_a_call_the_api_refused_gives_its_reservation_back_on_both_pools(
    github: FakeGitHub, key: AppKey, redis: ArqRedis, counts: ServerCounts
) -> None:
    script = agreed_by_role()
    refused = LLMUnavailable("overloaded")
    llm = ScriptedLLM(by_role(tester=[refused, *script["tester"]], coder=script["coder"]))
    model = Sampled(llm, counts)

    await debate(github, key, redis, model)

    entries = await journal(redis)
    assert [e.unavailable for e in entries][:2] == ["overloaded", None]
    assert len(entries) == len(model.starts)
    assert await spent(redis) == (billed(entries), billed(entries))
    status = (await LiveRuns(redis, 60.0).units(RUN, [0]))[0]
    assert status.state is State.COMPLETE
    assert set(status.agents.values()) == {State.COMPLETE}


class Watching(Sampled):
    """A scripted model whose calls take a while, as a remote model's do; it notes, while
    each call is in flight, how the unit's status shows the calling agent."""

    def __init__(self, llm: ScriptedLLM, server: ServerCounts, redis: ArqRedis) -> None:
        super().__init__(llm, server)
        self.redis = redis
        self.seen: list[tuple[str, State | None]] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        await asyncio.sleep(0.05)
        (status,) = await LiveRuns(self.redis, 60.0).units(RUN, [0])
        self.seen.append((str(request.role), status.agents.get(request.role)))
        return await super().complete(request)


async def test_an_agent_is_shown_active_while_its_call_is_in_flight(
    github: FakeGitHub, key: AppKey, redis: ArqRedis, counts: ServerCounts
) -> None:
    model = Watching(ScriptedLLM(by_role(**agreed_by_role())), counts, redis)

    await debate(github, key, redis, model)

    assert len(model.seen) >= 3
    assert all(state is State.ACTIVE for _, state in model.seen), model.seen


async def test_a_unit_keeps_no_field_that_tiebreak_status_does_not_read(
    github: FakeGitHub, key: AppKey, redis: ArqRedis, counts: ServerCounts
) -> None:
    await debate(github, key, redis, Sampled(ScriptedLLM(by_role(**agreed_by_role())), counts))

    kept = {field.decode() for field in await reply(redis.hkeys(keys.unit(RUN, 0)))}
    (status,) = await LiveRuns(redis, 60.0).units(RUN, [0])
    assert kept == set(status.fields())  # each field read back, all of them written again
    assert {keys.agent_field(role) for role in Role} <= kept
