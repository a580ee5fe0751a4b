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
        for source, seen in place.read_only:
            # No mount without a sandbox: the environment is linked where the run looks.
            if not seen.is_symlink() and not seen.exists():
                seen.symlink_to(source.resolve(), target_is_directory=True)
        marker = new_marker()
        return await run_bounded(
            [*limits.prlimit(processes=False), *launch(command, marker)],
            cwd=place.work,
            env=environment(place.work),
            timeout_s=limits.timeout_s,
            marker=marker,
        )
