"""What the web server tells strangers: health, readiness, and nothing about its insides."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from app.store.embedded import EmbeddedRedis
from app.web.server import create_app
from tests.scenarios.webhooks import SECRET


@pytest.mark.parametrize("path", ["/openapi.json", "/docs", "/redoc"])
def test_the_api_schema_and_docs_are_not_published(redis_url: str, path: str) -> None:
    with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis_url)) as client:
        assert client.get(path).status_code == 404


def test_readiness_while_redis_is_down_names_no_internal_detail(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    redis = EmbeddedRedis(tmp_path, persist=False).start()
    where = str(redis.socket)
    try:
        with TestClient(create_app(Settings(github_webhook_secret=SECRET), redis.url)) as client:
            redis.stop()

            answer = client.get("/readyz")
    finally:
        redis.stop()

    assert answer.status_code == 503
    assert answer.json() == {"status": "redis unreachable"}
    assert where not in answer.text
    # The operator still learns what failed.
    assert any(where in record.getMessage() for record in caplog.records)
