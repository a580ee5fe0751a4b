"""The pre-flight: which commands it checks, where its trivial test is written, and the line
that says why an environment cannot run tests, from what a real runner prints; and, on a real
project in bubblewrap's sandbox, the verifier that stops every test when it fails."""

from pathlib import Path

import pytest

from agents.verification import Evidence, Run
from app.verification import preflight
from app.verification.local import LocalVerifier
from app.verification.sandbox import Bwrap
from tests.app.verification.conftest import needs_bwrap
from tests.scenarios.shop import FIX, REPRODUCTION, config, make_project


@pytest.mark.parametrize(
    ("command", "checked"),
    [
        ("python -m pytest -x -q {test}", True),
        ("python3.12 -m unittest {test}", True),
        (".venv/bin/pytest {test}", True),
        ("uv run --frozen pytest {test}", True),
        ("go test ./$(dirname {test})", True),
        ("node --test {test}", True),
        ("npx vitest run {test}", False),
        ("npm test -- {test}", False),
        ("make test TEST={test}", False),
        ("python -m pytest 'unclosed {test}", False),
    ],
)
def test_the_commands_that_run_python_go_test_or_node_test_are_checked(
    command: str, checked: bool
) -> None:
    assert preflight.applies(command) is checked
    assert (preflight.unchecked(command) is None) is checked


def test_go_s_trivial_test_is_a_package_of_its_own_and_node_s_beside_the_tests(
    tmp_path: Path,
) -> None:
    go = preflight.trivial_for("go test ./$(dirname {test})")
    node = preflight.trivial_for("node --test {test}")
    assert go is not None
    assert node is not None
    (tmp_path / "test").mkdir()

    assert preflight.trivial_test(tmp_path, go).path == (
        "tiebreakenvironment/tiebreak_environment_test.go"
    )
    assert preflight.trivial_test(tmp_path, node).path == "test/tiebreak-environment.test.cjs"
    assert "is not checked before the review" in (preflight.unchecked("npm test {test}") or "")


def test_the_trivial_test_is_written_beside_the_projects_tests(tmp_path: Path) -> None:
    assert preflight.trivial_test(tmp_path).path == preflight.NAME
    (tmp_path / "test").mkdir()
    assert preflight.trivial_test(tmp_path).path == f"test/{preflight.NAME}"
    (tmp_path / "tests").symlink_to(tmp_path / "test")
    assert preflight.trivial_test(tmp_path).path == f"test/{preflight.NAME}"
    (tmp_path / "tests").unlink()
    (tmp_path / "tests").mkdir()
    assert preflight.trivial_test(tmp_path).path == f"tests/{preflight.NAME}"


COLLECTION_ERROR = """\
==================================== ERRORS ====================================
_________________ ERROR collecting tests/test_tiebreak_environment.py __________
ImportError while loading conftest '/work/tests/conftest.py'.
tests/conftest.py:1: in <module>
    import hypothesis
E   ModuleNotFoundError: No module named 'hypothesis'
=========================== short test summary info ============================
ERROR tests/test_tiebreak_environment.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.05s"""


@pytest.mark.parametrize(
    ("run", "said"),
    [
        (Run(exit_code=0, output_tail="1 passed in 0.01s"), None),
        (
            Run(exit_code=1, output_tail="/p/.venv/bin/python: No module named pytest"),
            "/p/.venv/bin/python: No module named pytest (`cmd`, with .venv, exited with 1 on "
            "a test that passes)",
        ),
        (
            Run(exit_code=127, output_tail="/bin/sh: 1: python: not found"),
            "/bin/sh: 1: python: not found (`cmd`, with .venv, exited with 127 on a test that "
            "passes)",
        ),
        (
            Run(exit_code=4, output_tail=COLLECTION_ERROR),
            "ModuleNotFoundError: No module named 'hypothesis' (`cmd`, with .venv, exited with "
            "4 on a test that passes)",
        ),
        (
            Run(error="timed out after 60 s"),
            "`cmd`, with .venv, timed out after 60 s on a test that passes",
        ),
    ],
    ids=["passed", "no pytest", "not found", "conftest", "timeout"],
)
def test_a_run_that_did_not_pass_says_why_in_one_line(run: Run, said: str | None) -> None:
    assert preflight.problem(run, "cmd", ".venv") == said


@needs_bwrap
async def test_an_environment_that_cannot_run_tests_runs_none_and_binds_nothing(
    sandbox: Bwrap, tmp_path: Path
) -> None:
    project = make_project(tmp_path, pytest=False)

    async with LocalVerifier(project.checkout, project.diff, config(), sandbox) as verifier:
        unfit = await verifier.check_environment()
        shown = await verifier.reproduce(REPRODUCTION)
        fixed = await verifier.check_fix(REPRODUCTION, [FIX])

    assert unfit is not None
    assert unfit.startswith(f"{project.checkout}/.venv/bin/python: No module named pytest (")
    assert "with the virtual environment .venv, exited with 1 on a test that passes" in unfit
    assert (shown.verdict, shown.environment) == (Evidence.BROKEN, unfit)
    assert shown.reason == f"the project's environment cannot run its tests: {unfit}"
    assert (fixed.verified, fixed.environment) == (None, unfit)


@needs_bwrap
async def test_a_project_with_a_file_of_the_trivial_tests_name_is_not_checked(
    sandbox: Bwrap, tmp_path: Path
) -> None:
    project = make_project(tmp_path, pytest=False)
    (project.checkout / "tests" / preflight.NAME).write_text("raise SystemExit(3)\n")

    async with LocalVerifier(project.checkout, project.diff, config(), sandbox) as verifier:
        unfit = await verifier.check_environment()

    assert unfit is None


GO_CRASH = (
    Path(__file__).parents[2] / "fixtures" / "test_output" / "go_runtime_crash.txt"
).read_text()
"""A Go 1.19 program with 20 goroutines asleep that sent itself SIGABRT, as its runtime dies:
the signal's line, every goroutine's stack, then the registers (322 lines)."""


@pytest.mark.parametrize(
    ("kept", "said"),
    [
        (GO_CRASH, "SIGABRT: abort"),
        ("\n".join(GO_CRASH.splitlines()[-60:]), preflight.GO_CRASH),
    ],
    ids=["whole", "its-last-60-lines"],
)
def test_a_go_program_that_crashed_is_said_to_have_crashed_not_its_last_register(
    kept: str, said: str
) -> None:
    """A go tool that dies of a signal in the pre-flight ends its output with its registers:
    `gs 0x0` says nothing of why."""
    run = Run(exit_code=2, output_tail=kept)

    assert preflight.problem(run, "go test ./x", "go") == (
        f"{said} (`go test ./x`, with go, exited with 2 on a test that passes)"
    )


def recorded(name: str) -> str:
    return (Path(__file__).parents[2] / "fixtures" / "test_output" / name).read_text()


def test_a_go_tool_that_could_not_start_a_thread_is_said_so_not_by_its_signal() -> None:
    """`go test` of a module run under a 850 MB address space (Go 1.19): now and then the go
    tool cannot start a thread, and aborts (143 lines, the registers last)."""
    run = Run(exit_code=2, output_tail=recorded("go_thread_refused.txt"))

    assert preflight.problem(run, "go test ./x", "go") == (
        "runtime/cgo: pthread_create failed: Resource temporarily unavailable "
        "(`go test ./x`, with go, exited with 2 on a test that passes)"
    )


def test_a_go_tool_refused_the_address_space_it_reserves_says_what_it_wants() -> None:
    """`go test` of a module run under a 500 MB address space (Go 1.19), as where no cgroup
    holds a run and `verify.memory_mb` is 500: the go tool dies as it starts."""
    run = Run(exit_code=2, output_tail=recorded("go_address_space_refused.txt"))

    assert preflight.problem(run, "go test ./x", "go") == (
        f"fatal error: failed to reserve page summary memory: {preflight.GO_RESERVATION_HINT} "
        "(`go test ./x`, with go, exited with 2 on a test that passes)"
    )
