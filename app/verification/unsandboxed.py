"""Running findings' tests with no sandbox, for `--no-sandbox` only.

WARNING: a test the tester writes is code a model wrote after reading the pull request,
which anyone may have written to steer it. Run without a sandbox, that test runs as
Tiebreak's user, with its rights: it reads every file that user can (the App's private key,
the `.env` file, other checkouts), reaches the network, and writes anywhere that user may.
Only the environment is cleared of secrets, and the bounds that need no sandbox hold: the
wall clock (the process group is killed past it, though a process that leaves the group
escapes), the output kept, and the address space, file size, open files and core dumps.
Processes, the memory of all of them together and the disk are not bounded: no cgroup holds
the run, and its copy is on the host's disk, in a directory of its own beside where a
sandbox's run would see it.
"""

import asyncio
import os
import tempfile
from pathlib import Path

from agents.verification import Run
from app.verification.process import launch, new_marker, run_bounded
from app.verification.removal import remove_tree
from app.verification.runner import Limits, Place, environment
from app.verification.trees import TreeRefused, copy_tree


class Unsandboxed:
    """Runs commands as Tiebreak's user, on the host, bounded where no sandbox is needed (see
    the module's warning)."""

    @property
    def owner(self) -> int | None:
        return None

    def sees_copy_at(self, path: Path) -> bool:
        """Never: the host has what it has there (the checkout, most of all)."""
        return False

    async def run(self, command: str, place: Place, limits: Limits) -> Run:
        work = Path(tempfile.mkdtemp(prefix=f"{place.work.name}-run-", dir=place.work.parent))
        try:
            try:
                await _copy(place, work)
            except TreeRefused as exc:
                return Run(error=f"the command could not be started: {exc.reason}")
            marker = new_marker()
            run = await run_bounded(
                [*limits.prlimit(processes=False, address_space=True), *launch(command, marker)],
                cwd=work,
                env=environment(work, _in_copy(place, work), place.tools),
                timeout_s=limits.timeout_s,
                marker=marker,
            )
            if run.passed and place.keep is not None:
                await asyncio.to_thread(_keep, place, work)
            return run
        finally:
            await asyncio.to_thread(remove_tree, work)


async def _copy(place: Place, work: Path) -> None:
    """`work` (new, empty) made the run's copy: the tree, the additions over it, the
    environments linked where the run looks for them (no mount without a sandbox)."""
    if place.tree is not None:
        await asyncio.to_thread(work.rmdir)
        await copy_tree(place.tree, work)
    if place.additions is not None:
        await copy_tree(place.additions, work, over=True)
    await asyncio.to_thread(_link_environments, place, work)


def _link_environments(place: Place, work: Path) -> None:
    for source, seen in place.read_only:
        if not seen.is_relative_to(place.work):
            continue  # an interpreter outside the copy is where it is already
        link = work / seen.relative_to(place.work)
        if not os.path.lexists(link):
            link.symlink_to(source.resolve(), target_is_directory=True)


def _in_copy(place: Place, work: Path) -> Path | None:
    """The run's virtual environment, where it is linked in the copy at `work`."""
    if place.venv is None:
        return None
    return work / place.venv.relative_to(place.work)


def _keep(place: Place, work: Path) -> None:
    """The copy moved to where the place keeps it (an empty directory, replaced)."""
    assert place.keep is not None
    place.keep.rmdir()
    work.rename(place.keep)
