"""Running findings' tests with no sandbox, for `--no-sandbox` only.

WARNING: a test the tester writes is code a model wrote after reading the pull request,
which anyone may have written to steer it. Run without a sandbox, that test runs as
Tiebreak's user, with its rights: it reads every file that user can (the App's private key,
the `.env` file, other checkouts), reaches the network, and writes anywhere that user may.
Only the environment is cleared of secrets, and the bounds that need no sandbox hold: the
wall clock (the process group is killed past it, though a process that leaves the group
escapes), the output kept, and the address space, file size, open files and core dumps.
Processes are not bounded: the kernel counts them per user, Tiebreak's own included.
"""

import os

from agents.verification import Run
from app.verification.process import launch, new_marker, run_bounded
from app.verification.runner import Limits, Place, environment


class Unsandboxed:
    """Runs commands as Tiebreak's user, on the host, bounded where no sandbox is needed (see
    the module's warning)."""

    @property
    def owner(self) -> int | None:
        return None

    async def run(self, command: str, place: Place, limits: Limits) -> Run:
        _link_environments(place)
        marker = new_marker()
        return await run_bounded(
            [*limits.prlimit(processes=False), *launch(command, marker)],
            cwd=place.work,
            env=environment(place.work),
            timeout_s=limits.timeout_s,
            marker=marker,
        )


def _link_environments(place: Place) -> None:
    """No mount without a sandbox: an environment is linked where the run looks for it in its
    copy (an interpreter outside the copy is where it is already)."""
    for source, seen in place.read_only:
        if seen.is_relative_to(place.work) and not os.path.lexists(seen):
            seen.symlink_to(source.resolve(), target_is_directory=True)
