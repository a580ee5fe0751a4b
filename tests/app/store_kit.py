"""A typed look into Redis, for the app tests' assertions about what a delivery or a job
left behind."""

from typing import Any

import redis


class Store:
    """A typed look into Redis, for assertions about what a delivery left behind."""

    def __init__(self, url: str) -> None:
        self._redis = redis.Redis.from_url(url, decode_responses=True)

    def close(self) -> None:
        self._redis.close()

    def _call(self, command: str, *args: Any) -> Any:
        return self._redis.execute_command(command, *args)  # type: ignore[no-untyped-call]

    def drop_job(self, job_id: str) -> None:
        """As a worker that ran the job and kept no result does."""
        self._call("DEL", "arq:job:" + job_id)
        self._call("ZREM", "arq:queue", job_id)

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
