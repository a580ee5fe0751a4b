"""The start of one review run (:mod:`app.jobs.review`), up to its plan.

    pull request, config (base branch only) → does this event get a review? →
    check run (in progress) → daily allowance → diff, in-scope files →
    what the agents read, the policy, where the tests run → the plan

An automatic review the config does not want (that event, that author, a draft) ends
quietly, before any check run; a newer head, a config that turns Tiebreak off or a spent
daily allowance completes the check run instead of planning. The diff is parsed and split
into review units once, here: each unit job reads only its own slice of the plan.
"""

import logging
import time
from dataclasses import dataclass, replace
from typing import NamedTuple

from agents.coverage import estimate
from agents.diff import Diff, ReviewUnit
from app.github.configs import repository_config
from app.github.models import PullRequest
from app.publishing import check_runs
from app.publishing.publication import CheckRunResult, RunInfo, RunRecord
from app.publishing.rereview import Scope
from app.review.actions_gate import tests_in_actions
from app.review.check_run import ReviewCheck, RunStep
from app.review.gathering import reading_for
from app.review.rescoping import scope_since
from app.review.teaching import applied, repository_of
from app.review.together import together
from app.store.allowance import DailyAllowance
from app.store.plans import RunPlan
from policies.budget import MIN_CEILING
from policies.config import RepoConfig
from policies.config_file import ConfigProblem
from policies.debate import DebatePolicy
from policies.ignoring import PullFacts
from policies.learnings import Learnings

log = logging.getLogger(__name__)


class Planned(NamedTuple):
    """A run's plan, ready to be written and debated."""

    plan: RunPlan
    diff: Diff
    """The part of the pull request's diff the run covers."""
    units: list[ReviewUnit]
    """Its review units, each with what its agents read beside it."""


@dataclass
class ReviewPlanning(RunStep):
    """The start of one review run: its config, its check run opened, and its plan."""

    trigger: str | None
    """The pull request event behind an automatic review; None when a person asked."""
    check: ReviewCheck
    head_not_read: str | None = None
    """Why the repository at the head was not read whole, once the reading says."""

    @property
    def config(self) -> RepoConfig:
        return self.check.config

    async def start(self) -> Planned | str:
        """The run's plan, or how the run ended without one."""
        pull = await self.github.pull_request(self.ref)
        check = self.check
        check.config, check.config_problems = await self._config(pull.base_sha)
        # A review a person asked for always happens (unless the config turns Tiebreak off).
        quiet = None
        if self.trigger is not None:
            quiet = self.config.declines(self.trigger, _facts(pull))
        if quiet is not None:
            return f"not reviewed: {quiet}"
        check.id = await check.open()
        return await self._plan(check.id, pull)

    async def _plan(self, check_id: int, pull: PullRequest) -> Planned | str:
        github, ref, config, check = self.github, self.ref, self.config, self.check
        allowance = self.deps.allowance(ref.installation_id)
        if pull.head_sha != ref.head_sha:
            await check.complete(check_id, check_runs.superseded(pull.head_sha, run=check.run_info))
            return "superseded: the pull request has a newer head"
        if not config.enabled:
            await check.complete(check_id, check_runs.disabled(run=check.run_info))
            return "disabled by the repository's config"
        if await allowance.remaining() < MIN_CEILING:
            await check.complete(check_id, await _daily_budget_reached(allowance, check.run_info))
            return "daily budget reached"
        text, scope = await together(github.diff(ref), self._scope())
        # The diff is parsed and split once, here; each unit job reads only its own slice.
        whole = Diff.parse(text, allow_empty=True)
        paths = config.path_filter()
        diff = Diff(tuple(f for f in whole.files if paths.reviews(f.path)))
        reviewed = scope.part(diff)
        units, policy, (tests, tests_note) = await together(
            self._units(pull, reviewed),
            self._policy(),
            tests_in_actions(github, ref, pull, config),
        )
        expected = estimate(units, policy)
        log.info("review of %s: %s", ref.key, expected.describe())
        plan = RunPlan(
            run_id=self.run_id,
            ref=ref,
            check_run_id=check_id,
            scope=scope,
            unit_ids=tuple(u.id for u in units),
            unit_paths=tuple(u.diff.paths for u in units),
            estimate=expected,
            policy=policy,
            config=config,
            config_notes=check.config_problems,
            excluded_files=len(whole.files) - len(diff.files),
            tests=tests,
            tests_note=tests_note,
            head_not_read=self.head_not_read,
            title=pull.title,
            html_url=pull.html_url,
            started_at=time.time(),
        )
        return Planned(plan, diff, units)

    async def _units(self, pull: PullRequest, diff: Diff) -> list[ReviewUnit]:
        """The review units of `diff`, each with what its agents read beside it. The files
        read for them are let go here, not held while the debates run."""
        deps = self.deps
        read, learnings = await together(
            reading_for(
                self.github,
                self.ref,
                pull,
                self.config,
                diff,
                deps.parsing,
                deps.reading,
                deps.snapshots,
            ),
            self._learnings(),
        )
        self.head_not_read = read.head_not_read
        reading = read.reading
        reading = replace(reading, guidance=replace(reading.guidance, learnings=learnings))
        return [
            replace(
                unit, learned=tuple(item.shown() for item in learnings.for_paths(unit.diff.paths))
            )
            for unit in reading.attach(diff.units(deps.unit_tokens))
        ]

    async def _learnings(self) -> Learnings:
        """The learnings the run applies: the config's, the repository's and the pull
        request's own."""
        store, config = self.deps.learnings(), self.config.learnings
        repository = await repository_of(self.github, store, self.ref) if config.enabled else None
        return await applied(store, config, repository, self.ref.number)

    async def _earlier(self) -> RunRecord | None:
        """The pull request's latest finished review before this run, if it has one."""
        earlier = await self.deps.pulls.latest(self.ref)
        return earlier if earlier is not None and earlier.run_id != self.run_id else None

    async def _scope(self) -> Scope:
        return await scope_since(self.github, self.ref, self.config, await self._earlier())

    async def _policy(self) -> DebatePolicy:
        """The repository's debate policy, with a budget set by `/tiebreak budget` for this
        run (never above the repository's own ceiling)."""
        own = self.config.debate
        budget = await self.deps.pulls.take_budget(self.ref)
        if budget is None:
            return own
        ceiling = max(MIN_CEILING, min(budget, own.token_ceiling))
        return DebatePolicy.model_validate({**own.model_dump(), "token_ceiling": ceiling})

    async def _config(self, base_sha: str) -> tuple[RepoConfig, list[ConfigProblem]]:
        """The repository's config from the base commit, over its organisation's defaults:
        the change under review cannot rewrite its own rules."""
        return await repository_config(self.github, self.ref, base_sha)


async def _daily_budget_reached(allowance: DailyAllowance, run: RunInfo) -> CheckRunResult:
    return check_runs.daily_budget_reached(
        spent=await allowance.spent(), cap=allowance.cap, resets_at=allowance.resets_at(), run=run
    )


def _facts(pull: PullRequest) -> PullFacts:
    return PullFacts(
        author=pull.author,
        draft=pull.draft,
        base_branch=pull.base_ref,
        head_branch=pull.head_ref,
        title=pull.title,
        labels=pull.labels,
    )
