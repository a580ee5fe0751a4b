"""`tiebreak review --verify` against findings' tests that attack the machine they run on: each
is held by the sandbox's limits, what it met is what the review reports, and the review ends
with its findings and leaves nothing behind."""

import json
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from app.settings import get_settings
from tests.app.verification.conftest import needs_bwrap
from tests.kits.hostile import DEEP, FILLS_THE_DISK, HOLDS_MEMORY, reaches, var_tmp
from tests.kits.messages import reviewed
from tests.scenarios.shop import BUG_LINE, COMMAND, FIX, Project, make_project

pytestmark = needs_bwrap

PLAIN = "python {test}"
"""A test run as a script: what it prints is the output the review shows."""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path)


@pytest.fixture
def temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The temporary directory the review makes its trees in (TMPDIR, as Python reads it);
    whatever is left there removed after the test by `rm` (pytest's own clean-up recurses,
    and would fail on a deep tree)."""
    directory = tmp_path / "tmpdir"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    yield directory
    subprocess.run(["rm", "-rf", "--", str(directory)], check=True)


@pytest.fixture
def host() -> Iterator[Path]:
    """A directory of the test's own in the host's /var/tmp, which any user may read."""
    with var_tmp() as directory:
        yield directory


def one_finding(path: str, content: str) -> dict[str, list[dict[str, Any]]]:
    """The off-by-one, with `content` as its test: conceded with the fix, accepted."""
    finding = {
        "path": "shop/cart.py",
        "start_line": BUG_LINE,
        "end_line": BUG_LINE,
        "severity": "major",
        "claim": "The loop starts at 1: the first price is never added.",
        "reproduction": {"path": path, "content": content},
    }
    return {
        "report_findings": [{"findings": [finding]}],
        "answer_findings": [
            {
                "answers": [
                    {
                        "finding_id": "F1",
                        "stance": "concede",
                        "argument": "Right.",
                        "patch": FIX.model_dump(),
                    }
                ]
            }
        ],
        "evaluate_answers": [
            {"evaluations": [{"finding_id": "F1", "decision": "accept", "reason": "Fixed."}]}
        ],
    }


def review(project: Project, script: dict[str, list[dict[str, Any]]], *args: str) -> Result:
    result, _ = reviewed(project.checkout, project.diff.text, script, "--json", *args)
    return result


def verification(result: Result) -> dict[str, Any]:
    """The one finding's verification, as `--json` prints it."""
    assert result.exit_code in (0, 1), result.output
    (unit,) = json.loads(result.stdout)["units"]
    (finding,) = unit["findings"]
    return dict(finding["verification"])


def base_with_config(project: Project, config: str) -> str:
    """A commit on the base holding `config` as `.github/tiebreak.yml`: `--base` reads it."""
    side = project.checkout.parent / "with-config"
    subprocess.run(
        ["git", "-C", str(project.checkout), "worktree", "add", "-q", "--detach", str(side),
         project.base],
        check=True,
    )  # fmt: skip
    (side / ".github").mkdir()
    (side / ".github" / "tiebreak.yml").write_text(config)
    identity = ["-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
    subprocess.run(["git", "-C", str(side), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(side), *identity, "commit", "-q", "-m", "Limits"], check=True)
    done = subprocess.run(
        ["git", "-C", str(side), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    )
    subprocess.run(
        ["git", "-C", str(project.checkout), "worktree", "remove", "--force", str(side)],
        check=True,
    )
    return done.stdout.strip()


def test_a_run_holds_no_more_memory_than_its_limit_in_all_its_processes(
    project: Project,
) -> None:
    base = base_with_config(project, f"verify:\n  command: {PLAIN}\n  memory_mb: 128\n")

    shown = verification(
        review(project, one_finding("tests/test_holds.py", HOLDS_MEMORY), "--base", base)
    )

    assert shown["verdict"] == "broken", shown
    assert shown["reason"] == "at the head it ran out of memory (its limit is 128 MB)"


def test_a_run_cannot_fill_the_disk(project: Project) -> None:
    shown = verification(
        review(project, one_finding("tests/test_fills.py", FILLS_THE_DISK), "--verify", PLAIN)
    )

    assert shown["verdict"] == "fails_at_base", shown
    assert shown["output_tail"].splitlines() == [
        ". refused after 0 MB: No space left on device",
        "/tmp refused after 0 MB: No space left on device",
        "/dev/shm refused after 0 MB: No space left on device",
    ]


@pytest.mark.parametrize("data", ["elsewhere", "in the checkout"])
def test_a_run_reaches_no_host_file_no_snapshot_and_no_socket(
    project: Project, host: Path, data: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    readable = host / "notes.txt"
    readable.write_text("a world-readable file")
    readable.chmod(0o644)
    data_dir = host / "data" if data == "elsewhere" else project.checkout / ".tiebreak"
    snapshot = data_dir / "snapshots" / "another-owner" / "private-repo" / "settings.py"
    snapshot.parent.mkdir(parents=True)
    snapshot.write_text("TOKEN = 'another repository's'")
    seen = snapshot.relative_to(project.checkout) if data == "in the checkout" else snapshot
    monkeypatch.setenv("TIEBREAK_DATA_DIR", str(data_dir))
    get_settings.cache_clear()
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(host / "service.sock"))
        (host / "service.sock").chmod(0o777)
        listener.listen()
        listener.setblocking(False)

        result = review(
            project,
            one_finding("tests/test_reaches.py", reaches(readable, seen, host / "service.sock")),
            "--verify",
            PLAIN,
        )

        with pytest.raises(BlockingIOError):
            listener.accept()[0].close()
    shown = verification(result)
    assert shown["verdict"] == "not_reproduced", shown
    assert shown["output_tail"].splitlines() == [
        "/var/tmp refused: No such file or directory",
        "snapshots refused: No such file or directory",
        "socket refused: No such file or directory",
    ]


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "no-sandbox"])
def test_a_test_that_makes_a_deep_tree_leaves_its_finding_and_no_tree_behind(
    project: Project, temporary: Path, sandbox: bool
) -> None:
    script = one_finding("tests/test_deep.py", DEEP)

    result = review(project, script, "--verify", COMMAND, *([] if sandbox else ["--no-sandbox"]))

    assert result.exit_code == 0, result.output[-2000:]
    shown = verification(result)
    assert shown["verdict"] == "reproduced", shown
    (unit,) = json.loads(result.stdout)["units"]
    (finding,) = unit["findings"]
    assert (finding["resolution"], finding["fix_verified"]) == ("fixed", True)
    assert list(temporary.iterdir()) == []
