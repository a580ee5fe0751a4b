"""`tiebreak eval cases --repo`: cases built from a git history the test writes itself."""

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from agents.diff import Diff
from app.cli.main import main

PRICES = [f"PRICE_{n} = {n}\n" for n in range(1, 21)]
TOTAL = "def total(items):\n    return sum(i.price for i in items)\n"


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
        "HOME": str(repo),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, str]:
    git(tmp_path, "init", "-q", "-b", "main")
    shas = {"root": commit(tmp_path, "Start the shop", {"shop/prices.py": "".join(PRICES)})}
    buggy = "def discount(total, rate):\n    return total * rate\n"  # should be 1 - rate
    shas["bug"] = commit(
        tmp_path, "Add discounts", {"shop/discount.py": buggy, "shop/cart.py": TOTAL}
    )
    shas["clean"] = commit(
        tmp_path, "Add shipping", {"shop/shipping.py": "def ship(order):\n    return 5\n"}
    )
    fixed = "def discount(total, rate):\n    return total * (1 - rate)\n"
    tests = "def test_discount():\n    assert discount(100, 0.1) == 90\n"
    shas["fix"] = commit(
        tmp_path,
        "Fix discount applied as the price",
        {"shop/discount.py": fixed, "tests/test_discount.py": tests},
    )
    shas["repo"] = str(tmp_path)
    return shas


def test_a_fix_is_traced_back_to_the_commit_that_introduced_its_lines(
    repo: dict[str, str],
) -> None:
    result = CliRunner().invoke(
        main, ["eval", "cases", "--repo", repo["repo"], "--name", "shop", "--license", "MIT"]
    )

    assert result.exit_code == 0, result.output
    cases = [json.loads(line) for line in result.stdout.splitlines()]
    buggy = [c for c in cases if c["bug"]]
    assert len(buggy) == 1
    (case,) = buggy
    assert case["id"] == f"shop-bug-{repo['bug'][:8]}"
    assert (case["introducing_commit"], case["fix_commit"]) == (repo["bug"], repo["fix"])
    assert case["bug"] == [{"path": "shop/discount.py", "lines": [2]}]
    assert case["license"] == "MIT"
    assert "Fix discount applied as the price" in case["bug_summary"]
    assert set(case["files"]) == {"shop/discount.py", "shop/cart.py"}
    diff = Diff.parse(case["diff"])
    discount = diff.file("shop/discount.py")
    assert discount is not None
    assert discount.hunks[0].lines[2] == "    return total * rate"
    # Clean: a commit no fix traced a bug to; never a fix, the traced commit or the root.
    clean = [c["introducing_commit"] for c in cases if not c["bug"]]
    assert clean == [repo["clean"]]
    assert "tiebreak: 1 buggy and 1 clean cases" in result.stderr


def test_size_filters_leave_large_commits_out(repo: dict[str, str]) -> None:
    result = CliRunner().invoke(main, ["eval", "cases", "--repo", repo["repo"], "--max-lines", "3"])

    assert result.exit_code == 0, result.output
    ids = [json.loads(line)["introducing_commit"] for line in result.stdout.splitlines()]
    # The bug's commit changes 4 lines: only the 2-line commit is left.
    assert ids == [repo["clean"]]


def test_a_directory_that_is_no_repository_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "cases", "--repo", str(tmp_path)])

    assert result.exit_code == 2
    assert result.stderr.startswith("tiebreak: git log: ")


def test_a_commit_message_cannot_pass_options_to_git(
    repo: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    stolen = tmp_path_factory.mktemp("outside") / "stolen.diff"
    # Split on the separators a naive parser uses, this subject reads as a second commit
    # whose "sha" is an option of `git show`.
    forged = f"tweak\x1e--output={stolen}\x1fdeadbeef\x1frefactor"
    tweak = commit(Path(repo["repo"]), forged, {"shop/tweak.py": "TWEAK = 1\n"})

    result = CliRunner().invoke(main, ["eval", "cases", "--repo", repo["repo"]])

    assert result.exit_code == 0, result.output
    assert not stolen.exists()
    cases = [json.loads(line)["introducing_commit"] for line in result.stdout.splitlines()]
    assert f"--output={stolen}" not in cases
    assert set(cases) == {repo["bug"], repo["clean"], tweak}


def test_a_case_keeps_the_commit_its_diff_is_against(repo: dict[str, str]) -> None:
    result = CliRunner().invoke(main, ["eval", "cases", "--repo", repo["repo"]])

    assert result.exit_code == 0, result.output
    bases = {
        json.loads(line)["introducing_commit"]: json.loads(line)["base_commit"]
        for line in result.stdout.splitlines()
    }
    # The introducing commit's parent, as a full id: its tests run there and at the commit.
    assert bases == {repo["bug"]: repo["root"], repo["clean"]: repo["bug"]}
