"""The start of one review run (:mod:`app.jobs.review`), up to its plan: the context its
later steps read (:class:`app.review.run_context.RunContext`), made here or picked up from the
plan of a coordinator that died.

    pull request, config (base branch only), and meanwhile the diff → does this event get
    a review? → check run (in progress), and meanwhile the daily allowance and the run's
    scope, the diff split into units of its in-scope files, what their agents read (what
    the pull request says it does among it) and where the tests run →
    the policy → the plan

An automatic review the config does not want (that event, that author, a draft) ends
quietly, before any check run (the diff asked for meanwhile is let go); a newer head, a config
that turns Tiebreak off or a spent daily allowance completes the check run instead of
planning. The diff is parsed and split into review units once, here (:class:`Cut`): each unit
job reads only its own slice of the plan.
"""

import asyncio
import logging
import time
from collections.abc import Awaitable
from dataclasses import replace
from typing import NamedTuple

from agents.coverage import estimate
from agents.diff import Diff, ReviewUnit
from agents.intent import pull_intent
from agents.pull_changes import PullChanges
from app.github.configs import repository_config
from app.github.models import PullRequest
from app.publishing import check_runs
from app.publishing.publication import CheckRunResult, RunInfo, RunRecord, unit_files
from app.publishing.rereview import RunScope
from app.review import check_run
from app.review.actions_gate import tests_in_actions
from app.review.gathering import reading_for
from app.review.rescoping import scope_since
from app.review.run_context import RunContext, RunStart
from app.review.teaching import applied, repository_of
from app.review.together import dropped, together
from app.store.allowance import DailyAllowance
from app.store.plans import ActionsTesting, RunPlan
from policies.budget import MIN_CEILING
from policies.config_file import ConfigProblem
from policies.debate import DebatePolicy
from policies.ignore import PullFacts
from policies.learnings import Learnings

log = logging.getLogger(__name__)


class Planned(NamedTuple):
    """A run's plan, ready to be written and debated."""

    plan: RunPlan
    diff: Diff
    """The part of the pull request's diff the run covers."""
    units: list[ReviewUnit]
    """Its review units, each with what its agents read beside it."""


Diffing = asyncio.Future[str]
"""The pull request's diff, asked for beside the pull request itself."""


class Configured(NamedTuple):
    """What a run reads first: the pull request, the repository's config, and the diff."""

    pull: PullRequest
    """The pull request as GitHub has it."""
    run: RunStart
    """The run, with the repository's config and the config's problems."""
    diffing: Diffing
    """The pull request's diff, under way: :func:`opened` hands it to the plan's first reads,
    or lets it go (:func:`app.review.together.dropped`) for a run that will not plan."""


async def configured(run: RunStart, base_sha: str | None = None) -> Configured:
    """The pull request as GitHub has it, and `run` with the repository's config from the base
    commit, over its organisation's defaults (the change under review cannot rewrite its own
    rules), and the config's problems; the diff is asked for meanwhile, a round trip fewer
    before the first model call. `base_sha`: the base commit the event that queued the run
    named, whose config is read while the pull request is asked for (and read again at the
    pull request's own base should that differ)."""
    github, ref = run.github, run.ref
    diffing = asyncio.ensure_future(github.diff(ref))
    try:
        if base_sha is None:
            pull = await github.pull_request(ref)
            config, problems = await repository_config(github, ref, pull.base_sha)
        else:
            pull, (config, problems) = await together(
                github.pull_request(ref), repository_config(github, ref, base_sha)
            )
            if pull.base_sha != base_sha:
                config, problems = await repository_config(github, ref, pull.base_sha)
    except BaseException:
        await dropped(diffing)
        raise
    return Configured(pull, replace(run, config=config, config_problems=tuple(problems)), diffing)


def declined(run: RunStart, pull: PullRequest, trigger: str | None) -> str | None:
    """Why the config does not want an automatic review of `pull` for `trigger` (the pull
    request event behind it), or None. A review a person asked for (no trigger) always happens
    (unless the config turns Tiebreak off), and so does one whose check run is open already
    (started again after a shutdown: it was wanted then)."""
    if trigger is None or isinstance(run, RunContext):
        return None
    return run.config.declines(trigger, _facts(pull))


def picked_up(run: RunStart, plan: RunPlan) -> RunContext:
    """`run` as the plan a coordinator that died wrote it: its config, the config's problems
    and its check run."""
    problems = (*(ConfigProblem(m, line) for m, line in plan.config_problems), *plan.config_notes)
    picked = replace(run, config=plan.config, config_problems=problems)
    return picked.with_check_run(plan.check_run_id)


class Cut(NamedTuple):
    """A pull request's diff, parsed and split once for the whole run: each unit job reads
    only its own slice."""

    whole: Diff
    """The pull request's diff, as GitHub gives it."""
    covered: Diff
    """Its files the config's paths review."""
    reviewed: Diff
    """Those of them the run's scope covers."""
    changes: PullChanges
    """The whole diff's changed lines: evidence of intent may be cited from any file the
    pull request changes, in another unit or left out by the config's paths, so each unit
    checks citations against them, never reading their text."""
    units: list[ReviewUnit]
    """`reviewed` in review units, nothing read beside them yet."""

    @classmethod
    def of(cls, text: str, run: RunStart, scope: RunScope) -> "Cut":
        """The pull request's diff `text` cut for `run` within `scope`."""
        whole = Diff.parse(text, allow_empty=True)
        paths = run.config.path_filter()
        covered = Diff(tuple(f for f in whole.files if paths.reviews(f.path)))
        reviewed = scope.part(covered)
        changes = whole.changes()
        return cls(whole, covered, reviewed, changes, reviewed.units(run.deps.unit_tokens, changes))


class Gathered(NamedTuple):
    """What a run's units read beside their diffs, and where its findings' tests run."""

    units: list[ReviewUnit]
    """The run's units, each with what its agents read beside it."""
    head_not_read: str | None
    """Why the repository at the head was not read whole, if it was not."""
    tests: ActionsTesting | None
    tests_note: str


class FirstReads(NamedTuple):
    """What a plan reads before anything else, none of it from the check run."""

    remaining: int
    """The installation's daily allowance left."""
    scope: RunScope
    cut: Cut
    """The pull request's diff, parsed and split within the config's paths and the scope."""
    gathered: Gathered | None
    """None: the allowance left cannot pay for a call, so nothing was read for the run."""


Reading = asyncio.Future[FirstReads]
"""The plan's first reads, under way."""


async def opened(
    run: RunStart, pull: PullRequest, diffing: Diffing
) -> tuple[RunContext, Reading | None]:
    """`run` with its check run open (:func:`app.review.check_run.opened`), and the plan's
    first reads under way meanwhile (against GitHub, whose check runs take it longer to make
    than a read, round trips fewer before the first model call) unless the run ends without a
    plan whatever they say: a newer head, or a config that turns Tiebreak off (its diff is let
    go). :func:`plan` awaits them. `diffing`: the diff, asked for with the pull request."""
    if pull.head_sha != run.ref.head_sha or not run.config.enabled:
        await dropped(diffing)
        return await check_run.opened(run), None
    reading = asyncio.ensure_future(_first_reads(run, pull, diffing))
    try:
        return await check_run.opened(run), reading
    except BaseException:
        await dropped(reading, diffing)
        raise


async def _first_reads(
    run: RunStart, pull: PullRequest, diffing: Awaitable[str] | None = None
) -> FirstReads:
    """The allowance left, the diff (`diffing`, or asked for now) and the scope; the diff
    parsed and split, and what its units read beside it: none of it waits for the check
    run."""
    github, ref = run.github, run.ref
    allowance = run.deps.allowance(ref.installation_id)
    diff = github.diff(ref) if diffing is None else diffing
    remaining, text, scope = await together(allowance.remaining(), diff, _scope(run))
    cut = Cut.of(text, run, scope)
    if remaining < MIN_CEILING:  # the run ends at once: nothing is read for it
        return FirstReads(remaining, scope, cut, None)
    (units, head_not_read), (tests, tests_note) = await together(
        _units(run, pull, cut), tests_in_actions(github, ref, pull, run.config)
    )
    return FirstReads(remaining, scope, cut, Gathered(units, head_not_read, tests, tests_note))


async def plan(
    context: RunContext, pull: PullRequest, reading: Reading | None = None
) -> Planned | str:
    """The run's plan, or how the run ended without one, its check run completed: a newer
    head, a config that turns Tiebreak off or a spent daily allowance. `reading`: its first
    reads, under way since its check run was opened (:func:`opened`)."""
    ref, config = context.ref, context.config
    allowance = context.deps.allowance(ref.installation_id)
    if pull.head_sha != ref.head_sha:
        superseded = check_runs.superseded(pull.head_sha, run=context.run_info)
        await check_run.complete(context, superseded)
        return "superseded: the pull request has a newer head"
    if not config.enabled:
        await check_run.complete(context, check_runs.disabled(run=context.run_info))
        return "disabled by the repository's config"
    _, scope, cut, gathered = await (reading or _first_reads(context, pull))
    if gathered is None:
        await check_run.complete(context, await _daily_budget_reached(allowance, context.run_info))
        return "daily budget reached"
    # Taken once the run has its check run: a budget set for it is not spent on a run that
    # could not open one.
    policy = await _policy(context)
    units, head_not_read, tests, tests_note = gathered
    if tests is None:  # no test runs: the tester writes none, and reads nothing of them
        units = [replace(unit, conventions=None) for unit in units]
    expected = estimate(units, policy, binary=cut.reviewed.binaries)
    log.info("review of %s: %s", ref.key, expected.describe())
    run_plan = RunPlan(
        run_id=context.run_id,
        ref=ref,
        check_run_id=context.check_run_id,
        scope=scope,
        unit_ids=tuple(u.id for u in units),
        unit_paths=tuple(u.diff.paths for u in units),
        unit_files=tuple(unit_files(u, cut.covered) for u in units),
        estimate=expected,
        policy=policy,
        config=config,
        config_notes=list(context.config_problems),
        excluded_files=len(cut.whole.files) - len(cut.covered.files),
        changes=cut.changes,
        tests=tests,
        tests_note=tests_note,
        head_not_read=head_not_read,
        title=pull.title,
        html_url=pull.html_url,
        started_at=time.time(),
    )
    return Planned(run_plan, cut.covered, units)


async def _units(
    context: RunStart, pull: PullRequest, cut: Cut
) -> tuple[list[ReviewUnit], str | None]:
    """The review units of `cut`, each with what its agents read beside it, and why the
    repository at the head was not read whole, if it was not. The files read for them are
    let go here, not held while the debates run."""
    deps = context.deps
    read, learnings = await together(
        reading_for(
            context.github,
            context.ref,
            pull,
            context.config,
            cut.reviewed,
            deps.parsing,
            deps.reading,
            deps.snapshots,
        ),
        _learnings(context),
    )
    reading = read.reading
    reading = replace(
        reading,
        guidance=replace(reading.guidance, learnings=learnings),
        intent=pull_intent(pull.title, pull.body),
    )
    units = [
        replace(unit, learned=tuple(item.shown() for item in learnings.for_paths(unit.diff.paths)))
        for unit in reading.attach(cut.units)
    ]
    return units, read.head_not_read


async def _learnings(context: RunStart) -> Learnings:
    """The learnings the run applies: the config's, the repository's and the pull request's
    own."""
    store, config = context.deps.learnings(), context.config.learnings
    repository = await repository_of(context.github, store, context.ref) if config.enabled else None
    return await applied(store, config, repository, context.ref.number)


async def _earlier(context: RunStart) -> RunRecord | None:
    """The pull request's latest finished review before this run, if it has one."""
    earlier = await context.deps.pulls.latest(context.ref)
    return earlier if earlier is not None and earlier.run_id != context.run_id else None


async def _scope(context: RunStart) -> RunScope:
    return await scope_since(context.github, context.ref, context.config, await _earlier(context))


async def _policy(context: RunContext) -> DebatePolicy:
    """The repository's debate policy, with a budget set by `/tiebreak budget` for this run
    (never above the repository's own ceiling)."""
    own = context.config.debate
    budget = await context.deps.pulls.take_budget(context.ref)
    if budget is None:
        return own
    ceiling = max(MIN_CEILING, min(budget, own.token_ceiling))
    return DebatePolicy.model_validate({**own.model_dump(), "token_ceiling": ceiling})


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
