"""`tiebreak review` reads the code around each change from a local checkout at the diff's new
side (`--repo DIR`, or the current directory), and says once when it cannot."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import respx
from click.testing import CliRunner, Result

from app.cli.main import main
from tests.kits.messages import BASE_URL, MESSAGES_URL, by_tool
from tests.scenarios.debates import git_diff
from tests.scenarios.invoices import AFTER, BEFORE, CHANGED_LINE, DIFF, INVOICES

CONTRACT = "CONTRACT: the caller must strip the currency sign first"
NO_FINDINGS: dict[str, list[dict[str, Any]]] = {"report_findings": [{"findings": []}]}
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
CREDENTIALS = (
    f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {SECRET}\n"
)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def checkout(tmp_path: Path, text: str) -> Path:
    """A git work tree with the invoices module holding `text`."""
    repo = tmp_path / "repo"
    (repo / "billing").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / INVOICES).write_text(text)
    return repo


def review(tmp_path: Path, *args: str, diff: str = DIFF) -> tuple[Result, list[str]]:
    """Run the review with a model that reports nothing; the prompts it was sent."""
    patch = tmp_path / "change.diff"
    patch.write_text(diff)
    env = {"ANTHROPIC_BASE_URL": BASE_URL, "ANTHROPIC_API_KEY": "sk-test"}
    with respx.mock:
        route = respx.post(MESSAGES_URL).mock(side_effect=by_tool(**NO_FINDINGS))
        result = CliRunner().invoke(main, ["review", str(patch), *args], env=env)
        prompts = [json.dumps(json.loads(c.request.content)["system"]) for c in route.calls]
    return result, prompts


def test_a_checkout_at_the_new_side_gives_the_tester_the_helper_s_contract(
    tmp_path: Path,
) -> None:
    repo = checkout(tmp_path, AFTER)

    result, (prompt,) = review(tmp_path, "--repo", str(repo))

    assert result.exit_code == 0, result.output
    assert CONTRACT in prompt
    assert "without the code around it" not in result.stderr


def test_the_current_directory_is_read_when_it_is_such_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = checkout(tmp_path, AFTER)
    monkeypatch.chdir(repo / "billing")

    result, (prompt,) = review(tmp_path)

    assert result.exit_code == 0, result.output
    assert CONTRACT in prompt


def test_a_checkout_at_another_commit_gives_no_context_and_says_so_once(tmp_path: Path) -> None:
    repo = checkout(tmp_path, BEFORE)

    result, (prompt,) = review(tmp_path, "--repo", str(repo))

    assert result.exit_code == 0, result.output
    assert CONTRACT not in prompt
    assert "untrusted-context" not in prompt
    said = [line for line in result.stderr.splitlines() if "without the code around it" in line]
    assert said == [
        "tiebreak: reviewing the diff alone, without the code around it: "
        f"{repo.resolve()} differs from the diff's new side: "
        f"{INVOICES!r} (line {CHANGED_LINE} differs)"
    ]


def test_a_current_directory_that_is_no_work_tree_gives_no_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)

    result, (prompt,) = review(tmp_path)

    assert CONTRACT not in prompt
    assert f"without the code around it: {plain} is not a git work tree" in result.stderr


def with_a_file_showing(path: str, first_line: str) -> str:
    """The invoices change, and a change to `path` that shows its first line."""
    return git_diff({INVOICES: (BEFORE, AFTER), path: ("", first_line + "\n")})


def read_line(result: Result) -> str:
    (line,) = [line for line in result.stderr.splitlines() if "read from" in line]
    return line


@pytest.mark.parametrize(
    ("path", "first_line"),
    [
        ("../../credentials", "[default]"),
        ("/{home}/credentials", "[default]"),
        ("billing/../../../credentials", "[default]"),
        (".git/config", "[core]"),
    ],
)
def test_a_diff_path_outside_the_work_tree_is_not_read_and_is_named(
    tmp_path: Path, path: str, first_line: str
) -> None:
    home = tmp_path / "home"
    repo = checkout(home / "work", AFTER)
    (home / "credentials").write_text(CREDENTIALS)
    git(repo, "config", "remote.origin.url", f"https://x:{SECRET}@github.com/o/r.git")
    path = path.format(home=home.as_posix().lstrip("/"))

    result, prompts = review(
        tmp_path, "--repo", str(repo), diff=with_a_file_showing(path, first_line)
    )

    assert result.exit_code == 0, result.output
    assert not any(SECRET in prompt for prompt in prompts)
    # The refused file costs the others nothing: the invoices still come with their context.
    assert any(CONTRACT in prompt for prompt in prompts)
    assert read_line(result) == (
        f"tiebreak: code around the changes read from {repo.resolve()}; "
        f"not read, as not a regular file inside it: {path!r}"
    )


@pytest.mark.parametrize(
    ("path", "link", "target"),
    [
        ("billing/rates.py", "billing/rates.py", "credentials"),
        ("billing/conf/credentials", "billing/conf", "."),
    ],
)
def test_a_symlink_leaving_the_work_tree_is_not_followed_and_is_named(
    tmp_path: Path, path: str, link: str, target: str
) -> None:
    home = tmp_path / "home"
    repo = checkout(home / "work", AFTER)
    (home / "credentials").write_text(CREDENTIALS)
    (repo / link).symlink_to(home / target)

    result, prompts = review(
        tmp_path, "--repo", str(repo), diff=with_a_file_showing(path, "[default]")
    )

    assert result.exit_code == 0, result.output
    assert not any(SECRET in prompt for prompt in prompts)
    assert any(CONTRACT in prompt for prompt in prompts)
    assert read_line(result).endswith(f"not read, as not a regular file inside it: {path!r}")


def test_files_missing_or_other_in_the_checkout_leave_the_code_its_context_and_are_named(
    tmp_path: Path,
) -> None:
    repo = checkout(tmp_path, AFTER)
    (repo / "docs").mkdir()
    (repo / "docs/usage.rst").write_text("Usage\n=====\n\nRun it.\n")
    diff = git_diff(
        {
            INVOICES: (BEFORE, AFTER),
            "CHANGES.rst": ("Changes\n=======\n", "Changes\n=======\n\n- Totals read labels.\n"),
            "docs/usage.rst": ("Usage\n=====\n\nRun it.\n", "Usage\n=====\n\nRun it twice.\n"),
        }
    )

    result, (prompt,) = review(tmp_path, "--repo", str(repo), diff=diff)

    assert result.exit_code == 0, result.output
    assert CONTRACT in prompt
    assert "without the code around it" not in result.stderr
    assert read_line(result) == (
        f"tiebreak: code around the changes read from {repo.resolve()}; not read, as not at "
        "the diff's new side there: 'CHANGES.rst' (missing), 'docs/usage.rst' (line 4 differs)"
    )
    # The agents are told which files they have no code around.
    assert "Not read (deleted, binary, too large or unavailable): CHANGES.rst, docs/usage.rst" in (
        prompt
    )


def test_verification_still_needs_every_file_at_the_diff_s_new_side(tmp_path: Path) -> None:
    repo = checkout(tmp_path, AFTER)
    diff = git_diff({INVOICES: (BEFORE, AFTER), "CHANGES.rst": ("", "- Totals read labels.\n")})

    result, prompts = review(tmp_path, "--repo", str(repo), "--verify", "true {test}", diff=diff)

    assert result.exit_code == 2
    assert prompts == []
    assert result.stderr.splitlines()[-1] == (
        "tiebreak: --verify needs a checkout at the diff's new side (--repo DIR): "
        f"{repo.resolve()} differs from the diff's new side: 'CHANGES.rst' (missing)"
    )
