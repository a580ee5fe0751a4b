"""Webhook deliveries being handled, and the installations they tell of.

A delivery id is remembered for a week (:mod:`app.store.keys`): GitHub keeps the id when it
redelivers, so a redelivery of a delivery already handled is recognised and acknowledged
without being handled twice. Installations are recorded so that operators can see where the
App is installed; reviews need only the installation id each delivery carries.
"""

from collections.abc import Iterable

from redis.asyncio import Redis

from app.store import keys
from app.store.pipelining import AutoPipeline
from app.store.records import InstallationStatus
from app.store.redis_typing import reply


class Deliveries:
    """The delivery ids being handled or handled, in Redis."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._pipeline = AutoPipeline(redis)

    async def first_sighting(self, delivery_id: str) -> bool:
        """Remember `delivery_id`; False if it was remembered already."""
        key = keys.delivery(delivery_id)
        # Sent with the other deliveries being remembered at the same moment.
        return bool(
            await self._pipeline.call(
                lambda pipe: pipe.set(key, "1", nx=True, ex=keys.DELIVERY_TTL)
            )
        )

    async def forget(self, delivery_id: str) -> None:
        """Let a redelivery of a delivery that was not handled be handled."""
        await self.redis.delete(keys.delivery(delivery_id))


class Installations:
    """Where the App is installed: each installation's account and repositories."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def installed(self, installation_id: int, account: str, repos: Iterable[str]) -> None:
        """An installation was created, accepted new permissions or was unsuspended."""
        repos = list(repos)
        async with self.redis.pipeline(transaction=True) as pipe:
            installed = InstallationStatus(account=account, active=True)
            pipe.hset(keys.installation(installation_id), mapping=installed.fields())
            if repos:
                pipe.sadd(keys.installation_repos(installation_id), *repos)
            await pipe.execute()

    async def suspended(self, installation_id: int) -> None:
        suspended = InstallationStatus(active=False)
        await reply(self.redis.hset(keys.installation(installation_id), mapping=suspended.fields()))

    async def deleted(self, installation_id: int) -> None:
        await self.redis.delete(
            keys.installation(installation_id), keys.installation_repos(installation_id)
        )

    async def repositories_changed(
        self, installation_id: int, added: Iterable[str], removed: Iterable[str]
    ) -> None:
        added, removed = list(added), list(removed)
        repos = keys.installation_repos(installation_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            if added:
                pipe.sadd(repos, *added)
            if removed:
                pipe.srem(repos, *removed)
            await pipe.execute()
