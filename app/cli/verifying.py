"""`tiebreak review --verify`: the findings' tests run on the local checkout, in a sandbox.

The command that runs a test is the person's: `--verify "python -m pytest -x -q {test}"`, or,
with `--base REF`, the `verify` section of `.github/tiebreak.yml` as it is at that ref (never
as the change under review has it). The section's other settings — setup, limits, bounds —
apply either way; the options override them. The tests run at the base (`--base REF`, or
the checkout with the diff reversed) and at the checkout itself, which must be at the diff's
new side, each in bubblewrap's sandbox; where bubblewrap cannot run, verification is refused
with the reason and the fix, unless `--no-sandbox` asks for it without isolation.
"""

import contextlib
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import click
from pydantic import ValidationError

from agents.diff import Diff
from agents.proofs import Proving
from app.cli.exits import fail
from app.settings import env_file, get_settings
from app.verification.local import LocalVerifier
from app.verification.runner import Runner
from app.verification.sandbox import SandboxUnavailable, sandboxed
from app.verification.unsandboxed import Unsandboxed
from policies.config import CONFIG_PATH, MAX_CONFIG_BYTES, parse_config
from policies.verification import VerifyConfig

F = TypeVar("F", bound=Callable[..., object])

NO_SANDBOX_WARNING = (
    "running the tester's tests WITHOUT a sandbox, as you: they can read your files, reach "
    "the network and write wherever you may"
)


@dataclass(frozen=True)
class VerifyRequest:
    """What the options of `tiebreak review` ask of verification."""

    command: str | None = None
    setup: str | None = None
    base: str | None = None
    sandbox: bool = True


def verify_options(command: F) -> F:
    """`--verify`, `--verify-setup`, `--base`, `--no-sandbox`."""
    options = [
        click.option(
            "--verify",
            "verify_command",
            metavar="COMMAND",
            help="Run the tester's tests with COMMAND ({test} is the test's path), at the "
            "base and at the checkout, in a sandbox: a test that fails only at the checkout "
            'proves its finding. Example: "python -m pytest -x -q {test}".',
        ),
        click.option(
            "--verify-setup",
            metavar="COMMAND",
            help="Run COMMAND once in each tree before its tests (no network).",
        ),
        click.option(
            "--base",
            metavar="REF",
            help="The commit the diff is against (default: the checkout with the diff "
            f"reversed); its {CONFIG_PATH} may name the test command.",
        ),
        click.option(
            "--no-sandbox",
            is_flag=True,
            help="Run the tests without isolation, as you. Only for tests you would run yourself.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def verify_config(
    request: VerifyRequest, checkout: Path | None, read: str = ""
) -> VerifyConfig | None:
    """The verification asked for — the base's config section under the options — or None
    when no command is named. `checkout` is the work tree at the diff's new side (None if
    there is none: `read` says why). Exit 2 when it cannot be run as asked."""
    section = _base_section(checkout, request.base) if request.base else VerifyConfig()
    changes = {"command": request.command, "setup": request.setup}
    try:
        config = VerifyConfig.model_validate(
            {**section.model_dump(), **{k: v for k, v in changes.items() if v is not None}}
        )
    except ValidationError as exc:
        fail(f"invalid option: --verify: {exc.errors(include_url=False)[0]['msg']}")
    if not config.enabled:
        return None
    if checkout is None:
        fail(f"--verify needs a checkout at the diff's new side (--repo DIR): {read}")
    return config


@contextlib.asynccontextmanager
async def proving(
    request: VerifyRequest, config: VerifyConfig | None, checkout: Path | None, diff: Diff
) -> AsyncIterator[Proving | None]:
    """Who runs the findings' tests for the review, for as long as it runs (None: nobody)."""
    if config is None or checkout is None:
        yield None
        return
    runner = _runner(request)
    async with LocalVerifier(
        checkout, diff, config, runner, base_ref=request.base, hidden=_secrets()
    ) as verifier:
        yield Proving(verifier, config.max_attempts)


def _runner(request: VerifyRequest) -> Runner:
    if not request.sandbox:
        click.echo(f"tiebreak: warning: {NO_SANDBOX_WARNING}", err=True)
        return Unsandboxed()
    try:
        return sandboxed()
    except SandboxUnavailable as exc:
        fail(f"--verify cannot run the tests in a sandbox here: {exc.reason}")


def _secrets() -> list[Path]:
    """Files of Tiebreak's own secrets, which a test must not see wherever they are: the
    `.env` file and the App's private key."""
    found = [env_file(), get_settings().github_private_key_path]
    return [path for path in found if path is not None and path.exists()]


def _base_section(checkout: Path | None, base: str) -> VerifyConfig:
    """The `verify` section of the config at `base` (the defaults if it has none)."""
    if checkout is None:
        fail("--base needs a git checkout (--repo DIR)")
    shown = subprocess.run(
        ["git", "-C", str(checkout), "show", "--end-of-options", f"{base}:{CONFIG_PATH}"],
        capture_output=True,
        check=False,
    )
    if shown.returncode:
        missing = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "--verify", "--quiet", "--end-of-options",
             f"{base}^{{commit}}"],
            capture_output=True,
            check=False,
        )  # fmt: skip
        if missing.returncode:
            fail(f"--base: {checkout} has no commit {base!r}")
        return VerifyConfig()
    if len(shown.stdout) > MAX_CONFIG_BYTES:
        fail(f"{CONFIG_PATH} at {base} is larger than {MAX_CONFIG_BYTES:,} bytes")
    config, problems = parse_config(shown.stdout.decode("utf-8", errors="replace"))
    for problem in problems:
        click.echo(f"tiebreak: {CONFIG_PATH} at {base}: {problem}", err=True)
    return config.verify
