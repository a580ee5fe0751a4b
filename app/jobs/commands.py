"""The command job: what people asked for in a comment, or with a check-run button.

Every accepted command gets an 👀 at once and a 🚀 or 😕 when done; a person without write
access gets a short reply saying so, and nothing runs. A comment runs at most `MAX_COMMANDS`
commands, each once, and earns one reply at most for the lines Tiebreak did not know. A
check-run button needs no check: GitHub shows buttons only to people with write access.

`resolve` acts on the latest run holding the pull request's landing lock, ending its open
findings: each proven one's test no longer follows it (:mod:`app.review.following`); with a
reason, in a finding's thread, it also resolves that thread, ending the finding. The arbiter rules
holding none; its rulings then land under that lock on the run as it stands
(:mod:`agents.rebase`), or not at all if a newer review landed meanwhile.
"""

import hashlib
import logging
from typing import Any

from agents.debate.engine import Debate
from agents.diff import Diff
from agents.errors import LLMFatal
from agents.rebase import FindingKey, rebase
from agents.review import Review
from app.events import CommandCall, CommandRequest
from app.github.installation_client import InstallationClient
from app.github.models import PullRequest, Reaction
from app.jobs.deps import WorkerDeps, deps_of
from app.jobs.job_results import JobResult
from app.publishing import check_runs, markdown
from app.publishing.markers import RESOLVED_MARKER
from app.publishing.plan import plan
from app.publishing.publication import LabelAction, RunRecord
from app.review import teaching
from app.review.fixes import ApplyRefused, apply_fixes
from app.review.following import unfollow
from app.review.landing import complete_check_run, land_rulings, set_label
from app.review.posted import resolve, write_summary
from app.slash import HELP, MAX_COMMANDS, CommandName
from app.store.pulls import StoredRun
from app.telemetry.debates import record_rulings
from app.telemetry.logs import bind, log_context
from policies.budget import MIN_CEILING, TokenCeiling
from policies.learnings import LearningsConfig
from policies.permissions import WRITERS

log = logging.getLogger(__name__)

NO_OPEN_FINDING: FindingKey = ("", "")
"""What `/tiebreak arbitrate` in a thread about no open finding asks for: a key no finding
has, so nothing is sent to the arbiter."""


async def run_commands(ctx: dict[str, Any], request_data: dict[str, Any]) -> JobResult:
    """arq's entry point: run the commands of one comment or button."""
    request = CommandRequest.model_validate(request_data)
    return await CommandRun(deps_of(ctx), request, job_id=str(ctx["job_id"])).run()


class CommandRun:
    def __init__(self, deps: WorkerDeps, request: CommandRequest, job_id: str) -> None:
        self.deps = deps
        self.request = request
        self.job_id = job_id
        self.pull_key = request.pull
        self.github: InstallationClient = deps.github.installation(request.pull.installation_id)

    async def run(self) -> JobResult:
        pull = self.pull_key
        with log_context(repository=pull.full_name, pull_number=pull.number):
            return JobResult.completed(await self._run_all())

    async def _run_all(self) -> str:
        await self._react("eyes")
        if not await self._may_run():
            await self._reply(
                f"Sorry @{self.request.login}, only people with write access to this "
                "repository can run Tiebreak's commands."
            )
            await self._react("confused")
            return "refused"
        pull = await self.github.pull_request(self.pull_key)
        results = [await self._run(call, pull) for call in _bounded(self.request.calls)]
        await self._react("rocket" if all(results) else "confused")
        return "done" if all(results) else "not all done"

    async def _may_run(self) -> bool:
        if self.request.comment is None or self.request.association == "OWNER":
            return True
        permission = await self.github.permission(self.pull_key, self.request.login)
        return permission in WRITERS

    async def _run(self, call: CommandCall, pull: PullRequest) -> bool:
        if call.name is None:
            await self._reply(f"I don't know `{_quoted(call.text)}`.\n\n{HELP}")
            return False
        match CommandName(call.name):
            case CommandName.HELP:
                await self._reply(HELP)
                return True
            case CommandName.REVIEW:
                return await self._review(pull)
            case CommandName.STOP:
                return await self._stop()
            case CommandName.BUDGET:
                return await self._budget(call.argument or 0)
            case CommandName.RESOLVE:
                return await self._resolve(pull, call.text)
            case CommandName.LEARNINGS:
                return await self._learnings()
            case CommandName.FORGET:
                return await self._forget(call.argument or 0)
            case CommandName.APPLY:
                return await self._apply(pull)
            case CommandName.ARBITRATE:
                return await self._arbitrate(pull)

    async def _review(self, pull: PullRequest) -> bool:
        queue = self.deps.queue
        source = self.request.comment.id if self.request.comment else "button"
        await queue.enqueue_review(
            self.pull_key.at(pull.head_sha), rerun=f"asked-{source}", base_sha=pull.base_sha
        )
        return True

    async def _stop(self) -> bool:
        queue, pulls = self.deps.queue, self.deps.pulls
        job_id = await queue.unfinished_review(self.pull_key)
        if job_id is None:
            await self._reply("No review of this pull request is running.")
            return False
        await pulls.request_stop(job_id, self.request.login)
        await queue.abort(job_id)
        return True

    async def _budget(self, tokens: int) -> bool:
        if tokens < MIN_CEILING:
            await self._reply(f"A review needs a budget of at least {MIN_CEILING:,} tokens.")
            return False
        await self.deps.pulls.set_budget(self.pull_key, tokens)
        await self._reply(
            f"The next review of this pull request may spend up to {tokens:,} billed tokens "
            "(never more than the repository's own ceiling)."
        )
        return True

    async def _learnings(self) -> bool:
        stored = await self.deps.pulls.read(self.pull_key)
        config = stored.record.config.learnings if stored else LearningsConfig()
        listed = await teaching.listing(self.github, self.deps.learnings(), config, self.pull_key)
        await self._reply(listed)
        return True

    async def _forget(self, number: int) -> bool:
        forgot, answer = await teaching.forget(
            self.github, self.deps.learnings(), self.pull_key, number
        )
        await self._reply(answer)
        return forgot

    async def _resolve(self, pull: PullRequest, reason: str = "") -> bool:
        # Under the landing lock: a newer review cannot land between the reading and the
        # resolving, to have its summary and label overwritten by the older run's.
        async with self.deps.pulls.landing(self.pull_key) as latest:
            record = await self._current(latest, pull)
            if record is None:
                return False
            run = record.run_info()
            whole = plan(
                record.review,
                Diff.parse(record.diff, allow_empty=True),
                run=run,
                conversation=record.conversation,
            )
            login = self.request.login
            await complete_check_run(
                self.github,
                record.ref,
                record.check_run_id,
                check_runs.resolved(login, whole.check.summary),
                details_url=record.details_url,
            )
            await write_summary(
                self.github, self.pull_key, check_runs.resolved_summary(login, whole)
            )
            await set_label(self.github, self.pull_key, LabelAction.REMOVE, run.label)
            comment = self.request.comment
            in_thread = bool(reason) and comment is not None and comment.kind == "review"
            # The thread a reason is given in is answered and resolved below, with what it taught.
            await unfollow(
                self.github,
                self.pull_key,
                record,
                login,
                but=comment.thread_id if in_thread and comment is not None else None,
            )
        if in_thread and comment is not None:
            taught = teaching.Taught(
                self.deps, self.github, self.pull_key, self.request.login, pull.html_url
            )
            if answer := await taught.resolved(record, comment.thread_id, reason):
                # A writer ended the finding: its thread is resolved, and the marker tells
                # later reviews Tiebreak resolved it (GitHub names no App as its resolver).
                await self._reply(f"{answer}\n\n{RESOLVED_MARKER}")
                await resolve(self.github, self.pull_key, [comment.thread_id])
        return True

    async def _apply(self, pull: PullRequest) -> bool:
        # No lock: the commit lands only on the head the run reviewed (a push meanwhile
        # makes GitHub refuse it), and the run is not changed.
        record = await self._current(await self.deps.pulls.read(self.pull_key), pull)
        if record is None:
            return False
        try:
            applied = await apply_fixes(self.github, record, pull)
        except ApplyRefused as refused:
            await self._reply(refused.reason)
            return False
        fixed = ", ".join(applied.finding_ids)
        await self._reply(
            f"Committed {applied.sha[:7]} to {markdown.code(pull.head_ref)}, fixing {fixed}."
        )
        return True

    async def _arbitrate(self, pull: PullRequest) -> bool:
        stored = await self.deps.pulls.read(self.pull_key)
        record = await self._current(stored, pull)
        if stored is None or record is None:
            return False
        wanted = await self._thread_finding(record)
        units = record.review_units()
        # Asked for by a person: the arbiter rules even where the config turned arbitration off.
        policy = record.policy.model_copy(update={"arbitration": True})
        allowance = self.deps.allowance(self.pull_key.installation_id)
        if await allowance.remaining() < MIN_CEILING:
            await self._reply(
                "This installation has spent its daily token allowance; the arbiter can be "
                f"asked again after {allowance.resets_at():%Y-%m-%d %H:%M} UTC."
            )
            return False
        ceiling = TokenCeiling(policy.token_ceiling, allowance)
        debate = Debate(self.deps.counted_llm, policy, ceiling=ceiling, models=record.config.models)
        outcomes, ruled = [], []
        for outcome in record.review.units:
            ids = [
                f.finding.id
                for f in outcome.unresolved
                if wanted is None or (outcome.unit_id, f.finding.id) == wanted
            ]
            if ids and outcome.unit_id in units:
                try:
                    ruled_on = await debate.arbitrate(units[outcome.unit_id], outcome, ids)
                except LLMFatal as exc:
                    await self._reply(f"The arbiter could not be asked: {exc}")
                    return False
                record_rulings(self.deps.metrics, outcome, ruled_on)
                outcome = ruled_on
                ruled += [(outcome.unit_id, i) for i in ids]
            outcomes.append(outcome)
        if not ruled:
            await self._reply("There is no unresolved finding to send to the arbiter.")
            return False
        async with self.deps.pulls.landing(self.pull_key) as latest:
            ruling = record.review.model_copy(update={"units": outcomes})
            return await self._land_rulings(stored, latest, ruling, ruled)

    async def _thread_finding(self, record: RunRecord) -> FindingKey | None:
        """In a review thread, the finding Tiebreak's comment there is about
        (:data:`NO_OPEN_FINDING` if it is about none still open); outside one, None: every
        open finding."""
        comment = self.request.comment
        if comment is None or comment.kind != "review":
            return None
        path, line = await self.github.review_comment_location(self.pull_key, comment.thread_id)
        for outcome in record.review.units:
            for result in outcome.unresolved:
                if (result.finding.path, result.finding.end_line) == (path, line):
                    return outcome.unit_id, result.finding.id
        return NO_OPEN_FINDING

    async def _land_rulings(
        self,
        read: StoredRun,
        latest: StoredRun | None,
        review: Review,
        ruled: list[FindingKey],
    ) -> bool:
        """Remember the rulings on the run as it now stands, comment on the findings they
        settle, and bring the check run and label up to date; a newer run, or findings
        settled meanwhile, keep what they have."""
        if latest is None or latest.record.run_id != read.record.run_id:
            newer = latest.record.ref.head_sha[:7] if latest else "the pull request again"
            await self._reply(
                f"Tiebreak reviewed {newer} while the arbiter ruled: that review weighs the "
                "code as it is now, and these rulings were not kept. Comment "
                "`/tiebreak arbitrate` to send its open findings to the arbiter."
            )
            return False
        rebased = rebase(review, read.record.review, latest.record.review, ruled)
        if not rebased.applied:
            await self._reply("The findings sent to the arbiter were settled while it ruled.")
            return False
        record = latest.record
        diff = Diff.parse(record.diff, allow_empty=True)
        whole = plan(rebased.review, diff, run=record.run_info(), conversation=record.conversation)
        conclusion = str(whole.check.conclusion)
        changed = record.model_copy(update={"review": rebased.review, "conclusion": conclusion})
        if not await self.deps.pulls.replace(latest, changed):
            log.warning("the run of %s changed while rulings landed", self.pull_key.key)
            await self._reply("The review changed while the arbiter ruled; nothing was kept.")
            return False
        await self.deps.transcripts().add_rulings(record.run_id, rebased.review, conclusion)
        # One review per command that lands rulings: its marker names the run and the command.
        command = hashlib.sha256(self.job_id.encode()).hexdigest()[:12]
        await land_rulings(self.github, record, rebased.review, rebased.applied, whole, command)
        return True

    async def _current(self, stored: StoredRun | None, pull: PullRequest) -> RunRecord | None:
        """The latest review as `stored`, if it reviewed the current head; a reply says why
        not."""
        if stored is None:
            await self._reply("Tiebreak has not reviewed this pull request yet.")
            return None
        record = stored.record
        if record.ref.head_sha != pull.head_sha:
            await self._reply(
                f"The latest review is of {record.ref.head_sha[:7]}, but the head is now "
                f"{pull.head_sha[:7]}: comment `/tiebreak review` first."
            )
            return None
        bind(run_id=record.run_id)  # the commands act on that run
        return record

    async def _react(self, content: Reaction) -> None:
        if self.request.comment is not None:
            await self.github.react(self.pull_key, self.request.comment, content)

    async def _reply(self, body: str) -> None:
        if self.request.comment is not None:
            await self.github.reply(self.pull_key, self.request.comment, body)
        else:
            await self.github.comment(self.pull_key, body)


def _bounded(calls: list[CommandCall]) -> list[CommandCall]:
    """The calls to run: each command once and one unrecognised line (`None`) at most, no
    more than `MAX_COMMANDS` — the parser's rule, kept here whatever queued the request."""
    kept: list[CommandCall] = []
    seen: set[str | None] = set()
    for call in calls:
        if call.name not in seen:
            seen.add(call.name)
            kept.append(call)
            if len(kept) == MAX_COMMANDS:
                break
    return kept


def _quoted(text: str) -> str:
    return ("/tiebreak " + text).strip().replace("`", "'")[:100]
