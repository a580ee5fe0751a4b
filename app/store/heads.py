"""Each pull request's latest head, as Redis knows it, and which push supersedes which.

GitHub does not promise to deliver webhooks in the order their events happened, and the
deliveries a web server handles at the same moment may reach Redis in either order
(:mod:`app.store.pipelining`): the order deliveries arrive in cannot say which head is the
newer. What can is the head a push replaced, which its delivery names (`before`): a push from
the latest head Redis knows is newer than it. Such a push supersedes it: its head becomes the
pull request's latest, and the review of the head it replaced is aborted. So does a review of
the latest head itself, asked for again. Any other delivery (a push from a head Redis has not
heard of, which came first, or was heard out of order; a pull request opened or reopened; a
review asked for on another head) supersedes nothing: its review is queued all the same, and
when it starts, GitHub says whether its head is still the pull request's
(:mod:`app.jobs.review`). A review GitHub says is of the current head, while Redis knows
another, claims the latest head for its own, so that the next push continues from it. A run
picked up by a new coordinator, its own having died, keeps its place: the new coordinator's
job becomes the current one, which a push aborts and `/tiebreak stop` stops.

The pull request's `updated_at` cannot order pushes either: it counts whole seconds, and moves
on every edit.
"""

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from app.events import PullKey, PullRequestRef
from app.store import keys
from app.store.redis_typing import text

SUPERSEDE = """
local latest = redis.call('get', KEYS[5])
if not latest or latest == ARGV[6] or latest == ARGV[8] then
    redis.call('set', KEYS[5], ARGV[6], 'EX', ARGV[7])
    local previous = redis.call('getset', KEYS[6], ARGV[4])
    redis.call('expire', KEYS[6], ARGV[7])
    if previous and previous ~= ARGV[4] and redis.call('exists', ARGV[9] .. previous) == 1 then
        redis.call('zadd', KEYS[4], ARGV[3], previous)
    end
end
"""
"""Before a review is queued (the start of :data:`app.store.queue.ENQUEUE`, whose keys and
arguments come first, arq's abort set its key 4): unless Redis knows a latest head that the
review's head neither is nor replaced, the head becomes the pull request's latest and its job
the current one, and arq is asked to abort the job it replaces (a queued job is dropped, a
running one cancelled) if that job is still kept (`arq:job:<id>`, from its queueing until it
ends, queued, running or to be retried). arq takes an id off its abort set only as it starts
or ends that job, in the same transaction that drops the job's key: an id added for a job that
ended would stay for good, and cancel at its start a later job of the same id (a head pushed
again once its review's result expired). Keys 5 and 6: the head, the current job; arguments 6
to 9: the head, the keys' time to live, the head it replaced (empty when unknown), the prefix
of a job's key."""

RESUME = """
local current = redis.call('get', KEYS[5])
if current == ARGV[6] or (current and string.sub(current, 1, #ARGV[7]) == ARGV[7]) then
    redis.call('set', KEYS[5], ARGV[4], 'EX', ARGV[8])
end
"""
"""Before a coordinator picking up a run is queued (the start of :data:`app.store.queue.ENQUEUE`,
whose keys and arguments come first, argument 4 its job id): if the pull request's current job
is one of the run's (its first, or a coordinator queued before to pick it up), the new
coordinator's job becomes the current one. Key 5: the current job; arguments 6 to 8: the run,
what its resumed coordinators' job ids start with, the key's time to live."""

CLAIM = """
if (redis.call('get', KEYS[1]) or '') ~= ARGV[1] then
    return 0
end
redis.call('set', KEYS[1], ARGV[2], 'EX', ARGV[4])
redis.call('set', KEYS[2], ARGV[3], 'EX', ARGV[4])
return 1
"""
"""Unless the latest head changed since it was read, make a head the latest and its job the
current one (keys: the head, the current job; arguments: the head read, the new head, its
job, the time to live). Nothing is aborted: the review of the head it replaces stops itself
when GitHub tells it so."""


class Heads:
    """The pull requests' latest heads, on one Redis."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def latest(self, pull: PullKey) -> str | None:
        """The latest head pushes were heard to reach, if Redis knows one."""
        head = await self.redis.get(keys.head(pull))
        return None if head is None else text(head)

    async def superseded(self, ref: PullRequestRef) -> bool:
        """Whether Redis knows a latest head other than `ref`'s."""
        latest = await self.latest(ref)
        return latest is not None and latest != ref.head_sha

    async def claim(self, ref: PullRequestRef, job_id: str, heard: str) -> bool:
        """Make `ref`'s head the latest, and `job_id` its review, unless the latest head is
        no longer `heard` (another delivery or review moved it meanwhile)."""
        # Registered here, not when made: a claim is rare, reading the latest head is not.
        script: AsyncScript = self.redis.register_script(CLAIM)
        claimed = await script(
            keys=[keys.head(ref), keys.current_job(ref)],
            args=[heard, ref.head_sha, job_id, keys.HEAD_TTL],
        )
        return int(claimed) == 1
