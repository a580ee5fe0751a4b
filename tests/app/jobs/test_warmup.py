"""A worker warms up before it takes a job: what a process's first review would do once (start
the parsing processes, open GitHub's connection, learn the App's login) is done as it starts."""

import asyncio
import multiprocessing

from app.parsing import PROCESSES
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import HeldModel, agreed
from tests.scenarios.reviews import background_worker, worker_setup


async def test_a_worker_asks_who_the_app_is_and_starts_its_parsers_before_any_job(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    before = set(multiprocessing.active_children())
    async with background_worker(worker_setup(github, key, HeldModel(agreed())), redis_url):
        for _ in range(2_000):  # a worker that warms up has asked well before 20 s
            if github.requests_to("GET", "/app"):
                break
            await asyncio.sleep(0.01)
        parsers = set(multiprocessing.active_children()) - before

    assert len(github.requests_to("GET", "/app")) == 1
    assert len(parsers) >= PROCESSES
