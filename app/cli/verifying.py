"""Findings' tests run from the command line, in a sandbox: `tiebreak review --verify` on the
local checkout, `tiebreak eval --verify` on each case's commits in a clone.

The command that runs a test is the person's: `--verify "python -m pytest -x -q {test}"`, or,
for `review` with `--base REF`, the `verify` section of `.github/tiebreak.yml` as it is at
that ref (never as the change under review has it). The section's other settings — setup,
limits, bounds — apply either way; the options override them. `review`'s tests run at the
base (`--base REF`, or the checkout with the diff reversed) and at the checkout itself, which
must be at the diff's new side; `eval`'s at each case's base and introducing commits
(:mod:`app.evaluation.checkouts`). Each run is in bubblewrap's sandbox, in a cgroup of its own
that bounds its memory; where bubblewrap cannot run, or no cgroup can be made, verification is
refused with the reason and the fix, unless `--no-sandbox` asks for it without isolation, or
`--no-memory-limit` without the cgroup.

The tests run with the project's own Python: its virtual environment (`.venv`, `venv`, or any
top directory holding a `pyvenv.cfg`), else the system's; never Tiebreak's. Before any model
is asked anything, `review`'s pre-flight runs the command on a trivial test at the base: an
environment that cannot run it stops the review (:class:`EnvironmentUnfit`), saying why.
"""

import contextlib
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import click
from pydantic import ValidationError

from agents.debate.proofs import Proving
from agents.diff import Diff
from agents.verification import UNFIT
from app.cli.exits import fail
from app.cli.printable import printable
from app.cli.trial_progress import TrialProgress
from app.evaluation.checkouts import Verifying
from app.evaluation.errors import HistoryError
from app.evaluation.history import Git
from app.settings import env_file, get_settings
from app.verification.local import LocalVerifier
from app.verification.runner import Runner
from app.verification.sandbox import SandboxUnavailable, sandboxed
from app.verification.unsandboxed import Unsandboxed
from policies.config import CONFIG_PATH, parse_config
from policies.config_file import MAX_CONFIG_BYTES
from policies.errors import TiebreakError
from policies.verify import VerifyConfig

NO_SANDBOX_WARNING = (
    "running the tester's tests WITHOUT a sandbox, as you: they can read your files, reach "
    "the network and write wherever you may"
)
NO_MEMORY_LIMIT_WARNING = (
    "running the tester's tests in the sandbox WITHOUT a memory limit on each run: each "
    "process is held to verify.memory_mb of address space, but a run's processes together, "
    "and its files in memory, may take more"
)


class EnvironmentUnfit(TiebreakError):
    """The pre-flight's trivial test did not pass: the project's environment cannot run its
    tests, for `reason` (one line)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def said(self) -> str:
        """What the terminal is told, on one line."""
        return printable(f"{UNFIT}: {self.reason}", one_line=True)


@dataclass(frozen=True)
class VerifyRequest:
    """What the options of `tiebreak review` ask of verification."""

    command: str | None = None
    setup: str | None = None
    base: str | None = None
    sandbox: bool = True
    memory_limit: bool = True


def eval_verifying(
    command: str | None,
    setup: str | None,
    checkout: Path | None,
    *,
    sandbox: bool,
    memory_limit: bool,
) -> Verifying | None:
    """Where `tiebreak eval` checks its cases out, and how it runs their findings' tests
    (None: it checks out none). Exit 2 when they cannot be run as asked."""
    if checkout is None:
        if command is not None:
            fail("--verify needs --checkout DIR, a clone holding the cases' commits")
        return None
    try:
        Git(checkout)("rev-parse", "--git-dir")
    except HistoryError:
        fail(f"--checkout: {checkout} is not a git repository")
    if command is None:  # the checkouts are read, for the code the changes reach
        return Verifying(checkout.resolve())
    config = _configured(VerifyConfig(), command, setup)
    runner = choose_runner(sandbox, memory_limit=memory_limit)
    return Verifying(checkout.resolve(), config, runner, hidden=secrets())


def verify_config(
    request: VerifyRequest, checkout: Path | None, read: str = ""
) -> VerifyConfig | None:
    """The verification asked for — the base's config section under the options — or None
    when no command is named. `checkout` is the work tree at the diff's new side (None if
    there is none: `read` says why). Exit 2 when it cannot be run as asked."""
    section = _base_section(checkout, request.base) if request.base else VerifyConfig()
    config = _configured(section, request.command, request.setup)
    if config.command is None:
        return None
    if checkout is None:
        fail(f"--verify needs a checkout at the diff's new side (--repo DIR): {read}")
    setup = f", after {config.setup}" if config.setup else ""
    given = [o for o, v in (("--verify", request.command), ("--verify-setup", request.setup)) if v]
    configured = section.command or section.setup
    source = [*given, *([f"{CONFIG_PATH} at {request.base}"] if configured else [])]
    said = f"{config.command}{setup} (from {' and '.join(source) or 'the defaults'})"
    click.echo(f"tiebreak: findings' tests: {printable(said, one_line=True)}", err=True)
    return config


@contextlib.asynccontextmanager
async def proving(
    request: VerifyRequest, config: VerifyConfig | None, checkout: Path | None, diff: Diff
) -> AsyncIterator[Proving | None]:
    """Who runs the findings' tests for the review, for as long as it runs (None: nobody),
    once the pre-flight shows the project's environment runs a test; else
    :class:`EnvironmentUnfit`, before any model is asked anything."""
    if config is None or checkout is None:
        yield None
        return
    runner = choose_runner(request.sandbox, memory_limit=request.memory_limit)
    async with LocalVerifier(
        checkout, diff, config, runner, base_ref=request.base, hidden=secrets()
    ) as verifier:
        if (unfit := await verifier.check_environment()) is not None:
            raise EnvironmentUnfit(unfit)
        for note in verifier.notes:
            click.echo(f"tiebreak: note: {printable(note, one_line=True)}", err=True)
        said = TrialProgress(verifier, lambda line: click.echo(line, err=True))
        yield Proving(said, config.max_attempts)


def choose_runner(sandbox: bool, *, memory_limit: bool = True) -> Runner:
    """Bubblewrap's sandbox, each run in a cgroup of its own (`memory_limit` off: none, with
    a warning), or (`sandbox` off) no sandbox, with a warning. Exit 2 when there can be no
    sandbox (or no cgroup) here."""
    if not sandbox:
        click.echo(f"tiebreak: warning: {NO_SANDBOX_WARNING}", err=True)
        return Unsandboxed()
    if not memory_limit:
        click.echo(f"tiebreak: warning: {NO_MEMORY_LIMIT_WARNING}", err=True)
    try:
        return sandboxed(memory_limit=memory_limit)
    except SandboxUnavailable as exc:
        fail(f"--verify cannot run the tests in a sandbox here: {exc.reason}")


def secrets() -> list[Path]:
    """What of Tiebreak's own a test must not see wherever it is, even inside what the
    sandbox shows (the checkout's copy leaves it out): the `.env` file, the App's private key
    and the data directory, with other repositories' snapshots."""
    settings = get_settings()
    found = [env_file(), settings.github_private_key_path, settings.tiebreak_data_dir]
    return [path.absolute() for path in found if path is not None and path.exists()]


def _configured(section: VerifyConfig, command: str | None, setup: str | None) -> VerifyConfig:
    """`section` with the options' command and setup over it. Exit 2 if it is invalid."""
    changes = {"command": command, "setup": setup}
    try:
        return VerifyConfig.model_validate(
            {**section.model_dump(), **{k: v for k, v in changes.items() if v is not None}}
        )
    except ValidationError as exc:
        fail(f"invalid option: --verify: {exc.errors(include_url=False)[0]['msg']}")


def _base_section(checkout: Path | None, base: str) -> VerifyConfig:
    """The `verify` section of the config at `base` (the defaults if it has none), the file
    and its commit said on standard error."""
    if checkout is None:
        fail("--base needs a git checkout (--repo DIR)")
    resolved = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--verify", "--quiet", "--end-of-options",
         f"{base}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    if resolved.returncode:
        fail(f"--base: {checkout} has no commit {base!r}")
    commit = resolved.stdout.strip()
    shown = subprocess.run(
        ["git", "-C", str(checkout), "show", "--end-of-options", f"{commit}:{CONFIG_PATH}"],
        capture_output=True,
        check=False,
    )
    where = f"{CONFIG_PATH} at {base} ({commit[:7]})"
    if shown.returncode:
        click.echo(f"tiebreak: config: no {where}: the defaults apply", err=True)
        return VerifyConfig()
    click.echo(f"tiebreak: config: {where}", err=True)
    if len(shown.stdout) > MAX_CONFIG_BYTES:
        fail(f"{CONFIG_PATH} at {base} is larger than {MAX_CONFIG_BYTES:,} bytes")
    config, problems = parse_config(shown.stdout.decode("utf-8", errors="replace"))
    for problem in problems:
        click.echo(f"tiebreak: {CONFIG_PATH} at {base}: {problem}", err=True)
    return config.verify
