"""A workflow run's artifact, read back: the one small result file, or nothing at all."""

import json
from collections.abc import Callable

import pytest

from agents.verification import Evidence
from app.verification.workflow import (
    MAX_RESULT_BYTES,
    WorkflowResultError,
    read_result,
    shown,
)
from tests.kits.artifacts import UNREADABLE, zipped


def result(token: str = "tok", head: int = 1, base: int = 0) -> bytes:
    return json.dumps(
        {
            "token": token,
            "head": {"exit_code": head, "output_tail": "AssertionError", "error": None},
            "base": {"exit_code": base, "output_tail": "", "error": None},
        }
    ).encode()


def test_a_result_is_read_and_shows_what_ran() -> None:
    read = read_result(zipped({"result.json": result()}), "tok")

    recorded = shown("test_bug.py", "python3 test_bug.py", False, read)

    assert recorded.verification is not None
    assert recorded.verification.verdict is Evidence.REPRODUCED
    assert recorded.verification.output_tail == "AssertionError"


@pytest.mark.parametrize(
    ("archive", "said"),
    [
        (b"not a zip", "not a readable zip"),
        (zipped({"other.json": result()}), "holds no result.json"),
        (zipped({"result.json": result(token="someone-else")}), "another run's"),
        (zipped({"result.json": b"{" + b" " * (MAX_RESULT_BYTES + 1) + b"}"}), "larger than"),
        (zipped({"result.json": b"[1, 2]"}), "not a result"),
    ],
)
def test_an_artifact_that_is_not_the_result_shows_nothing(archive: bytes, said: str) -> None:
    with pytest.raises(WorkflowResultError, match=said):
        read_result(archive, "tok")


@pytest.mark.parametrize(
    ("unreadable", "said"),
    [
        (UNREADABLE["corrupt deflate"], "its compressed data is corrupt"),
        (UNREADABLE["encrypted entry"], "result.json is encrypted"),
        (UNREADABLE["deflate64"], "it is compressed by a method Tiebreak does not read"),
    ],
    ids=UNREADABLE.keys(),
)
def test_a_zip_whose_result_cannot_be_unpacked_is_said_to_be_unreadable(
    unreadable: Callable[[str], bytes], said: str
) -> None:
    with pytest.raises(WorkflowResultError) as refused:
        read_result(unreadable("tok"), "tok")

    assert str(refused.value) == f"the artifact is not a readable zip: {said}"


UNFIT = {
    "token": "tok",
    "head": None,
    "base": None,
    "environment": {
        "test": "tests/test_tiebreak_environment.py",
        "exit_code": 1,
        "output_tail": "\x1b[31m/usr/bin/python3: No module named pytest\x1b[0m",
        "error": None,
    },
}


@pytest.mark.parametrize("fix", [False, True], ids=["reproduction", "fix"])
def test_a_result_whose_environment_cannot_run_tests_shows_nothing_of_the_code(fix: bool) -> None:
    read = read_result(zipped({"result.json": json.dumps(UNFIT).encode()}), "tok")

    recorded = shown("tests/test_bug.py", "python -m pytest -x -q {test}", fix, read)

    unfit = (
        "/usr/bin/python3: No module named pytest (`python -m pytest -x -q "
        "tests/test_tiebreak_environment.py`, with the workflow's environment, exited with 1 "
        "on a test that passes)"
    )
    reason = f"the project's environment cannot run its tests: {unfit}"
    if fix:
        assert recorded.fix is not None
        assert (recorded.fix.verified, recorded.fix.environment) == (None, unfit)
        assert recorded.fix.reason == reason
    else:
        assert recorded.verification is not None
        assert recorded.verification.verdict is Evidence.BROKEN
        assert (recorded.verification.environment, recorded.verification.reason) == (
            unfit,
            reason,
        )
