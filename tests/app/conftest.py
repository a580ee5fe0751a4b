"""Fixtures of the app tests: the App's key, and a pull request on the fake GitHub."""

from collections.abc import Iterator

import pytest

from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key
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
