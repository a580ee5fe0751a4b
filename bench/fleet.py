"""What the fleet benchmarks share: a fake GitHub that notes when check runs complete, a
scripted model that takes its time, pull requests to review and the checks of what was
published on them.

Times are `time.monotonic()` of the benchmark's own process, where the fake GitHub runs: the
fake notes a check run's completion as it answers the request that completed it, so a time
to review needs no polling and has no polling's resolution.
"""

import argparse
import asyncio
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis
from arq.connections import ArqRedis, RedisSettings, create_pool

from agents.models.llm import LLMRequest, LLMResponse
from agents.models.scripted import Script, ScriptedLLM
from app.events import PullRequestRef
from app.store.queue import ReviewQueue
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.loopback import Response
from tests.scenarios.reviews import APP_ID, BASE, INSTALLATION, REPO

OWNER, NAME = REPO.split("/")
_CHECK_RUNS = re.compile(r"/repos/[^/]+/[^/]+/check-runs(?:/\d+)?")
_DIFF_PATH = re.compile(r"^\+\+\+ b/(.+)$", re.MULTILINE)


class BenchmarkFailed(AssertionError):
    """The run did not do what it claims, so its figures would not mean what they say."""


# -- GitHub ---------------------------------------------------------------------------------


class TimedGitHub(FakeGitHub):
    """The fake GitHub, noting by head sha when each check run was created and completed."""

    def __init__(self, key: AppKey) -> None:
        super().__init__(app_id=APP_ID, public_key_pem=key.public_pem)
        self.created: dict[str, float] = {}
        self.completed: dict[str, float] = {}
        self._times = threading.Lock()

    def _respond(
        self, method: str, target: str, headers: Mapping[str, str], raw: bytes
    ) -> Response:
        response = super()._respond(method, target, headers, raw)
        at = time.monotonic()
        path = target.split("?", 1)[0]
        if method in ("POST", "PATCH") and response.status < 300 and _CHECK_RUNS.fullmatch(path):
            run: dict[str, Any] = json.loads(response.payload)
            with self._times:
                if method == "POST":
                    self.created.setdefault(run["head_sha"], at)
                if run["status"] == "completed":
                    self.completed.setdefault(run["head_sha"], at)
        return response

    async def until_completed(
        self, heads: Sequence[str], still: Callable[[], None] = lambda: None
    ) -> None:
        """Wait until every head's check run has completed, calling `still` (which raises if
        waiting is pointless) as it waits. The times are noted as the fake answers: this
        wait's cadence does not blur them."""
        while True:
            with self._times:
                if all(head in self.completed for head in heads):
                    return
            still()
            await asyncio.sleep(0.05)


def head_sha(number: int) -> str:
    return hashlib.sha1(f"tiebreak-fleet-{number}".encode()).hexdigest()


def open_pulls(
    github: FakeGitHub,
    numbers: Sequence[int],
    diff: str,
    *,
    base_files: Mapping[str, str],
    head_files: Mapping[str, str],
) -> list[PullRequestRef]:
    """Install the App on the repository and open a pull request of `diff` per number."""
    github.add_installation(INSTALLATION, repos=[REPO])
    refs = []
    for number in numbers:
        sha = head_sha(number)
        github.add_pull(
            REPO,
            number,
            head_sha=sha,
            base_sha=BASE,
            diff=diff,
            head_ref=f"feature-{number}",
            base_files=base_files,
            head_files=head_files,
        )
        refs.append(
            PullRequestRef(
                installation_id=INSTALLATION, owner=OWNER, repo=NAME, number=number, head_sha=sha
            )
        )
    return refs


async def enqueue(redis_url: str, refs: Sequence[PullRequestRef]) -> dict[str, float]:
    """Queue a review of each pull request, one after another, with the base its webhook
    names (every pull request of :func:`open_pulls` is on `BASE`); when each was queued, by
    head."""
    pool: ArqRedis = await create_pool(RedisSettings.from_dsn(redis_url))
    queued = {}
    try:
        queue = ReviewQueue(pool)
        for ref in refs:
            at = time.monotonic()
            if not await queue.enqueue_review(ref, base_sha=BASE):
                raise BenchmarkFailed(f"the review of {ref.key} was already queued")
            queued[ref.head_sha] = at
    finally:
        await pool.aclose()
    return queued


def publication_problems(
    github: FakeGitHub, refs: Sequence[PullRequestRef], conclusion: str
) -> list[str]:
    """What is wrong with what the reviews published: each pull request must have exactly
    one check run, completed with `conclusion`, and exactly one review."""
    problems = []
    runs: dict[str, list[tuple[str, str | None]]] = {}
    for run in github.check_runs(REPO):
        runs.setdefault(run.head_sha, []).append((run.status, run.conclusion))
    for ref in refs:
        found = runs.get(ref.head_sha, [])
        if found != [("completed", conclusion)]:
            problems.append(f"#{ref.number}: check runs {found}, not one completed {conclusion}")
        reviews = len(github.reviews(REPO, ref.number))
        if reviews != 1:
            problems.append(f"#{ref.number}: {reviews} reviews, not one")
    return problems


# -- the model ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One model call: the path its unit's diff starts with, and when it started and ended."""

    unit: str
    start: float
    end: float


class PacedModel:
    """A scripted model whose every call takes `latency` seconds, as a remote model's would;
    it notes each call's unit and times.

    Each call is answered in a task of its own, on the model's time: it ends when its answer
    is ready, `latency` after it was asked, not when the worker's event loop next gets to the
    coroutine that asked (busy with other units, it may get there later). That lag is the
    worker's, counted between calls, however the worker awaits its calls."""

    def __init__(self, script: Script, latency: float) -> None:
        self.script = ScriptedLLM(script)
        self.latency = latency
        self.calls: list[Call] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return await asyncio.ensure_future(self._answer(request, time.monotonic()))

    async def _answer(self, request: LLMRequest, start: float) -> LLMResponse:
        await asyncio.sleep(max(0.0, start + self.latency - time.monotonic()))
        response = await self.script.complete(request)
        self.calls.append(Call(unit_path(request), start, time.monotonic()))
        return response


def unit_path(request: LLMRequest) -> str:
    """The first path of the unit's diff, from the request's stable diff block."""
    for block in request.blocks:
        found = _DIFF_PATH.search(block.text) if block.stable else None
        if found:
            return found.group(1)
    raise BenchmarkFailed(f"a {request.tool.name} request without a diff")


# -- figures --------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile: the smallest value at least `q` of them do not exceed."""
    ranked = sorted(values)
    return ranked[max(0, math.ceil(q / 100 * len(ranked)) - 1)]


@dataclass(frozen=True, slots=True)
class Memory:
    """Redis's `INFO memory` figures, and how many keys it holds."""

    used: int
    peak: int
    keys: int

    @classmethod
    def of(cls, redis_url: str) -> "Memory":
        with redis.Redis.from_url(redis_url) as client:
            info: dict[str, Any] = client.info("memory")
            keys = int(client.dbsize())
        return cls(used=int(info["used_memory"]), peak=int(info["used_memory_peak"]), keys=keys)


def mib(size: int) -> str:
    return f"{size / 2**20:.2f} MiB"


def positive(text: str) -> int:
    """An argparse type: a whole number of at least one."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value
