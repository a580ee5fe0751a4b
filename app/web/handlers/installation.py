"""`installation` and `installation_repositories`: who installed Tiebreak, and where.

Recorded in Redis (:class:`app.store.deliveries.Installations`), so operators can see where the
App is installed; reviews themselves only need the installation id each delivery carries.
"""

from app.events import InstallationPayload
from app.web.dispatch import Delivery, DeliveryOutcome, HandlerDeps, WebhookRouter

router = WebhookRouter()


@router.on("installation", "created", "new_permissions_accepted", "unsuspend")
async def on_installation_created(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(InstallationPayload)
    installation = payload.installation
    repos = (r.full_name for r in payload.repositories)
    await deps.installations.installed(installation.id, installation.account.login, repos)
    return DeliveryOutcome.RECORDED


@router.on("installation", "deleted", "suspend")
async def on_installation_removed(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(InstallationPayload)
    if delivery.action == "deleted":
        await deps.installations.deleted(payload.installation.id)
    else:
        await deps.installations.suspended(payload.installation.id)
    return DeliveryOutcome.RECORDED


@router.on("installation_repositories", "added", "removed")
async def on_repositories_changed(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(InstallationPayload)
    await deps.installations.repositories_changed(
        payload.installation.id,
        added=(r.full_name for r in payload.repositories_added),
        removed=(r.full_name for r in payload.repositories_removed),
    )
    return DeliveryOutcome.RECORDED
