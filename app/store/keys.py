"""Every key Tiebreak keeps in Redis, what it holds and how long it lives: the keyspace at a
glance. Every module of :mod:`app.store` takes its keys from here, and no other module
names a key, a job id or a hash's field.

arq's own keys are here too, spelled out as arq 0.28's `arq.constants` spells them: Tiebreak
queues and claims jobs with scripts of its own (:mod:`app.store.queue`,
:mod:`app.store.wakeups`) that write them as arq does, and `tests/app/store/test_arq.py` checks
them against the installed arq. arq alone writes the rest of its keys (`arq:retry:*`, a
worker's health check).
"""

import re
from datetime import date
from enum import StrEnum

from app.events import HearingRequest, PullKey, PullRequestRef
from policies.config import Trigger

DAY = 24 * 3600
"""Seconds in a day: the unit of the TTLs below and of the transcripts' retention."""

OURS = "tiebreak:*"
"""A pattern (`SCAN MATCH`) of every key below, arq's aside."""

# -- the queue (app.store.queue) ----------------------------------------------------------------

REVIEW_QUEUE = "arq:queue"
"""zset (arq's default queue): reviews, commands and hearings, every job but the units', by id,
scored by the time (ms) each is due. The queue is named on every enqueue, so it never depends
on which Redis pool queues the job."""

UNIT_QUEUE = "tiebreak:units"
"""zset (arq's): units have their own queue and workers, so a review waiting for its units
never holds the slot a unit needs."""

HEAD_TTL = 30 * DAY
"""How long Redis remembers a pull request's latest head and job."""


def job(job_id: str = "") -> str:
    """string (arq's): a queued job, its function, arguments and enqueue time, serialized by
    arq's `serialize_job`; it lives until the job ends, and while it lives (or the job's result
    does) no job is queued under the same id. With no id, the prefix a script adds an id to
    (:data:`app.store.heads.SUPERSEDE`)."""
    return f"arq:job:{job_id}"


def result(job_id: str) -> str:
    """string (arq's): how a job ended and what it returned, kept as long as its function's
    `keep_result` says."""
    return f"arq:result:{job_id}"


def in_progress(job_id: str) -> str:
    """string (arq's): set by the worker that claimed the job, so no other starts it."""
    return f"arq:in-progress:{job_id}"


ABORTED = "arq:abort"
"""zset (arq's): ids of jobs asked to stop, scored by when; every worker cancels those it runs."""


# -- job ids: arq keeps one job per id, so an id says what may run only once ------------------


def review_job_id(
    ref: PullRequestRef, rerun: str | None = None, *, trigger: str | None = None
) -> str:
    """`review:owner/repo#7@sha`, with `:rerun` for a review asked for again, and `:ready` for
    the review of a draft marked ready (`trigger`): the head's own job may have declined it as
    a draft, and keeps its id as long as arq keeps its result. A review's job id is its run's id
    too, and its check run's `external_id` (:func:`reviewed_head`)."""
    if rerun is None and trigger == Trigger.READY_FOR_REVIEW:
        rerun = "ready"
    return f"review:{ref.key}@{ref.head_sha}" + (f":{rerun}" if rerun else "")


_REVIEW_JOB_ID = re.compile(
    r"review:(?P<owner>[A-Za-z0-9_.-]{1,100})/(?P<repo>[A-Za-z0-9_.-]{1,100})"
    r"#(?P<number>[0-9]{1,9})@(?P<sha>[0-9a-f]{40}(?:[0-9a-f]{24})?)(?::.*)?"
)


def reviewed_head(run_id: str, installation_id: int) -> PullRequestRef | None:
    """The pull request head a review run's id names (:func:`review_job_id`, every run's id
    since Tiebreak's first), as `installation_id` reaches it; None for an id of any other
    shape. The id is what Tiebreak's check runs carry as their `external_id`, so this reads
    the pull request a check run is on when GitHub does not say (a fork's)."""
    found = _REVIEW_JOB_ID.fullmatch(run_id)
    if found is None:
        return None
    return PullRequestRef(
        installation_id=installation_id,
        owner=found["owner"],
        repo=found["repo"],
        number=int(found["number"]),
        head_sha=found["sha"],
    )


def resume_job_id(run_id: str, resume: int) -> str:
    """`<run>:resume-2`: the `resume`th coordinator queued to pick up run `run_id`."""
    return f"{resumed_jobs(run_id)}{resume}"


def resumed_jobs(run_id: str) -> str:
    """`<run>:resume-`: what the id of every coordinator queued to pick up run `run_id`
    starts with."""
    return f"{run_id}:resume-"


_RESUME_JOB_ID = re.compile(r"(?P<run>.+):resume-[0-9]+")


def run_of(job_id: str) -> str:
    """The run review job `job_id` runs: the run a resumed coordinator picks up
    (:func:`resume_job_id`), else the run of the job's own id."""
    resumed = _RESUME_JOB_ID.fullmatch(job_id)
    return job_id if resumed is None else resumed["run"]


def commands_job_id(pull: PullKey, source: str) -> str:
    """`commands:owner/repo#7:source`: a comment's or a button's commands run once."""
    return f"commands:{pull.key}:{source}"


def hearing_job_id(request: HearingRequest) -> str:
    """`reply:owner/repo#7:comment`: a reply is heard once, whatever GitHub redelivers. The
    prefix is older than the job's name and stays, so a reply queued before a deploy is still
    not queued again after it."""
    return f"reply:{request.pull.key}:{request.comment.id}"


def unit_job_id(run_id: str, number: int, attempt: int) -> str:
    """`unit:<run>:3:1`: one attempt at one unit of a run."""
    return f"unit:{run_id}:{number}:{attempt}"


def unit_resume_job_id(run_id: str, number: int, attempt: int, token: str) -> str:
    """`unit:<run>:3:1:after:<token>`: attempt `attempt` at unit `number` taken up again once
    the workflow run `token`, the last it waited for, was settled (one settles last)."""
    return f"{unit_job_id(run_id, number, attempt)}:after:{token}"


def workflow_run_job_id(token: str, why: str) -> str:
    """`workflow-run:<token>:<why>`: one look at a workflow run for each reason (`run-<id>`,
    the webhook's of run <id> titled with the token, however often GitHub redelivers it, so
    that a run titled alike never makes another's delivery a duplicate; `poll-<minute>`,
    the janitor's)."""
    return f"workflow-run:{token}:{why}"


def wakeups(queue: str) -> str:
    """pub/sub channel (nothing kept): a message on it wakes the workers of `queue` at once,
    rather than at their next poll (:mod:`app.store.wakeups`)."""
    return f"tiebreak:wakeup:{queue}"


def head(pull: PullKey) -> str:
    """string: the pull request's latest head SHA, as pushes were heard to reach it
    (:mod:`app.store.heads`)."""
    return f"tiebreak:head:{pull.key}"


def current_job(pull: PullKey) -> str:
    """string: the id of the review job of the pull request's latest head: once its run was
    resumed, the job of the coordinator queued last to pick it up."""
    return f"tiebreak:job:{pull.key}"


# -- webhook deliveries and installations (app.store.deliveries) --------------------------------

DELIVERY_TTL = 7 * DAY
"""How long a delivery id is remembered. GitHub keeps the id on redelivery."""


def delivery(delivery_id: str) -> str:
    """string: set once a delivery is being handled, so a redelivery is not handled twice."""
    return f"tiebreak:delivery:{delivery_id}"


def installation(installation_id: int) -> str:
    """hash: the installation's account and whether it is active (kept until uninstalled)."""
    return f"tiebreak:installation:{installation_id}"


class InstallationField(StrEnum):
    """The fields of an installation's hash (app.store.records.InstallationStatus)."""

    ACCOUNT = "account"
    ACTIVE = "active"


def installation_repos(installation_id: int) -> str:
    """set: the repositories the installation covers, by full name."""
    return f"{installation(installation_id)}:repos"


# -- what is remembered per pull request (app.store.pulls) -------------------------------------

RUN_TTL = 14 * DAY
"""How long the latest run of a pull request, and a budget set for the next, are kept."""

STOP_TTL = 3600
"""How long a request to stop a review run waits for its job to see it."""

OPEN_CHECKS = "tiebreak:checks:open"
"""zset: check runs in progress (JSON), scored by the time past which the janitor completes
them."""


def latest_run(pull: PullKey) -> str:
    """string: the pull request's latest finished run (a RunRecord, diff included),
    zlib-compressed JSON."""
    return f"tiebreak:run:{pull.key}"


LANDING_TTL = 120
"""Seconds a job may hold a pull request's landing lock: longer than re-reading its latest
run, saving it and telling GitHub take, even with GitHub's retries; a worker that died holding
it holds nobody up for longer."""


def landing(pull: PullKey) -> str:
    """string (redis-py's lock): held while a job re-reads the pull request's latest run,
    saves its change to it and tells GitHub, so that changes land one at a time and a summary
    of an older run never lands after a newer one's."""
    return f"tiebreak:landing:{pull.key}"


def budget(pull: PullKey) -> str:
    """string: the token budget `/tiebreak budget` set for the pull request's next run."""
    return f"tiebreak:budget:{pull.key}"


def stop(run_id: str) -> str:
    """string: who asked to stop the review run `run_id`, whichever job runs it."""
    return f"tiebreak:stop:{run_id}"


# -- live review runs (app.store.live) ----------------------------------------------------------

LIVE = "tiebreak:live"
"""zset: live runs, by start time."""

LIVE_TTL = 2 * 3600
"""How long a run's keys live after their last write: longer than any review may take."""

FINISHED_TTL = 600
"""How long a finished run's keys are kept (a late unit or `tiebreak status` may look)."""


def run(run_id: str) -> str:
    """hash: the run's coordinator, its fields :class:`RunField` (app.store.records.RunStatus)."""
    return f"{LIVE}:{run_id}"


class RunField(StrEnum):
    """The fields of a run's hash."""

    STATE = "state"
    WORKER = "worker"
    UNITS = "units"
    STARTED = "started"
    REF = "ref"
    TRIGGER = "trigger"
    RESUMES = "resumes"
    CHECK_RUN = "check_run"


def plan(run_id: str) -> str:
    """string: what the run's coordinator needs (app.store.plans.RunPlan, JSON): small, no
    diff in it."""
    return f"{run(run_id)}:plan"


def diff(run_id: str) -> str:
    """string: the part of the pull request's diff the run covers, zlib-compressed; read by
    the coordinator alone."""
    return f"{run(run_id)}:diff"


def run_heartbeat(run_id: str) -> str:
    """string: the coordinator's heartbeat, its worker (expires unless renewed)."""
    return f"{run(run_id)}:hb"


def done(run_id: str) -> str:
    """list: unit numbers, pushed as units end (the coordinator's wake-ups)."""
    return f"{run(run_id)}:done"


def spent(run_id: str) -> str:
    """string: the tokens the run has spent of its ceiling (app.store.allowance.RunCeiling)."""
    return f"{run(run_id)}:spent"


def held(run_id: str) -> str:
    """hash: the reservations under way on the run's ceiling, by holder (one model call of
    one unit): each its tokens and its lease, the heartbeat key and value that keep it counted
    as under way (JSON; app.store.ceiling_line)."""
    return f"{run(run_id)}:held"


def line(run_id: str) -> str:
    """hash: the calls waiting for room under the run's ceiling, by holder: each its unit's
    rank (the riskiest first) and its lease, as in :func:`held` (JSON; app.store.ceiling_line)."""
    return f"{run(run_id)}:line"


def line_wake(run_id: str, holder: str = "") -> str:
    """list: the wake-ups of the call `holder` waiting in the run's line, pushed whenever
    room may have been made (a reservation settled, a call leaving the line); the call blocks
    on it. With no `holder`, the prefix the line's scripts add a holder to
    (app.store.ceiling_line)."""
    return f"{run(run_id)}:line-wake:{holder}"


def unit(run_id: str, n: int) -> str:
    """hash: unit n, its fields :class:`UnitField` and each agent's state under
    :func:`agent_field` (app.store.records.UnitStatus)."""
    return f"{run(run_id)}:u{n}"


class UnitField(StrEnum):
    """The fields of a unit's hash, but its agents'."""

    STATE = "state"
    ATTEMPT = "attempt"
    WORKER = "worker"
    ROUND = "round"
    CALLS = "calls"
    TOKENS = "tokens"
    ERROR = "error"
    FATAL = "fatal"
    UPDATED = "updated"


AGENT_FIELDS = "agent:"
"""What the field of each agent's state in a unit's hash starts with."""


def agent_field(role: str) -> str:
    """The field of a unit's hash holding agent `role`'s state."""
    return f"{AGENT_FIELDS}{role}"


def unit_heartbeat(run_id: str, n: int) -> str:
    """string: unit n's heartbeat, the attempt that beats (expires unless renewed)."""
    return f"{unit(run_id, n)}:hb"


def unit_plan(run_id: str, n: int) -> str:
    """string: what unit n's debate needs, its slice of the diff included
    (app.store.plans.UnitPlan, zlib-compressed JSON): all a unit job reads of the plan."""
    return f"{unit(run_id, n)}:plan"


def journal(run_id: str, n: int) -> str:
    """list: unit n's answered model calls (agents.debate.journal), replayed by a fresh attempt."""
    return f"{unit(run_id, n)}:journal"


def outcome(run_id: str, n: int) -> str:
    """string: unit n's outcome, set once."""
    return f"{unit(run_id, n)}:outcome"


def unit_tests(run_id: str, n: int) -> str:
    """hash: unit n's findings' test runs, by digest (agents.debate.recorded_tests.run_digest), each
    a RecordedRun (JSON), replayed by a later attempt as the journal is."""
    return f"{unit(run_id, n)}:tests"


def unit_dispatched(run_id: str, n: int) -> str:
    """hash: unit n's test runs dispatched to a workflow, by digest, each its run token: a
    later attempt waits for them rather than dispatching them again."""
    return f"{unit(run_id, n)}:dispatched"


def unit_awaited(run_id: str, n: int) -> str:
    """set: the tokens of the workflow runs unit n waits for; the one whose result empties it
    takes the unit up again."""
    return f"{unit(run_id, n)}:awaited"


def test_runs(run_id: str) -> str:
    """string (counter): the findings' test runs a run dispatched to a workflow, against the
    config's `verify.max_runs`."""
    return f"{run(run_id)}:test-runs"


def run_keys(run_id: str, units: int) -> list[str]:
    """Every key of a run with `units` units, but the heartbeats (they expire on their own)."""
    keys = [run(run_id), plan(run_id), diff(run_id), done(run_id), spent(run_id)]
    keys += [held(run_id), line(run_id), test_runs(run_id)]
    for n in range(units):
        keys += [unit(run_id, n), unit_plan(run_id, n), journal(run_id, n), outcome(run_id, n)]
        keys += [unit_tests(run_id, n), unit_dispatched(run_id, n), unit_awaited(run_id, n)]
    return keys


# -- findings' tests run in the repository's Actions (app.store.workflow_runs) ------------------

WORKFLOW_RUNS = "tiebreak:workflow-runs"
"""zset: the tokens of workflow runs dispatched and not yet settled, scored by the time (Unix)
past which each counts as not run (the janitor settles those, and polls the others)."""


def workflow_run(token: str) -> str:
    """string: a dispatched workflow run not yet settled (app.store.workflow_runs.PendingRun,
    JSON): the unit waiting for it and what it runs."""
    return f"tiebreak:workflow-run:{token}"


# -- transcripts (app.store.transcripts) --------------------------------------------------------


def transcript(run_id: str) -> str:
    """string: a finished run's transcript (zlib-compressed JSON, with only the files of the
    diff its findings and patches are about); kept as long as the operator chose."""
    return f"tiebreak:transcript:{run_id}"


# -- token allowances (app.store.allowance) ----------------------------------------------------

ALLOWANCE_TTL = 2 * DAY
"""How long a day's counter outlives its last write: yesterday's is still there for a call
that settles after midnight."""


def allowance(installation_id: int, day: date) -> str:
    """string: the tokens an installation spent on one UTC day, reservations included."""
    return f"tiebreak:allowance:{installation_id}:{day.isoformat()}"


# -- the fleet's counters (app.store.counters) --------------------------------------------------

METRICS = "tiebreak:metrics"
"""hash: field, a counter and its labels (JSON); value, the fleet's total."""


# -- people's replies on finding threads (app.store.hearings) -----------------------------------

HEARD_TTL = 30 * DAY
"""How long a pull request's heard replies are remembered: as long as its head is."""


def reply_seen(pull: PullKey, comment_id: int) -> str:
    """string: set once a reply (a review comment) is taken up, so that a redelivery or a
    second job never handles it again."""
    return f"tiebreak:reply:{pull.key}:{comment_id}"


HEARING_TTL = 5 * 60
"""Seconds a reply's hearing may hold its thread: as long as the hearing job may run."""


def hearing(pull: PullKey, thread: int) -> str:
    """string (redis-py's lock): held while a reply in the thread starting with comment
    `thread` is weighed and landed, so that the next reply there waits, then finds the finding
    as the first left it."""
    return f"tiebreak:hearing:{pull.key}:{thread}"


def replies_heard(pull: PullKey) -> str:
    """string: how many replies the pull request's threads have had heard (the config's
    `conversation.max_replies` caps it)."""
    return f"tiebreak:replies:{pull.key}"


def replies_capped(pull: PullKey) -> str:
    """string: set once the note that the pull request heard its last reply is posted."""
    return f"tiebreak:replies:{pull.key}:capped"


# -- what a repository's people taught Tiebreak (app.store.learnings) ---------------------------
# Keyed by GitHub's id of the repository, never its name: a repository deleted and created again
# under the same name is another repository, and reads none of the first one's learnings.


def learnings(repository_id: int) -> str:
    """hash, no TTL, at most `policies.learnings.MAX_LEARNINGS` fields: field, a learning's
    number in the repository; value, the learning (JSON). Numbers are never reused, so
    `/tiebreak forget N` means the learning `/tiebreak learnings` showed as N."""
    return f"tiebreak:learnings:repo:{repository_id}"


def learnings_counter(repository_id: int) -> str:
    """string, no TTL: the last number given to a learning of the repository, its pull
    requests' own included."""
    return f"tiebreak:learnings:repo:{repository_id}:last"


PULL_LEARNINGS_TTL = 30 * DAY
"""How long a pull request keeps the learnings it alone reads after the last was taught: as
long as its head is remembered."""


def pull_learnings(repository_id: int, number: int) -> str:
    """hash, `PULL_LEARNINGS_TTL`, at most `policies.learnings.MAX_PULL_LEARNINGS` fields: the
    learnings pull request `number` alone reads (taught by someone who may not write to the
    repository), numbered as the repository's are."""
    return f"tiebreak:learnings:repo:{repository_id}:pull:{number}"


TAUGHT_TTL = 30 * DAY
"""How long a finding's thread is remembered to have taught: as long as its pull request's
head is."""


def taught(repository_id: int, thread: int) -> str:
    """string: set once the review thread starting with comment `thread` taught the repository
    a learning by a 👎, so the 👎 still there at later reviews teaches it no second time."""
    return f"tiebreak:learnings:repo:{repository_id}:taught:{thread}"


LEARNING_REPOSITORIES = "tiebreak:learnings:names"
"""hash, no TTL: field, a repository's `owner/name` in lower case; value, the id of the latest
repository of that name that was taught something (how `tiebreak learnings export --repo
OWNER/NAME` finds its learnings)."""


def named_learnings(full_name: str) -> str:
    """hash, no TTL: a repository's learnings as an older Tiebreak kept them, under its
    `owner/name` (fields and values as :func:`learnings`'). Never written now; moved to
    :func:`learnings` by the first job of a repository of that name that shows them its own."""
    return f"tiebreak:learnings:{full_name.lower()}"


def named_learnings_counter(full_name: str) -> str:
    """string, no TTL: the last number of :func:`named_learnings`, moved with them."""
    return f"tiebreak:learnings:{full_name.lower()}:last"


def named_taught(full_name: str, thread: int) -> str:
    """string, TTL `TAUGHT_TTL` when written: :func:`taught` as an older Tiebreak wrote it,
    still read so that a 👎 it learned from teaches no second time."""
    return f"tiebreak:learnings:{full_name.lower()}:taught:{thread}"
