"""`issue_comment` and `pull_request_review_comment`: slash commands and replies from people.

Only new comments on pull requests count, and never a bot's — above all not Tiebreak's own,
so nothing Tiebreak writes can trigger it again; an edit is no new comment. Who may run a
command is checked in the worker, which may call GitHub; here the comment is only parsed and
queued. A reply in a review thread that carries no command is queued to be heard, unless it
brings a fix (the next push's review sees that); whether the thread is one of Tiebreak's and
the person may be heard is the worker's to check.
"""

from app.events import (
    CommandCall,
    CommandRequest,
    Comment,
    CommentRef,
    HearingRequest,
    IssueCommentPayload,
    PullKey,
    ReviewCommentPayload,
    User,
    is_bot,
)
from app.slash import Command, carries_fix, parse_commands
from app.telemetry.logs import bind
from app.web.dispatch import Delivery, DeliveryOutcome, HandlerDeps, WebhookRouter

router = WebhookRouter()


@router.on("issue_comment", "created")
async def on_conversation_comment(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(IssueCommentPayload)
    if payload.issue.pull_request is None:
        return DeliveryOutcome.IGNORED  # a comment on an issue, not a pull request
    pull = PullKey(
        installation_id=payload.installation.id,
        owner=payload.repository.owner.login,
        repo=payload.repository.name,
        number=payload.issue.number,
        repository_id=payload.repository.id,
    )
    where = CommentRef(id=payload.comment.id, kind="issue", thread_id=payload.comment.id)
    return await _queue(deps, pull, where, payload.comment, payload.sender)


@router.on("pull_request_review_comment", "created")
async def on_review_thread_comment(delivery: Delivery, deps: HandlerDeps) -> DeliveryOutcome:
    payload = delivery.parse(ReviewCommentPayload)
    pull = PullKey(
        installation_id=payload.installation.id,
        owner=payload.repository.owner.login,
        repo=payload.repository.name,
        number=payload.pull_request.number,
        repository_id=payload.repository.id,
    )
    thread = payload.comment.in_reply_to_id or payload.comment.id
    where = CommentRef(id=payload.comment.id, kind="review", thread_id=thread)
    return await _queue(deps, pull, where, payload.comment, payload.sender)


async def _queue(
    deps: HandlerDeps, pull: PullKey, where: CommentRef, comment: Comment, sender: User
) -> DeliveryOutcome:
    bind(repository=pull.full_name, pull_number=pull.number)
    if is_bot(sender) or is_bot(comment.user):
        return DeliveryOutcome.IGNORED
    parsed = parse_commands(comment.body or "")
    if not parsed:
        return await _queue_hearing(deps, pull, where, comment)
    calls = [
        CommandCall(name=str(p.name), argument=p.argument, text=p.text)
        if isinstance(p, Command)
        else CommandCall(name=None, text=p.text)
        for p in parsed
    ]
    request = CommandRequest(
        pull=pull,
        login=comment.user.login,
        association=comment.author_association,
        comment=where,
        calls=calls,
    )
    queued = await deps.queue.enqueue_commands(request, f"{where.kind}-comment-{where.id}")
    return DeliveryOutcome.ENQUEUED if queued else DeliveryOutcome.DUPLICATE


async def _queue_hearing(
    deps: HandlerDeps, pull: PullKey, where: CommentRef, comment: Comment
) -> DeliveryOutcome:
    body = comment.body or ""
    if comment.in_reply_to_id is None or not body.strip() or carries_fix(body):
        return DeliveryOutcome.IGNORED
    request = HearingRequest(pull=pull, login=comment.user.login, comment=where, text=body)
    queued = await deps.queue.enqueue_hearing(request)
    return DeliveryOutcome.ENQUEUED if queued else DeliveryOutcome.DUPLICATE
