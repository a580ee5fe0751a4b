"""Fixtures of the fake GitHub's tests: a running fake and clients of it.

Every test drives the fake through the real githubkit client configured as production will
configure it (a GitHub App, then an installation), over loopback. A few use a client with
githubkit's client-side body validation off, or plain HTTP, to reach the checks GitHub itself
makes behind the ones githubkit makes first.
"""

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from githubkit import GitHub
from githubkit.auth import AppInstallationAuthStrategy

from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key
from tests.fakes.github_api_kit import (
    APP_ID,
    BASE,
    DIFF,
    HEAD,
    INSTALLATION,
    NUMBER,
    OTHER_INSTALLATION,
    OTHER_REPO,
    REPO,
    installation_client,
)


@pytest.fixture(scope="session")
def app_key() -> AppKey:
    return new_app_key()


@pytest.fixture
def fake(app_key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=app_key.public_pem) as fake:
        fake.add_repo(REPO)
        fake.add_installation(INSTALLATION, repos=[REPO])
        fake.add_installation(OTHER_INSTALLATION, repos=[OTHER_REPO])
        fake.add_pull(
            REPO,
            NUMBER,
            head_sha=HEAD,
            base_sha=BASE,
            head_ref="feature",
            title="Add widgets",
            body="Adds the widgets.",
            diff=DIFF,
        )
        yield fake


@pytest.fixture
async def github(
    fake: FakeGitHub, app_key: AppKey
) -> AsyncIterator[GitHub[AppInstallationAuthStrategy]]:
    async with installation_client(fake, app_key) as client:
        yield client


@pytest.fixture
async def unchecked(
    fake: FakeGitHub, app_key: AppKey
) -> AsyncIterator[GitHub[AppInstallationAuthStrategy]]:
    """A client that sends bodies githubkit would refuse, so that GitHub's own checks run:
    bodies GitHub's description refuses are sent on purpose, not noted as the fake's
    problems."""
    fake.bodies_checked = False
    async with installation_client(fake, app_key, validate=False) as client:
        yield client


@pytest.fixture
async def plain(fake: FakeGitHub) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=fake.base_url, timeout=5) as client:
        yield client
