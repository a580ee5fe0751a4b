"""`tiebreak review` of a diff tells the agents what the change says it does: the description
given with `--description TEXT|@FILE`, or else, with `--base`, the messages of the commits
between the base and the checkout's head. Either is read as a pull request's description is:
fenced as data in the prefix every call shares, without control characters, bounded."""

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import respx
from click.testing import CliRunner, Result

from app.cli.main import main
from tests.kits.messages import BASE_URL, MESSAGES_URL, by_tool
from tests.scenarios.invoices import AFTER, BEFORE, DIFF, INVOICES

NO_FINDINGS: dict[str, list[dict[str, Any]]] = {"report_findings": [{"findings": []}]}
DESCRIBED = "Totals read each line's price label on purpose: labels now hold the price as billed.\n"
FENCE = re.compile(r"<(untrusted-intent-[0-9a-f]{16})>\n(.*?)\n</\1>", re.DOTALL)
IDENTITY = ("-c", "user.name=Ada", "-c", "user.email=ada@example.com")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *IDENTITY, "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def committed(tmp_path: Path, *messages: str) -> tuple[Path, str]:
    """A work tree whose base commit has the invoices before the change, and whose head
    is the change, made in commits with `messages` (the last one holds it); its base."""
    repo = tmp_path / "repo"
    (repo / "billing").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / INVOICES).write_text(BEFORE)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "Invoices")
    base = git(repo, "rev-parse", "HEAD")
    for n, message in enumerate(messages, 1):
        (repo / INVOICES).write_text(AFTER if n == len(messages) else BEFORE + f"# {n}\n")
        git(repo, "commit", "-q", "-a", "-m", message)
    return repo, base


def review(tmp_path: Path, *args: str) -> tuple[Result, list[dict[str, Any]]]:
    """Run the review with a model that reports nothing; the bodies it was sent."""
    patch = tmp_path / "change.diff"
    patch.write_text(DIFF)
    env = {"ANTHROPIC_BASE_URL": BASE_URL, "ANTHROPIC_API_KEY": "sk-test"}
    with respx.mock:
        route = respx.post(MESSAGES_URL).mock(side_effect=by_tool(**NO_FINDINGS))
        result = CliRunner().invoke(main, ["review", str(patch), *args], env=env)
        bodies = [json.loads(c.request.content) for c in route.calls]
    return result, bodies


def intents(body: dict[str, Any]) -> list[str]:
    """What the fenced intent blocks of a request's prefix hold."""
    return [m[2] for b in body["system"] for m in FENCE.finditer(b["text"])]


def test_a_description_from_a_file_is_fenced_in_the_prefix(tmp_path: Path) -> None:
    written = tmp_path / "description.md"
    written.write_text("Price labels\x1b]0;pwned\x07\r\n\r\n" + DESCRIBED)

    result, (body,) = review(tmp_path, "--description", f"@{written}")

    assert result.exit_code == 0, result.output
    # The escape and the bell are gone, the carriage returns too: the rest is data.
    assert intents(body) == ["Price labels]0;pwned\n\n" + DESCRIBED.rstrip()]
    assert "the agents read the description given" in result.stderr


def test_a_description_given_as_text_is_read_as_such(tmp_path: Path) -> None:
    result, (body,) = review(tmp_path, "--description", DESCRIBED)

    assert result.exit_code == 0, result.output
    assert intents(body) == [DESCRIBED.rstrip()]


def test_without_a_description_or_a_base_the_agents_read_none(tmp_path: Path) -> None:
    result, (body,) = review(tmp_path)

    assert result.exit_code == 0, result.output
    assert intents(body) == []
    assert "untrusted-intent" not in json.dumps(body)


def test_a_description_file_that_cannot_be_read_stops_the_review_before_any_call(
    tmp_path: Path,
) -> None:
    result, bodies = review(tmp_path, "--description", f"@{tmp_path / 'missing.md'}")

    assert result.exit_code == 2
    assert f"--description: cannot read {tmp_path / 'missing.md'}" in result.stderr
    assert bodies == []


def test_with_a_base_the_commits_messages_are_read_oldest_first(tmp_path: Path) -> None:
    repo, base = committed(
        tmp_path,
        "Keep price labels as billed\n\nLabels hold the currency and the amount.",
        "Total invoices from their labels\x1b[2J",
    )

    result, (body,) = review(tmp_path, "--repo", str(repo), "--base", base)

    assert result.exit_code == 0, result.output
    assert intents(body) == [
        "Keep price labels as billed\n\nLabels hold the currency and the amount.\n\n"
        "Total invoices from their labels[2J"
    ]
    said = f"the agents read the messages of 2 commits between {base} and HEAD"
    assert said in result.stderr


def test_changes_not_yet_committed_have_no_commits_to_read(tmp_path: Path) -> None:
    repo, base = committed(tmp_path)
    (repo / INVOICES).write_text(AFTER)

    result, (body,) = review(tmp_path, "--repo", str(repo), "--base", base)

    assert result.exit_code == 0, result.output
    assert intents(body) == []
    assert f"no commit between {base} and HEAD: the agents read no description" in result.stderr


def test_a_description_given_is_read_instead_of_the_commits(tmp_path: Path) -> None:
    repo, base = committed(tmp_path, "Total invoices from their labels")

    result, (body,) = review(
        tmp_path, "--repo", str(repo), "--base", base, "--description", DESCRIBED
    )

    assert result.exit_code == 0, result.output
    assert intents(body) == [DESCRIBED.rstrip()]


def test_help_says_where_the_description_comes_from() -> None:
    result = CliRunner().invoke(main, ["review", "--help"], terminal_width=200)

    out = " ".join(result.stdout.split())
    assert "--description TEXT|@FILE" in out
    assert "the commits' messages between --base and the checkout's head" in out
