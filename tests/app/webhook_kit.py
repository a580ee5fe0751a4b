"""GitHub's webhook payload examples (tests/fixtures, octokit, MIT) and signed deliveries."""

import json
import uuid
from pathlib import Path
from typing import Any

import redis
from githubkit import webhooks

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "github-webhooks"
SECRET = "webhook-secret-for-tests"


def payload(name: str) -> dict[str, Any]:
    """A payload example, e.g. `payload("pull_request/opened")`."""
    path = FIXTURES / f"{name}.payload.json"
    if not path.exists():
        path = FIXTURES / f"{name}.json"
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def signed(
    event: str, body: dict[str, Any] | bytes, *, delivery: str | None = None, secret: str = SECRET
) -> tuple[bytes, dict[str, str]]:
    """A delivery's raw body and headers, signed as GitHub signs them."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": webhooks.sign(secret, raw, method="sha256"),
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/tests",
    }
    return raw, headers


class Store:
    """A typed look into Redis, for assertions about what a delivery left behind."""

    def __init__(self, url: str) -> None:
        self._redis = redis.Redis.from_url(url, decode_responses=True)

    def close(self) -> None:
        self._redis.close()

    def _call(self, command: str, *args: Any) -> Any:
        return self._redis.execute_command(command, *args)  # type: ignore[no-untyped-call]

    def queued_jobs(self) -> list[str]:
        return sorted(self._call("ZRANGE", "arq:queue", 0, -1))

    def get(self, key: str) -> str | None:
        value: str | None = self._call("GET", key)
        return value

    def raw(self, key: str) -> bytes | None:
        """A value as bytes (arq stores jobs pickled)."""
        with redis.Redis.from_url(self._url()) as client:
            value: bytes | None = client.execute_command("GET", key)
            return value

    def hget(self, key: str, field: str) -> str | None:
        value: str | None = self._call("HGET", key, field)
        return value

    def smembers(self, key: str) -> set[str]:
        return set(self._call("SMEMBERS", key))

    def exists(self, key: str) -> bool:
        return bool(self._call("EXISTS", key))

    def zscore(self, key: str, member: str) -> float | None:
        score = self._call("ZSCORE", key, member)
        return None if score is None else float(score)

    def keys(self, pattern: str) -> list[str]:
        return sorted(self._call("KEYS", pattern))

    def ttl(self, key: str) -> int:
        """Seconds `key` has left to live (-1: no expiry, -2: no such key)."""
        return int(self._call("TTL", key))

    def _url(self) -> str:
        kwargs = self._redis.connection_pool.connection_kwargs
        return f"redis://{kwargs['host']}:{kwargs['port']}/{kwargs.get('db', 0)}"
