"""The hearing job: a person's reply on one of Tiebreak's finding threads, heard.

The reply must be on a thread Tiebreak started (its first comment the App's own, carrying a
finding's fingerprint), about a finding the latest review of the current head left open, and
by the pull request's author or someone with write access; anyone else's reply is left alone,
unanswered. Each reply is taken up once, whatever GitHub redelivers. The tester weighs it
(:mod:`agents.debate.hearing`): accepted, the finding is withdrawn, the thread resolved and the
summary, check run and label follow; rejected, one reply says why and offers the arbiter. The
rule an accepted reply taught is kept for the repository when its author may write to it, and
for that pull request alone otherwise (the author of a pull request from a fork is heard on
it, and teaches no other). A
pull request has at most `conversation.max_replies` replies heard, each under the
installation's daily allowance; the first reply past the cap gets one note.

The replies of one thread are weighed one at a time, so a finding the first withdrew is not
weighed again. The tester is asked holding no lock on the run; the verdict then lands on the
run as it stands (:mod:`agents.rebase`), with what other replies and commands changed since,
under the pull request's landing lock. It lands nowhere if a newer review did meanwhile (one
reply says so) or if the finding was settled meanwhile (nothing is said).
"""

import logging
from typing import Any

from agents.debate.engine import Debate
from agents.debate.hearing import PersonReply, Verdict
from agents.diff import Diff
from agents.errors import LLMFatal, NotHeard
from agents.rebase import FindingKey, rebase
from agents.review import Review
from app.events import HearingRequest
from app.github.installation_client import InstallationClient
from app.jobs.deps import WorkerDeps, deps_of
from app.jobs.job_results import JobResult
from app.publishing import hearing_text, learnings_text
from app.publishing.plan import plan
from app.publishing.publication import RunRecord
from app.publishing.rereview import PostedThread
from app.review.collaborators import Permissions
from app.review.landing import restate
from app.review.posted import posted_threads
from app.review.resolutions import heeded
from app.review.teaching import repository_of, teach, thread_url
from app.store.pulls import StoredRun
from app.telemetry.logs import bind, log_context
from policies.budget import MIN_CEILING, TokenCeiling
from policies.learnings import LearningSource

log = logging.getLogger(__name__)


async def run_hearing(ctx: dict[str, Any], request_data: dict[str, Any]) -> JobResult:
    """arq's entry point: hear one person's reply in a review thread."""
    request = HearingRequest.model_validate(request_data)
    return await HearingRun(deps_of(ctx), request).run()


class HearingRun:
    def __init__(self, deps: WorkerDeps, request: HearingRequest) -> None:
        self.deps = deps
        self.request = request
        self.pull_key = request.pull
        self.github: InstallationClient = deps.github.installation(request.pull.installation_id)
        self.permissions = Permissions(self.github, request.pull)
        self.thread: PostedThread | None = None
        """The thread the reply is in, as the hearing found it."""
        self.thread_url = ""

    async def run(self) -> JobResult:
        pull = self.pull_key
        with log_context(repository=pull.full_name, pull_number=pull.number):
            return JobResult.completed(await self._hear())

    async def _hear(self) -> str:
        key, request = self.pull_key, self.request
        if not await self.deps.hearings().take_up(key, request.comment.id):
            return "already heard"
        self.thread = thread = await self._thread()
        if thread is None or thread.settled:
            return "not an open thread of Tiebreak's"
        pull = await self.github.pull_request(key)
        if not await self._may_be_heard(pull.author):
            return "not the author or a writer"
        # One reply of a thread at a time: the next finds the finding as this one leaves it.
        self.thread_url = thread_url(pull.html_url, thread.comment_id)
        async with self.deps.hearings().weighing(key, thread.comment_id):
            return await self._hear_in(thread, pull.head_sha)

    async def _hear_in(self, thread: PostedThread, head_sha: str) -> str:
        key = self.pull_key
        stored = await self.deps.pulls.read(key)
        if stored is None or stored.record.ref.head_sha != head_sha:
            return "no review of the current head"  # the next review hears the code as it is
        record = stored.record
        bind(run_id=record.run_id)
        policy = record.config.conversation
        if not policy.enabled:
            return "conversation is off"
        diff = Diff.parse(record.diff, allow_empty=True)
        found = hearing_text.finding_of_thread(
            record.review,
            diff,
            thread.fingerprint,
            thread.comment_id,
            record.conversation.threads,
        )
        if found is None:
            return "the finding is not open"
        if not await self.deps.hearings().within_cap(key, policy.max_replies):
            if await self.deps.hearings().note_cap_once(key):
                await self._reply(hearing_text.over_cap(policy.max_replies))
            return "over the cap"
        return await self._weigh(stored, found)

    async def _weigh(self, stored: StoredRun, found: FindingKey) -> str:
        record = stored.record
        unit_id, finding_id = found
        units = record.review_units()
        outcome = next((u for u in record.review.units if u.unit_id == unit_id), None)
        if unit_id not in units or outcome is None:
            return "the finding's unit is gone"
        allowance = self.deps.allowance(self.pull_key.installation_id)
        if await allowance.remaining() < MIN_CEILING:
            resets = f"{allowance.resets_at():%Y-%m-%d %H:%M} UTC"
            why = f"this installation has spent its daily token allowance (it resets {resets})"
            await self._reply(hearing_text.not_weighed(why))
            return "allowance spent"
        ceiling = TokenCeiling(record.policy.token_ceiling, allowance)
        debate = Debate(
            self.deps.counted_llm, record.policy, ceiling=ceiling, models=record.config.models
        )
        reply = PersonReply(login=self.request.login, text=self.request.text)
        try:
            heard, verdict = await debate.hear(units[unit_id], outcome, finding_id, reply)
        except (NotHeard, LLMFatal) as exc:
            log.warning("a reply on %s was not weighed: %s", finding_id, exc)
            await self._reply(hearing_text.not_weighed("the tester could not be asked"))
            return "not weighed"
        # The run's review with the unit heard: what it expected (its binary files) kept.
        outcomes = [heard if u.unit_id == unit_id else u for u in record.review.units]
        review = record.review.model_copy(update={"units": outcomes})
        async with self.deps.pulls.landing(self.pull_key) as latest:
            return await self._land(stored, latest, review, found, verdict)

    async def _land(
        self,
        read: StoredRun,
        latest: StoredRun | None,
        review: Review,
        found: FindingKey,
        verdict: Verdict,
    ) -> str:
        """Remember the verdict on the run as it now stands, then tell the pull request; a
        newer run, or a finding settled meanwhile, keeps what it has."""
        if latest is None or latest.record.run_id != read.record.run_id:
            if latest is not None:
                await self._reply(hearing_text.superseded(latest.record.ref.head_sha))
            return "a newer review landed meanwhile"
        rebased = rebase(review, read.record.review, latest.record.review, [found])
        if found not in rebased.applied:
            return "the finding was settled meanwhile"
        record = latest.record
        whole = plan(
            rebased.review,
            Diff.parse(record.diff, allow_empty=True),
            run=record.run_info(),
            conversation=record.conversation,
        )
        conclusion = str(whole.check.conclusion) if verdict.accepted else record.conclusion
        changed = record.model_copy(update={"review": rebased.review, "conclusion": conclusion})
        if not await self.deps.pulls.replace(latest, changed):
            log.warning("the run of %s changed while a verdict landed", self.pull_key.key)
            return "the run changed while it landed"
        await self.deps.transcripts().add_rulings(record.run_id, rebased.review, conclusion)
        finding_id = found[1]
        if not verdict.accepted:
            await self._reply(hearing_text.stands(finding_id, verdict.reason))
            return "stands"
        taught = await self._learn(record, found, verdict)
        await self._reply(hearing_text.withdrawn(finding_id, verdict.reason, taught))
        await self._resolve()
        await restate(self.github, record, whole)
        return "withdrawn"

    async def _resolve(self) -> None:
        """Resolve the thread as Tiebreak. One someone else resolved (the author without
        write access: :mod:`app.review.resolutions`) is unresolved first, so that GitHub
        records Tiebreak's resolving, which later reviews count, and not theirs."""
        root = self.request.comment.thread_id
        if self.thread is not None and self.thread.resolved:
            await self.github.unresolve_thread(self.pull_key, root)
        await self.github.resolve_thread(self.pull_key, root)

    async def _learn(self, record: RunRecord, found: FindingKey, verdict: Verdict) -> str:
        """Keep what the withdrawing reply taught, if the tester wrote a rule from it; what
        the reply then says of it."""
        unit_id, finding_id = found
        path = next(
            (
                result.finding.path
                for unit in record.review.units
                if unit.unit_id == unit_id
                for result in unit.findings
                if result.finding.id == finding_id
            ),
            None,
        )
        if path is None or not verdict.learning.strip() or not record.config.learnings.enabled:
            return ""
        store = self.deps.learnings()
        repository = await repository_of(self.github, store, self.pull_key)
        if repository is None:
            return ""
        # Only a writer teaches the repository; anyone else heard teaches this pull request.
        writes = await self.permissions.writes(self.request.login)  # asked when heard
        recorded = await teach(
            store,
            record.config.learnings,
            repository,
            rule=verdict.learning,
            path=path,
            login=self.request.login,
            source=LearningSource.WITHDRAWN,
            thread=self.thread_url,
            now=self.deps.clock(),
            pull=None if writes else self.pull_key.number,
        )
        return learnings_text.learned(*recorded) if recorded else ""

    async def _thread(self) -> PostedThread | None:
        """The thread the reply is in, if Tiebreak started it about a finding, with whether
        who resolved it counts (only Tiebreak's resolving and a writer's settle a thread)."""
        root = self.request.comment.thread_id
        threads = await posted_threads(self.github, self.pull_key)
        thread = next((t for t in threads if t.comment_id == root), None)
        return None if thread is None else (await heeded([thread], self.permissions))[0]

    async def _may_be_heard(self, author: str) -> bool:
        """Whether the reply's author is the pull request's or may write; asked either way,
        before anything lands, for whom what the reply teaches is kept."""
        writes = await self.permissions.writes(self.request.login)
        return writes or self.request.login.lower() == author.lower()

    async def _reply(self, body: str) -> None:
        await self.github.reply(self.pull_key, self.request.comment, body)
