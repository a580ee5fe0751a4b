"""Workers that pick a job up as soon as it is queued, without polling fast.

arq's worker looks at its queue every `poll_delay` seconds, so each hop of a review (webhook →
review job → unit jobs) waits half that on average, and a short delay costs CPU while nothing
happens. Here a job is announced on its queue's wake-up channel as it is queued (in the same
step: see :mod:`app.store.queue`), anything else a worker should see at once is announced by
:func:`ring`, and a :class:`PromptWorker` listens:
it looks at its queue when a message comes, when one of its own jobs ends (a slot is free for
the next job waiting), and otherwise every `idle_poll` seconds, for what nobody announces (a
job deferred to later, arq re-queueing a job after a shutdown, a cron job; in burst mode,
which ends when the queue is empty, every :data:`BURST_POLL`). Waiting for a message is a
blocking read: an idle worker uses next to no CPU.

:class:`PromptWorker` subclasses arq 0.28's `Worker` (`arq/worker.py`, hence the pin `<0.29`)
and overrides two of its methods, no more than waking at once and starting a review's units
together need:

* `_poll_iteration` (private): arq's own runs, then the worker waits for a wake-up instead of
  arq's `poll_delay` (given arq as 0);
* `start_jobs(job_ids)` (public, undocumented): arq claims each job in a transaction of its
  own (`WATCH` its in-progress key, `EXISTS`, `ZSCORE`, then `PSETEX` in `MULTI`); here one
  script (:data:`CLAIM`) claims the batch with arq's test: a job is claimed unless it is in
  progress (`arq:in-progress:<id>`), gone from the queue, or not due (score > now), and its
  in-progress key lives `in_progress_timeout_s`. A claimed job then runs as arq runs it.

The override uses these members of arq's `Worker`: `sem` (a semaphore of `max_jobs + 1`),
`job_counter`, `max_jobs`, `tasks`, `loop`, `pool`, `queue_name`, `burst`,
`in_progress_timeout_s`, `run_job(job_id, score)` and `_release_sem_dec_counter_on_complete`
(private). `tests/app/store/test_arq.py` checks, against the installed arq, that a job claimed
here reads as in progress to arq's `Job.status()` until its result is kept, and that arq's
own abort cancels it; `tests/app/store/test_wakeups.py` that a job running elsewhere or not
due is left alone.
"""

import asyncio
import contextlib
from typing import Any

from arq import Worker
from arq.utils import timestamp_ms
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.commands.core import AsyncScript

from app.store import keys

BURST_POLL = 0.05
"""Seconds a worker in burst mode waits at most between looks at its queue (it ends when the
queue is empty, so it waits for no message long); a wake-up ends the wait sooner."""


async def ring(redis: Redis, *queues: str) -> None:
    """Wake the workers of each queue: a job was queued or asked to stop."""
    async with redis.pipeline(transaction=False) as pipe:
        for queue in queues:
            pipe.publish(keys.wakeups(queue), b"")
        await pipe.execute()


CLAIM = """
local claimed = {}
for i = 1, #KEYS - 1 do
    claimed[i] = ''
    if redis.call('exists', KEYS[i]) == 0 then
        local score = redis.call('zscore', KEYS[#KEYS], ARGV[i + 2])
        if score and tonumber(score) <= tonumber(ARGV[1]) then
            redis.call('psetex', KEYS[i], ARGV[2], '1')
            claimed[i] = score
        end
    end
end
return claimed
"""
"""arq's claim on jobs, atomic for each (keys: their in-progress keys, then the queue;
arguments: the time, the in-progress timeout, their ids): unless a job is in progress, or gone
from the queue, or not due yet, mark it in progress; each job's score, or '' for one not
claimed."""


class PromptWorker(Worker):
    """An arq worker woken by :func:`ring` and by the end of its own jobs; it looks at its
    queue at least every `idle_poll` seconds."""

    def __init__(self, *args: Any, idle_poll: float, **kwargs: Any) -> None:
        # arq's own pause between looks would delay each wake-up: the wait is ours.
        super().__init__(*args, poll_delay=0, **kwargs)
        self.idle_poll = idle_poll
        self._wake = asyncio.Event()
        self._listening: asyncio.Task[None] | None = None
        self._pubsub: PubSub | None = None
        self._claim: AsyncScript | None = None

    def wake(self) -> None:
        """Look at the queue now (a stop in burst mode ends the loop at this look)."""
        self._wake.set()

    async def _poll_iteration(self) -> None:
        if self._listening is None:
            await self._listen()
        await super()._poll_iteration()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), BURST_POLL if self.burst else self.idle_poll)
        # Cleared before the next look at the queue, which sees every job announced so far.
        self._wake.clear()

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        """arq's `start_jobs`, the jobs that have a free slot claimed together by one script
        where arq takes four round trips for each (the units of a review start together),
        and each job's end waking the worker."""
        if self._claim is None:
            self._claim = self.pool.register_script(CLAIM)
        waiting = [raw.decode() for raw in job_ids]
        while waiting:
            slots = await self._free_slots(len(waiting))
            room = min(slots, self.max_jobs - self.job_counter)
            for _ in range(slots - max(room, 0)):
                self.sem.release()
            if room <= 0:
                return
            batch, waiting = waiting[:room], waiting[room:]
            self.job_counter += room
            scores = await self._claim(
                keys=[*(keys.in_progress(job_id) for job_id in batch), self.queue_name],
                args=[timestamp_ms(), int(self.in_progress_timeout_s * 1000), *batch],
            )
            for job_id, score in zip(batch, scores, strict=True):
                if not score:  # running elsewhere, done, or deferred meanwhile
                    self.job_counter -= 1
                    self.sem.release()
                    continue
                task = self.loop.create_task(self.run_job(job_id, int(float(score))))
                task.add_done_callback(lambda _: self._release_sem_dec_counter_on_complete())
                # After arq's own callback, which frees the job's slot for the next job waiting.
                task.add_done_callback(lambda _: self._wake.set())
                self.tasks[job_id] = task

    async def _free_slots(self, wanted: int) -> int:
        """Take a slot, waiting for one, then as many more as are free at once, up to
        `wanted`; how many were taken."""
        await self.sem.acquire()
        taken = 1
        while taken < wanted and not self.sem.locked():
            await self.sem.acquire()  # free: returns at once
            taken += 1
        return taken

    async def _listen(self) -> None:
        self._pubsub = self.pool.pubsub(ignore_subscribe_messages=True)
        await self._pubsub.subscribe(keys.wakeups(self.queue_name))
        self._listening = asyncio.create_task(self._receive(self._pubsub))

    async def _receive(self, pubsub: PubSub) -> None:
        async for _ in pubsub.listen():
            self._wake.set()

    async def close(self) -> None:
        listening, self._listening = self._listening, None
        if listening is not None:
            listening.cancel()
            await asyncio.gather(listening, return_exceptions=True)
        if self._pubsub is not None:
            await self._pubsub.aclose()  # type: ignore[no-untyped-call]
            self._pubsub = None
        await super().close()
