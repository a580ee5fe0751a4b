"""`installation` and `installation_repositories`: who installed Tiebreak, and where.

Recorded in Redis, so operators can see where the App is installed; reviews themselves only
need the installation id each delivery carries.
"""

from app.events import InstallationPayload
from app.web.dispatch import Delivery, HandlerDeps, Outcome, WebhookRouter

router = WebhookRouter()


def installation_key(installation_id: int) -> str:
    return f"tiebreak:installation:{installation_id}"


@router.on("installation", "created", "new_permissions_accepted", "unsuspend")
async def on_installation_created(delivery: Delivery, deps: HandlerDeps) -> Outcome:
    payload = delivery.parse(InstallationPayload)
    key = installation_key(payload.installation.id)
    async with deps.queue.redis.pipeline(transaction=True) as pipe:
        pipe.hset(key, mapping={"account": payload.installation.account.login, "active": "1"})
        if payload.repositories:
            pipe.sadd(f"{key}:repos", *(r.full_name for r in payload.repositories))
        await pipe.execute()
    return Outcome.RECORDED


@router.on("installation", "deleted", "suspend")
async def on_installation_removed(delivery: Delivery, deps: HandlerDeps) -> Outcome:
    payload = delivery.parse(InstallationPayload)
    key = installation_key(payload.installation.id)
    async with deps.queue.redis.pipeline(transaction=True) as pipe:
        if delivery.action == "deleted":
            pipe.delete(key, f"{key}:repos")
        else:
            pipe.hset(key, "active", "0")
        await pipe.execute()
    return Outcome.RECORDED


@router.on("installation_repositories", "added", "removed")
async def on_repositories_changed(delivery: Delivery, deps: HandlerDeps) -> Outcome:
    payload = delivery.parse(InstallationPayload)
    repos = f"{installation_key(payload.installation.id)}:repos"
    async with deps.queue.redis.pipeline(transaction=True) as pipe:
        if payload.repositories_added:
            pipe.sadd(repos, *(r.full_name for r in payload.repositories_added))
        if payload.repositories_removed:
            pipe.srem(repos, *(r.full_name for r in payload.repositories_removed))
        await pipe.execute()
    return Outcome.RECORDED
