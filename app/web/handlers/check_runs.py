"""`check_run` and `check_suite`: the buttons on Tiebreak's check run, and "Re-run".

GitHub shows a check run's buttons only to people with write access, so a button press needs
no further permission check. "Arbitrate" sends the open findings to the arbiter, "Accept"
resolves them; re-running a check run or suite reviews its head again.

GitHub names the pull requests a check run is on only when their head is in the repository:
for a pull request from a fork, `pull_requests` is empty. The check run's `external_id`, the
id of the review run that made it (:func:`app.store.keys.reviewed_head`), names it then — once
the delivery's repository and head sha agree with it: the id is Tiebreak's, but what arrives
is GitHub's, and an id of another shape (another App's check run) or of another repository or
head steers nothing.
"""

from app.events import CheckRunPayload, CheckSuitePayload, CommandCall, CommandRequest, PullKey
from app.slash import CommandName
from app.store.keys import reviewed_head
from app.telemetry.logs import bind
from app.web.dispatch import Delivery, DeliveryOutcome, HandlerDeps, WebhookRouter

router = WebhookRouter()

BUTTONS = {"arbitrate": CommandName.ARBITRATE, "accept": CommandName.RESOLVE}
"""Action identifier → the command it runs."""


@router.on("check_run", "requested_action")
async def on_button(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(CheckRunPayload)
    pulls = _check_run_pulls(payload)
    _bind(payload, pulls)
    action = payload.requested_action
    command = BUTTONS.get(action.identifier) if action else None
    if command is None or not pulls:
        return DeliveryOutcome.IGNORED
    queued = False
    for pull in pulls:
        request = CommandRequest(
            pull=pull,
            login=payload.sender.login,
            calls=[CommandCall(name=str(command))],
        )
        queued |= await deps.queue.enqueue_commands(request, f"button-{delivery.id}")
    return DeliveryOutcome.ENQUEUED if queued else DeliveryOutcome.DUPLICATE


@router.on("check_run", "rerequested")
async def on_check_run_rerun(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(CheckRunPayload)
    pulls = _check_run_pulls(payload)
    _bind(payload, pulls)
    return await _review_again(deps, pulls, payload.check_run.head_sha, delivery.id)


@router.on("check_suite", "rerequested")
async def on_check_suite_rerun(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(CheckSuitePayload)
    pulls = [_pull(payload, pr.number) for pr in payload.check_suite.pull_requests]
    _bind(payload, pulls)
    return await _review_again(deps, pulls, payload.check_suite.head_sha, delivery.id)


async def _review_again(
    deps: HandlerDeps, pulls: list[PullKey], head_sha: str, delivery_id: str
) -> DeliveryOutcome:
    queued = False
    for pull in pulls:
        queued |= await deps.queue.enqueue_review(pull.at(head_sha), rerun=delivery_id)
    return DeliveryOutcome.ENQUEUED if queued else DeliveryOutcome.IGNORED


def _bind(payload: CheckRunPayload | CheckSuitePayload, pulls: list[PullKey]) -> None:
    """The repository, and the pull request when the check is on exactly one, go on the
    delivery's log lines."""
    bind(repository=_full_name(payload), pull_number=pulls[0].number if len(pulls) == 1 else None)


def _check_run_pulls(payload: CheckRunPayload) -> list[PullKey]:
    """The pull requests the check run is on: those GitHub names, else (a fork's) the one its
    `external_id` names, if that is Tiebreak's run of this repository at this head."""
    check_run = payload.check_run
    if check_run.pull_requests:
        return [_pull(payload, pr.number) for pr in check_run.pull_requests]
    named = reviewed_head(check_run.external_id or "", payload.installation.id)
    if named is None or named.head_sha != check_run.head_sha:
        return []
    if named.full_name.lower() != _full_name(payload).lower():
        return []
    return [_pull(payload, named.number)]


def _full_name(payload: CheckRunPayload | CheckSuitePayload) -> str:
    return f"{payload.repository.owner.login}/{payload.repository.name}"


def _pull(payload: CheckRunPayload | CheckSuitePayload, number: int) -> PullKey:
    return PullKey(
        installation_id=payload.installation.id,
        owner=payload.repository.owner.login,
        repo=payload.repository.name,
        number=number,
        repository_id=payload.repository.id,
    )
