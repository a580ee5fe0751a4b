"""A case checked out for `tiebreak eval --checkout DIR`: a throw-away git worktree of a clone
at the case's introducing commit, whose other files the agents read (definitions, callers,
tests: `app.parsing.Parsing.related`), and with `--verify` where the findings' tests run, its
base commit the tests' base, with a verifier for each review of the case
(:class:`app.verification.local.LocalVerifier`). The tests run with the clone's Python
environment (its `.venv`), as the project's people run theirs there, each run seeing its copy
where the clone is: an editable install of the clone's project is the copy it tests.

The worktree is detached (no branch of the clone moves) and removed when the case's reviews
end, however they end. A case that names no base commit, or whose commits the clone lacks,
gets none: it is reviewed without tests (and without the repository's other files), and says
why. Without tests, a case needs no base commit.
"""

import asyncio
import contextlib
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.debate.proofs import Proving
from agents.diff import Diff
from app.evaluation.cases import OBJECT_ID, Case
from app.evaluation.errors import HistoryError
from app.evaluation.history import Git
from app.verification.local import LocalVerifier
from app.verification.runner import Runner
from policies.verify import VerifyConfig


@dataclass(frozen=True)
class Verifying:
    """Where the cases are checked out, and how their findings' tests run: the clone holding
    the cases' commits, the command and its bounds, the runner (a sandbox, or none), and the
    files no test may see. Without a command (`config` None) the checkouts are read, and no
    test runs."""

    clone: Path
    config: VerifyConfig | None = None
    runner: Runner | None = None
    hidden: Sequence[Path] = ()

    @contextlib.asynccontextmanager
    async def checkout(self, case: Case) -> AsyncIterator["CaseCheckout"]:
        """`case` checked out for its tests while the context lasts, or why it cannot be."""
        git = Git(self.clone)
        place = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="tiebreak-eval-"))
        tree = place / case.id
        try:
            tests = self.config is not None
            unverified = await asyncio.to_thread(_check_out, git, case, tree, tests)
            yield CaseCheckout(self, tree, case.base_commit, unverified)
        finally:
            await asyncio.to_thread(_remove, git, tree, place)


@dataclass(frozen=True)
class CaseCheckout:
    """A case's introducing commit checked out in `tree`, or why it could not be
    (`unverified`)."""

    verifying: Verifying
    tree: Path
    base: str | None
    unverified: str | None = None

    @property
    def tests(self) -> bool:
        """Whether the findings' tests run here (else the tree is only read)."""
        return self.verifying.config is not None

    @contextlib.asynccontextmanager
    async def proving(self, diff: Diff) -> AsyncIterator[Proving | None]:
        """Who runs the tests of one review of the case, each review with its own runs and
        seconds (None: nobody, the case being `unverified`)."""
        verifying = self.verifying
        if self.unverified is not None or verifying.config is None or verifying.runner is None:
            yield None
            return
        # The clone holds the fixes to come: no test may read them.
        hidden = (verifying.clone, *verifying.hidden)
        async with LocalVerifier(
            self.tree,
            diff,
            verifying.config,
            verifying.runner,
            base_ref=self.base,
            hidden=hidden,
            project=verifying.clone,
        ) as verifier:
            yield Proving(verifier, verifying.config.max_attempts)


def _check_out(git: Git, case: Case, tree: Path, tests: bool) -> str | None:
    """None once `tree` holds the case's introducing commit; else why it cannot (nor its
    `tests` run)."""
    if tests and case.base_commit is None:
        return "the case names no base commit (cases built by `tiebreak eval cases` do)"
    if re.fullmatch(OBJECT_ID, case.introducing_commit) is None:
        return f"its introducing commit {case.introducing_commit[:80]!r} is not a full id"
    needed = (case.introducing_commit, case.base_commit) if tests else (case.introducing_commit,)
    for commit in filter(None, needed):
        try:
            git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{commit}^{{commit}}")
        except HistoryError:
            return f"{git.repo} has no commit {commit}"
    try:
        # Both ids are hex digits alone: neither can be read as an option.
        git("worktree", "add", "--detach", "--quiet", str(tree), case.introducing_commit)
    except HistoryError as exc:
        return f"its introducing commit could not be checked out: {exc}"
    return None


def _remove(git: Git, tree: Path, place: Path) -> None:
    """The worktree at `tree` gone, from the disk and from the clone's list."""
    if tree.exists():
        try:
            git("worktree", "remove", "--force", str(tree))
        except HistoryError:
            # Its files go below; git then forgets a worktree whose directory is gone.
            shutil.rmtree(place, ignore_errors=True)
            git("worktree", "prune")
    shutil.rmtree(place, ignore_errors=True)
