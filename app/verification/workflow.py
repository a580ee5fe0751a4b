"""The workflow that runs a finding's test in the repository's own GitHub Actions: the template
Tiebreak ships (`app/templates/tiebreak-verify.yml`), the inputs one run is dispatched with,
and the result it uploads, read back from its artifact's zip.

The zip is the repository's CI's output, so it is untrusted: only its one small JSON file is
read, its size checked before it is read, and its content validated; anything else means the
run showed nothing.

A run for a command the pre-flight checks (:mod:`app.verification.preflight`) first runs it
on the trivial test (`environment_check`); a run whose trivial test did not pass ran no test,
and shows that the project's environment cannot run tests, which binds nothing. Go's trivial
test is a package of its own: the workflow makes its folder (`environment_folder`), an input
sent only for it. A repository's copy of the workflow older than an input of the pre-flight
refuses the dispatch (GitHub's 422, `Unexpected inputs provided`): the run is dispatched
again without the pre-flight (:func:`without_preflight`), its test run as it was before.
"""

import io
import json
import shlex
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from agents.debate.recorded_tests import RecordedRun
from agents.protocol import Patch, Reproduction
from agents.verification import FixCheck, OwnTestRun, Run, Verification
from app.verification import preflight
from policies.errors import TiebreakError
from policies.verify import TEST_PLACEHOLDER

TEMPLATE = "templates/tiebreak-verify.yml"
WORKFLOW_FILE = "tiebreak-verify.yml"
"""The name the workflow is added under, as the config names it."""
ARTIFACT = "tiebreak-result"
"""The artifact the template uploads, and the file in it."""
RESULT_FILE = "result.json"
RUN_TITLE = "Tiebreak {token}"
"""The template's `run-name`: a run's `display_title`, by which its webhook is matched."""

MAX_INPUT_CHARS = 60_000
"""What one dispatch's inputs may hold in all: GitHub takes at most 65,535 characters of
inputs, and the shas, the token and the command take their share."""
MAX_RESULT_BYTES = 64 * 1024
"""The most a result file may be, unpacked; the template writes well under 20 KB."""
MAX_ZIP_BYTES = 1024 * 1024
"""The most of an artifact's zip that is downloaded."""
TAIL_CHARS = 4_000
PREFLIGHT_INPUTS = ("environment_check", "environment_folder")
"""The inputs of the pre-flight's trivial test, which a copy of the workflow may predate."""
UNEXPECTED = "Unexpected inputs provided"
"""GitHub's refusal of a dispatch with inputs the workflow does not declare (422)."""


class WorkflowResultError(TiebreakError):
    """A run's artifact is not the one small result file the template uploads."""


Tail = Annotated[str, StringConstraints(max_length=TAIL_CHARS * 4)]


class SideResult(BaseModel):
    """How the test ran in one checkout, as the template writes it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    exit_code: int | None = None
    output_tail: Tail = ""
    error: Annotated[str, StringConstraints(max_length=500)] | None = None

    def as_run(self) -> Run:
        return Run(
            exit_code=self.exit_code, output_tail=self.output_tail[-TAIL_CHARS:], error=self.error
        )


class EnvironmentCheck(SideResult):
    """How the trivial test ran, where it did not pass."""

    test: Annotated[str, StringConstraints(max_length=200)] = preflight.NAME


class WorkflowResult(BaseModel):
    """The template's result file."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    token: str
    head: SideResult | None = None
    base: SideResult | None = None
    environment: EnvironmentCheck | None = None
    """The pre-flight's trivial test, when it did not pass (then no test ran); None when it
    passed or was not run (a copy of the workflow older than the check)."""


def template_text() -> str:
    """The workflow repositories add, as Tiebreak ships it."""
    return resources.files("app").joinpath(TEMPLATE).read_text(encoding="utf-8")


def command_for(command: str, path: str) -> str:
    """The config's command with the test's path in it, quoted for the shell that runs it."""
    return command.replace(TEST_PLACEHOLDER, shlex.quote(path))


def dispatch_inputs(
    token: str,
    *,
    base: str,
    head: str,
    reproduction: Reproduction,
    command: str,
    setup: str | None,
    patches: Sequence[Patch] = (),
    own_test: bool = False,
) -> dict[str, str] | str:
    """The inputs of one run, or why it cannot be dispatched (too large for GitHub). With
    `own_test`, the run is of the pull request's own test at the head, as it is there: the
    input that says so is sent only then, so that a repository's older copy of the workflow
    still takes every other run."""
    inputs = {
        "token": token,
        "base": base,
        "head": head,
        "test_path": reproduction.path,
        "test_content": reproduction.content,
        "command": command_for(command, reproduction.path),
        "setup": setup or "",
        "patches": json.dumps([p.model_dump(mode="json") for p in patches]) if patches else "",
        **environment_inputs(command),
        **({"own_test": "true"} if own_test else {}),
    }
    size = sum(len(value) for value in inputs.values())
    if size > MAX_INPUT_CHARS:
        what = "the test and its fix are" if patches else "the test is"
        return f"{what} too large for a workflow's inputs ({size} of {MAX_INPUT_CHARS} characters)"
    return inputs


def environment_inputs(command: str) -> dict[str, str]:
    """The pre-flight's inputs: `environment_check`, the trivial test, where it goes and the
    command that runs it (`{test}` standing for its path) as JSON, empty for a command not
    checked; and, for a trivial test that needs a folder of its own (Go's package),
    `environment_folder`, the folder's name: sent only then, so that a repository's copy of
    the workflow older than it still takes every other run at once."""
    trivial = preflight.trivial_for(command)
    if trivial is None:
        return {"environment_check": ""}
    folder, _, name = trivial.name.rpartition("/")
    check = {
        "command": command,
        "name": name,
        "folders": list(trivial.folders),
        "content": trivial.content,
    }
    return {
        "environment_check": json.dumps(check),
        **({"environment_folder": folder} if folder else {}),
    }


def without_preflight(inputs: Mapping[str, str], refusal: str) -> dict[str, str] | None:
    """`inputs` without the pre-flight's, when GitHub's `refusal` of a dispatch (its answer's
    text) names one of them among the inputs the repository's copy of the workflow does not
    declare (a copy older than the input); None when it is refused for anything else."""
    if UNEXPECTED not in refusal:
        return None
    if not any(name in inputs and name in refusal for name in PREFLIGHT_INPUTS):
        return None
    return {name: value for name, value in inputs.items() if name not in PREFLIGHT_INPUTS}


def read_result(archive: bytes, token: str) -> WorkflowResult:
    """The result file of an artifact's zip, checked to be the run `token`'s."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            member = next((i for i in zipped.infolist() if i.filename == RESULT_FILE), None)
            if member is None:
                raise WorkflowResultError(f"the artifact holds no {RESULT_FILE}")
            if member.file_size > MAX_RESULT_BYTES:
                raise WorkflowResultError(f"{RESULT_FILE} is larger than {MAX_RESULT_BYTES} bytes")
            with zipped.open(member) as stream:
                # The size in the zip's directory is the zip's word: read no more than the cap.
                raw = stream.read(MAX_RESULT_BYTES + 1)
    except WorkflowResultError:
        raise
    except Exception as exc:
        # The zip is untrusted, and `zipfile` fails on a hostile one in many ways besides
        # BadZipFile (zlib.error, RuntimeError, NotImplementedError, EOFError, OSError,
        # struct.error, ValueError...). Each means the same: the run showed nothing, said at
        # once rather than left to its deadline.
        raise WorkflowResultError(
            f"the artifact is not a readable zip: {_unreadable(exc)}"
        ) from exc
    if len(raw) > MAX_RESULT_BYTES:
        raise WorkflowResultError(f"{RESULT_FILE} is larger than {MAX_RESULT_BYTES} bytes")
    try:
        result = WorkflowResult.model_validate_json(raw)
    except ValidationError as exc:
        raise WorkflowResultError(
            f"{RESULT_FILE} is not a result: {exc.error_count()} errors"
        ) from exc
    if result.token != token:
        raise WorkflowResultError(f"{RESULT_FILE} is another run's")
    return result


def _unreadable(exc: Exception) -> str:
    """What is wrong with a zip `zipfile` failed on, in words (its own messages may quote the
    zip's member names)."""
    if isinstance(exc, zlib.error):
        return "its compressed data is corrupt"
    if isinstance(exc, NotImplementedError):
        return "it is compressed by a method Tiebreak does not read"
    if isinstance(exc, RuntimeError):
        return f"{RESULT_FILE} is encrypted"
    if isinstance(exc, zipfile.BadZipFile):
        return str(exc)[:200]
    return type(exc).__name__


def shown(
    test: str, command: str, fix: bool, result: WorkflowResult, *, own: bool = False
) -> RecordedRun:
    """What a run's result shows: a reproduction's verification, a fix check, or the pull
    request's `own` test at the head; nothing of the code when its environment could not run
    the trivial test."""
    if result.environment is not None:
        check = result.environment
        ran = command_for(command, check.test)
        unfit = preflight.problem(check.as_run(), ran, "the workflow's environment")
        if unfit is not None:
            if own:
                return RecordedRun(own=OwnTestRun.unfit(test, unfit))
            if fix:
                return RecordedRun(fix=FixCheck.unfit(unfit))
            return RecordedRun(verification=Verification.unfit(test, unfit))
    head = result.head.as_run() if result.head else Run(error="the test did not run at the head")
    if own:
        return RecordedRun(own=OwnTestRun.of(test, head))
    if fix:
        return RecordedRun(fix=FixCheck.of(test, head))
    base = result.base.as_run() if result.base is not None and head.failed else None
    return RecordedRun(verification=Verification.of(test, command, head, base))


def not_run(test: str, fix: bool, reason: str, *, own: bool = False) -> RecordedRun:
    """A run that showed nothing, and why."""
    if own:
        return RecordedRun(own=OwnTestRun.not_run(test, reason))
    if fix:
        return RecordedRun(fix=FixCheck(verified=None, reason=reason))
    return RecordedRun(verification=Verification.not_run(test, reason))
