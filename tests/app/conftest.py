"""Fixtures of the app tests: the App's key, a pull request on the fake GitHub, an arq pool
on the test's redis-server and that server's own counts."""

from collections.abc import AsyncIterator, Iterator

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool

from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key
from tests.kits.store import ServerCounts, server_counts
from tests.scenarios.debates import PAYMENTS, PAYMENTS_AFTER, PAYMENTS_BEFORE
from tests.scenarios.reviews import APP_ID, BASE, DIFF, HEAD, INSTALLATION, NUMBER, REPO


@pytest.fixture(scope="session")
def key() -> AppKey:
    return new_app_key()


@pytest.fixture
def github(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_pull(
            REPO,
            NUMBER,
            head_sha=HEAD,
            base_sha=BASE,
            diff=DIFF,
            head_ref="feature",
            base_files={PAYMENTS: PAYMENTS_BEFORE},
            head_files={PAYMENTS: PAYMENTS_AFTER},
        )
        yield fake


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[ArqRedis]:
    """An arq pool on the test's emptied redis-server, as the App's processes make one."""
    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    try:
        yield pool
    finally:
        await pool.aclose()


@pytest.fixture
async def counts(redis_url: str) -> AsyncIterator[ServerCounts]:
    """What the test's redis-server has received, as it counts it."""
    async with server_counts(redis_url) as counts:
        yield counts
