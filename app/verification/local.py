"""The verifier of one review on a local checkout: runs its findings' tests at the base and the
head, and with the coder's patches (:class:`agents.verification.Verifier`).

The trees are made once, on the first test: the head copied from the checkout, the base from
the base ref or the head with the diff reversed; the config's `setup` then runs once in
each, in a copy of the tree that is kept if it passes. The trees are never written again:
every run sees its tree with the reproduction and the patched files written over it, in a
layer of its own (the sandbox's: the tree read-only underneath, nothing copied; a copy where
the runner cannot layer it), where the setup saw its tree, so that what the setup built with
absolute paths is found. The runs are bounded by the config: `max_runs`
tests per review (a reproduction at the base and the head counts one, a fix check one) and
`max_seconds` of their wall time in all; past either, tests are not run.

A reproduction runs at the head and the base at once: when the head fails (the case that
proves something) the review waits for the longer run, not for both in turn. As soon as the
head passes or breaks, the base's run is stopped: it would prove nothing.

The runs use the project's Python, never Tiebreak's (:mod:`app.verification.environments`), and
the Go or Node the command and the setup name, where the host has it
(:mod:`app.verification.toolchains`), and see their copy where the project is, when the runner
can show it there (a sandbox): what the project's environment names of the checkout's path (an
editable install) is the copy. Before the first test, the pre-flight
(:mod:`app.verification.preflight`, asked for at once by
:meth:`LocalVerifier.check_environment`) runs the command on a trivial test at the base; if the
environment cannot run it, no test runs, each `broken` with that reason.
"""

import asyncio
import contextlib
import math
import os
import shlex
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Self

from agents.diff import Diff
from agents.protocol import Patch, Reproduction
from agents.verification import FixCheck, OwnTestRun, Run, Verification
from app.verification import preflight, trees
from app.verification.environments import ProjectPython
from app.verification.removal import remove_tree
from app.verification.runner import Limits, Place, Runner
from app.verification.toolchains import Toolchains
from app.verification.trees import TreeRefused
from app.verification.writes import reproduction_refusal, write_additions
from policies.safety import is_safe_relative
from policies.verify import TEST_PLACEHOLDER, VerifyConfig

_Maker = Callable[[Path], Awaitable[None]]

CONCURRENCY = 2
"""Runs at once: each is a Python process or more, and a worker's machine has few cores."""


@dataclass(frozen=True)
class _Tree:
    """A pristine tree runs copy, or why there is none."""

    side: str
    path: Path
    """Where its runs see their copy of it."""
    source: Path
    """Where it is on disk, as the runs copy it."""
    error: str | None = None


class LocalVerifier:
    """Runs one review's tests on the checkout at `checkout` (at the diff's new side), with
    the Python environment of `project` (default: the checkout; `tiebreak eval`'s, the clone
    its worktrees come from), where runs see their copy when the runner can show it there.

    Use as an async context manager, or call :meth:`aclose`: the trees are removed then."""

    def __init__(
        self,
        checkout: Path,
        diff: Diff,
        config: VerifyConfig,
        runner: Runner,
        *,
        base_ref: str | None = None,
        concurrency: int = CONCURRENCY,
        hidden: Sequence[Path] = (),
        project: Path | None = None,
    ) -> None:
        if config.command is None:
            raise ValueError("verification is off: the config names no command")
        self._checkout = checkout.resolve()
        self._diff = diff
        self._config = config
        self._command = config.command
        self._runner = runner
        self._base_ref = base_ref
        self._limits = Limits.of(config)
        self._slots = asyncio.Semaphore(concurrency)
        self._runs_left = config.max_runs
        self._seconds_left = float(config.max_seconds)
        self._root = Path(tempfile.mkdtemp(prefix="tiebreak-verify-"))
        self._hidden = (self._checkout, self._root, *hidden)
        self._python = ProjectPython.of(project or self._checkout)
        self._toolchains = Toolchains.of(f"{config.command} {config.setup or ''}")
        where = self._python.checkout
        self._seen_at = where if runner.sees_copy_at(where) else None
        """Where runs see their copy (None: in the review's directory, a tree each)."""
        self._trees: asyncio.Task[list[_Tree]] | None = None
        self._checked: asyncio.Task[str | None] | None = None
        self._runs = 0

    @property
    def command(self) -> str:
        return self._command

    @property
    def notes(self) -> tuple[str, ...]:
        """What the runs will not see of the project's environment, and what the pre-flight
        does not check, in words."""
        unchecked = preflight.unchecked(self._command)
        return (*self._python.notes, *([unchecked] if unchecked else []))

    def check_environment(self) -> "asyncio.Task[str | None]":
        """Why the project's environment cannot run tests, in one line, or None: found once,
        before the first test, by the pre-flight (see the module's docstring)."""
        if self._checked is None:
            self._checked = asyncio.create_task(self._check())
        return self._checked

    async def reproduce(self, reproduction: Reproduction) -> Verification:
        if (unfit := await self.check_environment()) is not None:
            return Verification.unfit(reproduction.path, unfit)
        if spent := self._reserve():
            return Verification.not_run(reproduction.path, spent)
        head_tree, base_tree = await self._prepared()
        base = asyncio.create_task(self._run(base_tree, reproduction, ()))
        try:
            head = await self._run(head_tree, reproduction, ())
        except BaseException:
            await _stopped(base)
            raise
        ran_base: Run | None = None
        if head.failed:
            ran_base = await base
        else:
            await _stopped(base)
        self._spend(max(head.seconds, ran_base.seconds if ran_base else 0.0))
        return Verification.of(reproduction.path, self._as_run(reproduction), head, ran_base)

    async def check_fix(self, reproduction: Reproduction, patches: Sequence[Patch]) -> FixCheck:
        if (unfit := await self.check_environment()) is not None:
            return FixCheck.unfit(unfit)
        if spent := self._reserve():
            return FixCheck(verified=None, reason=spent)
        head_tree, _ = await self._prepared()
        run = await self._run(head_tree, reproduction, patches)
        self._spend(run.seconds)
        return FixCheck.of(reproduction.path, run)

    async def run_own(self, test: str) -> OwnTestRun:
        """Run the pull request's own `test` at the head, as the head has it: nothing is
        written over its copy."""
        if (unfit := await self.check_environment()) is not None:
            return OwnTestRun.unfit(test, unfit)
        if spent := self._reserve():
            return OwnTestRun.not_run(test, spent)
        head_tree, _ = await self._prepared()
        run = await self._run_own(head_tree, test)
        self._spend(run.seconds)
        return OwnTestRun.of(test, run)

    async def aclose(self) -> None:
        for task in (self._checked, self._trees):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await asyncio.to_thread(remove_tree, self._root)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _as_run(self, reproduction: Reproduction) -> str:
        return self._command.replace(TEST_PLACEHOLDER, shlex.quote(reproduction.path))

    def _reserve(self) -> str | None:
        """Why no more test may run, reserving one if it may."""
        if self._runs_left <= 0:
            return f"the review's {self._config.max_runs} test runs are spent"
        if self._seconds_left <= 0:
            return f"the review's {self._config.max_seconds} s of test runs are spent"
        self._runs_left -= 1
        return None

    def _spend(self, seconds: float) -> None:
        self._seconds_left -= seconds

    def _prepared(self) -> "asyncio.Task[list[_Tree]]":
        if self._trees is None:
            self._trees = asyncio.create_task(self._prepare())
        return self._trees

    async def _prepare(self) -> list[_Tree]:
        head = await self._made("head", self._copy_head)
        # The base before any setup: it may be the head's copy with the diff reversed.
        base = await self._made("base", self._make_base(head))
        return list(await asyncio.gather(self._set_up(head), self._set_up(base)))

    async def _check(self) -> str | None:
        if problem := self._python.problem(self._seen_at is not None):
            return problem
        _, base = await self._prepared()
        trivial = preflight.trivial_for(self._command)
        if base.error or trivial is None:
            return None  # a broken base breaks every run already, each saying why
        test = preflight.trivial_test(base.source, trivial)
        if reproduction_refusal(base.source, test.path):
            return None  # the project has a file of that name: nothing to check with
        # Its time is the config's for one test, not what the review's tests have left.
        run = await self._run(base, test, (), self._limits)
        python = self._python.described
        with_ = python if trivial is preflight.PYTHON_TEST else f"{trivial.runner} ({python})"
        return preflight.problem(run, self._as_run(test), with_)

    async def _copy_head(self, path: Path) -> None:
        environments = [self._checkout / name for name in self._python.environments]
        await trees.copy_checkout(self._checkout, path, leave_out=[*self._hidden, *environments])

    def _make_base(self, head: _Tree) -> _Maker:
        async def make(path: Path) -> None:
            if self._base_ref is not None:
                await trees.archive(self._checkout, self._base_ref, path)
                return
            if head.error:
                raise TreeRefused(head.error)
            await trees.copy_tree(head.source, path)
            await trees.unapply(self._diff.text, path)

        return make

    async def _made(self, side: str, make: _Maker) -> _Tree:
        seen = self._seen_at or self._root / side
        tree = _Tree(side=side, path=seen, source=self._root / f"{side}-tree")
        try:
            await make(tree.source)
            await asyncio.to_thread(trees.own, tree.source, self._runner.owner)
        except TreeRefused as exc:
            return replace(tree, error=f"the {side} could not be made: {exc.reason}")
        except OSError as exc:
            return replace(tree, error=f"the {side} could not be made: {exc}")
        return tree

    async def _set_up(self, tree: _Tree) -> _Tree:
        if self._config.setup is None or tree.error:
            return tree
        kept = self._root / f"{tree.side}-set-up"
        try:
            await asyncio.to_thread(_empty_directory, kept, self._runner.owner)
        except OSError as exc:
            return replace(tree, error=f"setup failed: its tree could not be kept: {exc}")
        async with self._slots:
            place = self._place(tree, keep=kept)
            run = await self._runner.run(self._config.setup, place, self._limits)
        if run.passed:
            return replace(tree, source=kept)
        why = run.error or f"it exited with {run.exit_code}"
        last = run.output_tail.strip().splitlines()[-1:]
        return replace(tree, error=f"setup failed: {why}" + (f": {last[0][:300]}" if last else ""))

    async def _run(
        self,
        tree: _Tree,
        reproduction: Reproduction,
        patches: Sequence[Patch],
        limits: Limits | None = None,
    ) -> Run:
        if tree.error:
            return Run(error=tree.error)
        if reason := reproduction_refusal(tree.source, reproduction.path):
            return Run(error=reason)
        async with self._slots:
            self._runs += 1
            additions = self._root / f"additions-{self._runs}"
            try:
                write_additions(tree.source, additions, reproduction, patches, self._diff)
                place = self._place(tree, additions=additions)
                bounds = limits or self._limits_now()
                return await self._runner.run(self._as_run(reproduction), place, bounds)
            except TreeRefused as exc:
                return Run(error=exc.reason)
            except OSError as exc:  # a full disk, a tree its setup made unreadable
                return Run(error=f"the run's files could not be written: {exc}")
            finally:
                await _to_the_end(asyncio.to_thread(remove_tree, additions))

    async def _run_own(self, tree: _Tree, test: str) -> Run:
        if tree.error:
            return Run(error=tree.error)
        if not is_safe_relative(test):
            return Run(error=f"{test!r} is not a path inside the repository")
        source = tree.source / test
        if source.is_symlink() or not source.is_file():
            return Run(error=f"{test} is not a file at the head")
        async with self._slots:
            command = self._command.replace(TEST_PLACEHOLDER, shlex.quote(test))
            return await self._runner.run(command, self._place(tree), self._limits_now())

    def _limits_now(self) -> Limits:
        """The run's limits, its time cut to what the review has left."""
        timeout = min(self._limits.timeout_s, max(math.ceil(self._seconds_left), 1))
        return replace(self._limits, timeout_s=timeout)

    def _place(
        self, tree: _Tree, *, additions: Path | None = None, keep: Path | None = None
    ) -> Place:
        return Place(
            work=tree.path,
            tree=tree.source,
            additions=additions,
            keep=keep,
            read_only=(*self._python.shown(tree.path), *self._toolchains.read_only()),
            venv=self._python.venv(tree.path),
            tools=self._toolchains.path,
            hidden=self._hidden,
        )


async def _stopped(task: "asyncio.Task[Run]") -> None:
    """`task` cancelled, and its end awaited: a run's sandbox is gone once it returns."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _to_the_end(work: Awaitable[None]) -> None:
    """Await `work` until it ends, even if the caller is cancelled meanwhile (then the
    cancellation is raised once it has): a copy half removed behind the review's back would
    race the removal of the review's trees."""
    task = asyncio.ensure_future(work)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise


def _empty_directory(path: Path, owner: int | None) -> None:
    """`path` made an empty directory `owner` (None: Tiebreak's user) may write in."""
    path.mkdir()
    if owner is not None:
        os.chown(path, owner, owner)
