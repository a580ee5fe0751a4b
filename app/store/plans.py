"""A review run's plan in Redis: what its coordinator and each of its units need.

The coordinator parses the pull request's diff once, splits it into review units and writes:

- the run's plan (:class:`RunPlan`): small, read by the coordinator alone — a coordinator that
  picks up a dead one's run starts from it;
- the part of the diff the run covers, packed, for the coordinator to publish against;
- one :class:`UnitPlan` per unit, packed: its own slice of the diff (as parsed: a unit reads it
  back without parsing it again) and what its debate needs.

A unit job reads its unit's key and nothing else of the plan, so what it reads and parses is
the size of its unit, whatever the size of the pull request, but for the whole pull request's
changed line numbers (:mod:`agents.pull_changes`, no text), which its citations are checked
against.
"""

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict
from redis.asyncio import Redis

from agents.conventions import ProjectTests
from agents.coverage import CostEstimate
from agents.diff import Diff, DiffFile, ReviewUnit
from agents.pull_changes import PullChanges
from app.events import PullRequestRef
from app.publishing.publication import UnitFile, UnitReading
from app.publishing.rereview import RunScope
from app.store import keys
from app.store.packed import pack, pack_text, unpack, unpack_text
from policies.config import Models, RepoConfig
from policies.config_file import ConfigProblem
from policies.debate import DebatePolicy
from policies.errors import TiebreakError
from policies.summary import SummaryConfig


class PlanLost(TiebreakError):
    """A run's plan is in Redis without the diff it was written with."""


class ActionsTesting(BaseModel):
    """Findings' tests run in the repository's GitHub Actions, as a unit's debate runs them."""

    model_config = ConfigDict(frozen=True)

    workflow: str
    """The workflow's file name in `.github/workflows/`."""
    branch: str
    """The branch the workflow is dispatched from: the repository's default branch, whose
    workflow file the config names (not the pull request's base, where another branch may
    hold a stale or edited copy of it)."""
    base_sha: str
    command: str
    setup: str | None = None
    max_attempts: int
    max_runs: int
    timeout_minutes: int


class RunPlan(BaseModel):
    """What a run's coordinator needs, written once before any unit starts."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    ref: PullRequestRef
    check_run_id: int
    scope: RunScope = RunScope()
    """The files of the diff the run debates: all, or those changed since the last review."""
    unit_ids: tuple[str, ...] = ()
    """Each unit's id, by unit number."""
    unit_paths: tuple[tuple[str, ...], ...] = ()
    """Each unit's files, by unit number: a unit not reviewed names them."""
    unit_files: tuple[tuple[UnitFile, ...], ...] = ()
    """Each unit's slice of the diff, by unit number, for the run's record; none in plans
    written before it was kept."""
    estimate: CostEstimate | None = None
    """What the run was expected to cost, made before its first call."""
    policy: DebatePolicy
    config: RepoConfig
    config_problems: list[tuple[str, int | None]] = []
    """What was wrong with the repository's config file, as plans written before
    :attr:`config_notes` held it."""
    config_notes: list[ConfigProblem] = []
    """What is wrong with the config's files, or what they warn of."""
    excluded_files: int = 0
    changes: PullChanges | None = None
    """The whole pull request's changed lines, which its units check citations against
    (`agents.pull_changes`), for the record a later ruling is asked of."""
    tests: ActionsTesting | None = None
    """How the units run their findings' tests; None: they run none."""
    tests_note: str = ""
    """Why findings' tests were not run although the config asks for them (the summary says
    it once)."""
    head_not_read: str | None = None
    """Why the repository at the head was not read whole, for the summary; None when it was,
    or when no snapshot was asked for."""
    title: str = ""
    html_url: str = ""
    started_at: float = 0.0
    """When the plan was made (Unix time)."""

    @property
    def units(self) -> int:
        return len(self.unit_ids)


class PlannedFile(BaseModel):
    """One file of a unit's slice of the diff, as the coordinator parsed it
    (:meth:`agents.diff.DiffFile.rebuilt`)."""

    model_config = ConfigDict(frozen=True)

    path: str
    header: str
    hunks: tuple[str, ...]
    """Each hunk's text, its `@@` line first."""
    deleted: bool = False
    binary: bool = False

    @classmethod
    def of(cls, diff_file: DiffFile) -> "PlannedFile":
        hunks = tuple(h.text for h in diff_file.hunks)
        return cls(
            path=diff_file.path,
            header=diff_file.header,
            hunks=hunks,
            deleted=diff_file.deleted,
            binary=diff_file.binary,
        )

    def diff_file(self) -> DiffFile:
        return DiffFile.rebuilt(self.path, self.header, self.hunks, self.deleted, self.binary)


class UnitPlan(BaseModel):
    """Everything one unit's debate needs, on any worker."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    ref: PullRequestRef
    number: int
    unit_id: str
    files: tuple[PlannedFile, ...] = ()
    """The unit's slice of the diff, as the coordinator parsed and split it: read back
    without parsing it again."""
    diff: str = ""
    """The unit's slice of the diff as text, in plans written before :attr:`files`."""
    policy: DebatePolicy
    models: Models
    context: str = ""
    """The code around the unit's changes at the head, as its agents read it."""
    guidance: str = ""
    """The repository's guidance for the unit's files, read from the base branch."""
    tests: ActionsTesting | None = None
    """How its findings' tests are run; None: they are not."""
    learned: tuple[str, ...] = ()
    """The repository's learnings in `guidance`, each as the agents read it."""
    summary: SummaryConfig = SummaryConfig()
    """What the walkthrough the unit's first report is asked for says
    (`agents.debate.unit_walkthrough`)."""
    intent: str = ""
    """What the pull request says it does, as the agents read it (`agents.intent`): bounded,
    and read from the plan by every attempt, so that each call of the unit reads the same."""
    conventions: ProjectTests | None = None
    """How the repository's tests are written and run (`agents.conventions`), when its
    findings' tests run."""
    changes: PullChanges | None = None
    """The whole pull request's changed lines, without their text (`agents.pull_changes`):
    a citation of a file another unit changes is checked against them."""

    def review_unit(self) -> ReviewUnit:
        diff = (
            Diff(tuple(f.diff_file() for f in self.files)) if self.files else Diff.parse(self.diff)
        )
        return ReviewUnit(
            self.unit_id,
            diff,
            self.context,
            self.guidance,
            self.learned,
            self.intent,
            self.conventions,
            self.changes,
        )


def plan_values(plan: RunPlan, diff: Diff, units: list[ReviewUnit]) -> dict[str, bytes]:
    """The keys a run's plan is written to, and their values: the diff, in scope and
    filtered, and `units`, its review units."""
    run = plan.run_id
    values = {keys.plan(run): plan.model_dump_json().encode(), keys.diff(run): pack_text(diff.text)}
    for n, unit in enumerate(units):
        values[keys.unit_plan(run, n)] = pack(
            UnitPlan(
                run_id=run,
                ref=plan.ref,
                number=n,
                unit_id=unit.id,
                files=tuple(PlannedFile.of(f) for f in unit.diff.files),
                policy=plan.policy,
                models=plan.config.models,
                context=unit.context,
                guidance=unit.guidance,
                tests=plan.tests,
                learned=unit.learned,
                summary=plan.config.summary,
                intent=unit.intent,
                conventions=unit.conventions,
                changes=unit.changes,
            )
        )
    return values


async def read_plan(redis: Redis, run: str) -> tuple[RunPlan, Diff] | None:
    """The run's plan and its diff, parsed; None if the run has none."""
    plan, diff = await redis.mget([keys.plan(run), keys.diff(run)])
    if plan is None:
        return None
    if diff is None:
        raise PlanLost(f"the plan of run {run} has lost its diff")
    return RunPlan.model_validate_json(plan), Diff.parse(unpack_text(diff), allow_empty=True)


async def read_unit_plan(redis: Redis, run: str, n: int) -> UnitPlan | None:
    raw = await redis.get(keys.unit_plan(run, n))
    return None if raw is None else unpack(UnitPlan, raw)


async def read_readings(redis: Redis, run: str, count: int) -> dict[str, UnitReading]:
    """What each of the run's `count` units read beside its diff, by unit id, from their
    plans: what a run remembers for the arbiter of a later command, or the tester weighing a
    reply."""
    raw = await redis.mget([keys.unit_plan(run, n) for n in range(count)]) if count else []
    plans = [unpack(UnitPlan, value) for value in raw if value is not None]
    return _readings((p.unit_id, p.context, p.guidance, p.learned, p.intent) for p in plans)


def readings_of(units: Iterable[ReviewUnit]) -> dict[str, UnitReading]:
    """What each of `units` reads beside its diff, by unit id, as :func:`read_readings` reads
    it back from the unit plans :func:`plan_values` makes of them: the run that planned them
    needs no round trip, nor to unpack every plan."""
    return _readings((u.id, u.context, u.guidance, u.learned, u.intent) for u in units)


def _readings(
    units: Iterable[tuple[str, str, str, tuple[str, ...], str]],
) -> dict[str, UnitReading]:
    """The readings of the units (id, context, guidance, learned, intent) that read anything
    beside their diff."""
    return {
        unit_id: UnitReading(context=context, guidance=guidance, learned=learned, intent=intent)
        for unit_id, context, guidance, learned, intent in units
        if context or guidance or intent
    }
