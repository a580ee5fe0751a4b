"""What `tiebreak review --verify` says while findings' tests run: a line on standard error as
each trial starts and one as it ends, so that minutes of tests are not minutes of silence
(`--json`'s standard output stays the review's alone)."""

from collections.abc import Callable, Sequence

from agents.protocol import Patch, Reproduction
from agents.verification import FixCheck, OwnTestRun, Verification, Verifier
from app.cli.printable import printable


class TrialProgress:
    """A :class:`Verifier` wrapper that reports each trial as it starts and ends."""

    def __init__(self, verifier: Verifier, report: Callable[[str], None]) -> None:
        self.verifier = verifier
        self.report = report

    @property
    def command(self) -> str:
        return self.verifier.command

    async def reproduce(self, reproduction: Reproduction) -> Verification:
        self._say(reproduction.path, "running at the base and the head")
        ran = await self.verifier.reproduce(reproduction)
        verdict = ran.verdict.replace("_", " ")
        self._say(reproduction.path, f"{verdict} ({ran.seconds:.1f} s)")
        return ran

    async def check_fix(self, reproduction: Reproduction, patches: Sequence[Patch]) -> FixCheck:
        self._say(reproduction.path, "running at the head with the coder's patch")
        checked = await self.verifier.check_fix(reproduction, patches)
        said = {True: "passes with the patch", False: "fails with the patch", None: "not run"}
        self._say(reproduction.path, f"{said[checked.verified]} ({checked.seconds:.1f} s)")
        return checked

    async def run_own(self, test: str) -> OwnTestRun:
        self._say(test, "running the pull request's own test at the head")
        ran = await self.verifier.run_own(test)
        said = {True: "passes", False: "fails", None: "not run"}
        self._say(test, f"{said[ran.passed]} ({ran.seconds:.1f} s)")
        return ran

    def _say(self, test: str, what: str) -> None:
        # The path is the tester's: shown without what would drive the terminal.
        self.report(f"tiebreak: test {printable(test, one_line=True)}: {what}")
