"""The config's `verify` section, running findings' tests: what turns it on and bounds it, and
where a test may be written.

The command that runs a test is never a model's choice: it comes from a person, on
`tiebreak review --verify` or in the `verify` section of the config read from the base
branch. A reproduction is a new file; a path that could change how the project's other tests
run, or what they test, is refused (:func:`reproduction_problem`), and so, where the run
happens, is a path that exists already or goes through a symlink.
"""

import posixpath
from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
    StringConstraints,
    model_validator,
)

from policies.config_section import ConfigSection, Switch
from policies.config_wording import Shape
from policies.safety import is_safe_relative

TEST_PLACEHOLDER = "{test}"

RUNNER_FILES = frozenset(
    {
        # Python: what pytest, unittest, tox, nox and the interpreter read on their own.
        "__init__.py",
        "__main__.py",
        "conftest.py",
        "pytest.ini",
        "setup.cfg",
        "setup.py",
        "pyproject.toml",
        "tox.ini",
        "noxfile.py",
        ".coveragerc",
        "sitecustomize.py",
        "usercustomize.py",
        # JavaScript and TypeScript.
        "package.json",
        "tsconfig.json",
        ".babelrc",
        ".npmrc",
        # Go, Rust, the JVM, Ruby, make.
        "go.mod",
        "go.sum",
        "Cargo.toml",
        "build.rs",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "Gemfile",
        "Rakefile",
        "Makefile",
        ".env",
    }
)
"""File names a test runner or a build reads by themselves: a reproduction written there would
change how every other test runs, not add one."""
RUNNER_PREFIXES = (
    "jest.config.",
    "vitest.config.",
    "vite.config.",
    "babel.config.",
    ".mocharc",
    "karma.conf.",
)
RUNNER_SUFFIXES = (".pth",)


def reproduction_problem(path: str) -> str | None:
    """Why a reproduction may not be written at `path` (a path in the repository), or None.
    Where the file already is, or what the path goes through, is for the place it is written
    to say."""
    if not is_safe_relative(path) or posixpath.normpath(path) != path.rstrip("/"):
        return f"{path!r} is not a plain relative path inside the repository"
    name = posixpath.basename(path)
    if name in RUNNER_FILES or name.startswith(RUNNER_PREFIXES) or name.endswith(RUNNER_SUFFIXES):
        return f"{path} would change how the project's other tests run: write a test file"
    return None


def _command(command: str) -> str:
    if TEST_PLACEHOLDER not in command:
        raise ValueError(f"the command must name the test as {TEST_PLACEHOLDER}")
    return command


Command = Annotated[
    str, StringConstraints(min_length=1, max_length=2_000), AfterValidator(_command)
]


WorkflowFile = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,100}\.ya?ml$"),
    Shape("a workflow's file name in .github/workflows/, such as tiebreak-verify.yml"),
]
"""A workflow's file name in `.github/workflows/` of the default branch."""


class VerifyConfig(ConfigSection):
    """Running the tests the tester writes as proof of its findings, at the base and the head
    of the change. Off unless a command is given. `tiebreak review --verify` runs them on the
    machine it runs on, in a sandbox; the App runs them only in the repository's own CI, with
    the workflow named by `workflow` (the App's workers never run a repository's code)."""

    command: Command | None = None
    """The command that runs one test, `{test}` standing for its path in the repository, run
    at the repository's root: `python -m pytest -x -q {test}`. Unset, no test is run."""

    setup: Annotated[str, StringConstraints(min_length=1, max_length=2_000)] | None = None
    """A command run once in each tree before its tests (under the same sandbox: no network),
    such as building the project in place."""

    timeout_s: int = Field(default=60, ge=1, le=1_800)
    """Seconds one run (or one setup) may take before it is stopped."""

    memory_mb: int = Field(default=1_024, ge=64, le=16_384)
    """Megabytes of memory one run may use, all its processes together (a cgroup of its own
    holds them), the files it writes counted: they live in memory (`disk_mb`). A run past it
    is killed, and reads "it ran out of memory". Where no cgroup can hold a run (run without a
    memory limit or without a sandbox), each of its processes is held to this much address
    space instead: give a Go project 2048 there, as the go tool reserves close to 1024."""

    disk_mb: int = Field(default=512, ge=16, le=16_384)
    """Megabytes each file system a run writes may hold: what it writes over the tree, `/tmp`
    and `/dev/shm`, each in memory (counted in `memory_mb`) and gone when the run ends. A write
    past it fails with "No space left on device". The tree itself is not counted where the
    sandbox runs as root (the run writes in a layer over it); elsewhere each run copies it,
    and a tree larger than this cannot be copied."""

    processes: int = Field(default=64, ge=1, le=4_096)
    """Processes one run may have at once."""

    max_runs: int = Field(default=20, ge=0, le=200)
    """Tests run per review (each at the base and the head, or with a patch); later ones are
    not run."""

    max_seconds: int = Field(default=600, ge=1, le=7_200)
    """Seconds of running tests per review; once spent, later tests are not run."""

    max_attempts: int = Field(default=2, ge=1, le=5)
    """Tests the tester may give one finding: after a test that passes at the head, it may
    give another until these are used, or the finding is withdrawn."""

    workflow: WorkflowFile | None = None
    """The App's reviews only: the workflow in `.github/workflows/` of the default branch that
    runs each test in the repository's GitHub Actions (`tiebreak-verify.yml`, as `tiebreak
    setup` shows it), with `command` and `setup` as its inputs. Unset, the App runs no test."""

    forks: Switch = False
    """Whether the tests of a pull request from a fork run in the repository's Actions (its
    code would run on the repository's runners). Those of a pull request whose fork was
    deleted never do: GitHub no longer says where its head comes from."""

    timeout_minutes: int = Field(default=20, ge=1, le=60)
    """Minutes the App waits for a workflow run; one that has not finished by then counts as
    not run, and the review goes on."""

    @property
    def enabled(self) -> bool:
        return self.command is not None

    @property
    def in_actions(self) -> bool:
        """Whether the App runs the tests in the repository's GitHub Actions."""
        return self.command is not None and self.workflow is not None

    @model_validator(mode="after")
    def _workflow_needs_command(self) -> "VerifyConfig":
        if self.workflow is not None and self.command is None:
            raise ValueError(
                "verify.workflow needs verify.command: the command it runs a test with"
            )
        return self
