"""The review job: one pull request head, from check run to published review.

    check run queued → in progress → pull request, config (base branch only), diff →
    the debates → review, label → check run completed

A newer push supersedes the job: it stops before publishing and completes its check run as
superseded. Whatever goes wrong, the check run is completed with a clear message: this job is
one of the two places allowed to catch everything.
"""

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import yaml
from githubkit.exception import GitHubException

from agents.diff import Diff
from agents.errors import DiffError, LLMFatal
from agents.review import review_diff
from app import markdown, publish
from app.events import PullRequestRef
from app.github import Installation
from app.landing import LABEL_NAME, complete_check_run, now, set_label
from app.runs import RunRecord
from app.worker import WorkerDeps, deps_of
from policies.config import CONFIG_PATH, RepoConfig, load_config
from policies.debate import DebatePolicy

MIN_CEILING = 10_000
"""The smallest token ceiling a review runs with."""


log = logging.getLogger(__name__)


async def review_pull_request(ctx: dict[str, Any], ref_data: dict[str, Any]) -> str:
    """arq's entry point: review one pull request head."""
    ref = PullRequestRef.model_validate(ref_data)
    return await ReviewRun(deps_of(ctx), ref, run_id=str(ctx["job_id"])).run()


class ReviewRun:
    def __init__(self, deps: WorkerDeps, ref: PullRequestRef, run_id: str) -> None:
        self.deps = deps
        self.ref = ref
        self.run_info = publish.RunInfo(run_id=run_id, head_sha=ref.head_sha, label=LABEL_NAME)
        self.github = deps.github.installation(ref.installation_id)

    async def run(self) -> str:
        if await self._superseded():
            return "superseded before it started"
        try:
            check_id = await self.github.create_check_run(
                self.ref, {"status": "queued", "external_id": self.run_info.run_id}
            )
        except GitHubException as exc:
            # Without a check run there is nowhere to report; the log is the only trace.
            log.error("no check run for %s: %s", self.ref.key, exc)
            return f"failed: could not create the check run: {_reason(exc)}"
        try:
            return await self._review(check_id)
        except asyncio.CancelledError:
            stopped_by = await self._stopped_by()
            if stopped_by is not None:
                result = publish.stopped(stopped_by, run=self.run_info)
                await asyncio.shield(self._complete(check_id, result))
            elif await self._superseded():
                await asyncio.shield(self._complete_superseded(check_id))
            raise
        except Exception as exc:
            # The job's catch-all: whatever failed, the pull request gets a clear answer.
            log.exception("review of %s failed", self.ref.key)
            try:
                await self._complete(check_id, publish.failed(_reason(exc), run=self.run_info))
            except GitHubException as report:
                log.error("could not report the failure on %s: %s", self.ref.key, report)
            return f"failed: {_reason(exc)}"

    async def _review(self, check_id: int) -> str:
        github, ref = self.github, self.ref
        await github.update_check_run(ref, check_id, {"status": "in_progress", "started_at": now()})
        pull = await github.pull_request(ref)
        if pull.head_sha != ref.head_sha:
            await self._complete(check_id, publish.superseded(pull.head_sha, run=self.run_info))
            return "superseded: the pull request has a newer head"
        config, problems = await self._config(github, pull.base_sha)
        if not config.enabled:
            await self._complete(check_id, publish.disabled(run=self.run_info))
            return "disabled by the repository's config"
        diff_text = await github.diff(ref)
        diff = Diff.parse(diff_text) if diff_text.strip() else Diff(())
        policy = await self._policy(config)
        review = await review_diff(
            diff, self.deps.llm, policy, concurrency=self.deps.unit_concurrency
        )
        if await self._superseded():
            await self._complete_superseded(check_id)
            return "superseded before publishing"
        publication = publish.plan(review, diff, run=self.run_info)
        if publication.review is not None:
            await github.create_review(ref, publication.review.payload())
        await set_label(github, ref, publication.label)
        await self._complete(check_id, publication.check, config_problems=problems)
        if self.deps.runs is not None:
            await self.deps.runs.save(
                RunRecord(
                    run_id=self.run_info.run_id,
                    ref=ref,
                    check_run_id=check_id,
                    conclusion=str(publication.check.conclusion),
                    review=review,
                    diff=diff_text,
                    policy=policy,
                )
            )
        return str(publication.check.conclusion)

    async def _policy(self, config: RepoConfig) -> DebatePolicy:
        """The repository's debate policy, with a budget set by `/tiebreak budget` for this
        run (never above the repository's own ceiling)."""
        budget = await self.deps.runs.take_budget(self.ref) if self.deps.runs else None
        if budget is None:
            return config.debate
        ceiling = max(MIN_CEILING, min(budget, config.debate.token_ceiling))
        return DebatePolicy.model_validate({**config.debate.model_dump(), "token_ceiling": ceiling})

    async def _config(self, github: Installation, base_sha: str) -> tuple[RepoConfig, list[str]]:
        """The repository's config from the base commit: the change under review cannot
        rewrite its own rules."""
        text = await github.file(self.ref, CONFIG_PATH, base_sha)
        if text is None:
            return RepoConfig(), []
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            return RepoConfig(), [f"{CONFIG_PATH} is not valid YAML: {exc}"]
        return load_config(document)

    async def _complete(
        self,
        check_id: int,
        result: publish.CheckRunResult,
        *,
        config_problems: Sequence[str] = (),
    ) -> None:
        if config_problems:
            notes = "\n".join(f"- {p}" for p in config_problems)
            summary = f"{result.summary}\n\n**{CONFIG_PATH} was ignored** (defaults used):\n{notes}"
            result = result.model_copy(update={"summary": summary[: markdown.LIMIT]})
        await complete_check_run(self.github, self.ref, check_id, result)

    async def _complete_superseded(self, check_id: int) -> None:
        queue = self.deps.queue
        newer = await queue.latest_head(self.ref) if queue else None
        await self._complete(check_id, publish.superseded(newer or "", run=self.run_info))

    async def _stopped_by(self) -> str | None:
        runs = self.deps.runs
        return await runs.stopped_by(self.run_info.run_id) if runs else None

    async def _superseded(self) -> bool:
        queue = self.deps.queue
        return queue is not None and await queue.is_superseded(self.ref)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, LLMFatal | DiffError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
