"""`tiebreak review` of a pull request by its address reads the repository at the head, as the
App does: GitHub's archive of the head commit, kept under `TIEBREAK_DATA_DIR/snapshots`, is
searched for what the other files tell about the change. A head that cannot be read never
stops the review, and standard error says why once; a second review of the head reads the
disk; a pull request of docs alone downloads nothing."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result

from tests.app.cli.test_review_context import git
from tests.app.cli.test_review_pull import PERSON, review
from tests.fakes.github_api import FakeGitHub
from tests.fakes.messages_api import FakeMessagesAPI, QueuedResponder
from tests.kits.archives import HOSTILE
from tests.scenarios import orders
from tests.scenarios.debates import AGREED, PAYMENTS, git_diff
from tests.scenarios.reviews import HEAD, NUMBER, REPO

TARBALL = rf"/repos/{REPO}/tarball/{HEAD}"
NOT_READ = f"the repository at {HEAD[:7]} was not read"
ORDERS_PULL, ORDERS_BASE, ORDERS_HEAD = 5, "c" * 40, "e" * 40


@pytest.fixture
def model() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI(QueuedResponder(**{k: v * 2 for k, v in AGREED.items()})) as api:
        yield api


def reviewed(github: FakeGitHub, model: FakeMessagesAPI, address: str, *args: str) -> Result:
    token = github.issue_person_token(PERSON, repos=[REPO])
    return review(github, model, address, *args, token=token)


def prompt(model: FakeMessagesAPI) -> str:
    """What the tester was shown first."""
    return json.dumps(model.requests[0].body)


def orders_reviewed(github: FakeGitHub, *args: str) -> tuple[Result, str]:
    """The review of a change to `shop/orders.py` whose bugs are in what other modules say,
    by a tester that finds nothing; what it was shown first."""
    github.add_pull(
        REPO,
        ORDERS_PULL,
        head_sha=ORDERS_HEAD,
        base_sha=ORDERS_BASE,
        diff=orders.diff_text(),
        head_ref="orders",
        base_files={**orders.FILES, orders.ORDERS: orders.ORDERS_BEFORE},
        head_files=orders.FILES,
    )
    with FakeMessagesAPI(QueuedResponder(report_findings=[{"findings": []}])) as model:
        result = reviewed(github, model, f"{REPO}#{ORDERS_PULL}", *args)
    return result, prompt(model)


def test_the_tester_reads_another_module_s_contract_and_the_changed_function_s_callers(
    github: FakeGitHub,
) -> None:
    result, shown = orders_reviewed(github)

    assert result.exit_code == 0, result.output
    assert orders.CONTRACT in shown
    assert "due = orders.order_total(basket.order)" in shown
    assert "assert order_total(order) == 0" in shown
    assert f"downloading {REPO} at {ORDERS_HEAD[:7]}" in result.stderr
    assert len(github.requests_to("GET", rf"/repos/{REPO}/tarball/{ORDERS_HEAD}")) == 1


def test_a_second_review_of_the_head_reads_the_disk_not_github(
    github: FakeGitHub, model: FakeMessagesAPI, tmp_path: Path
) -> None:
    first = reviewed(github, model, f"{REPO}#{NUMBER}")
    second = reviewed(github, model, f"{REPO}#{NUMBER}")

    assert (first.exit_code, second.exit_code) == (0, 0), first.output + second.output
    assert len(github.requests_to("GET", TARBALL)) == 1
    assert "downloading" not in second.stderr
    assert f"{REPO} at {HEAD[:7]} read from " in second.stderr
    assert (tmp_path / "tiebreak-data" / "snapshots" / "trees").is_dir()


def test_a_404_on_the_archive_leaves_the_review_to_its_changed_files_saying_so_once(
    github: FakeGitHub, model: FakeMessagesAPI
) -> None:
    github.fail_next("GET", TARBALL, 404)

    result = reviewed(github, model, f"{REPO}#{NUMBER}")

    assert result.exit_code == 0, result.output
    assert f"{PAYMENTS}:16  blocker  fixed" in result.stdout
    assert result.stderr.count("not read") == 1
    assert (
        f"{NOT_READ} (GitHub answered 404 to the download of its archive): "
        "the agents read the changed files alone"
    ) in result.stderr


@pytest.mark.parametrize("data", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_archive_is_refused_and_the_review_goes_on_saying_so_once(
    github: FakeGitHub, model: FakeMessagesAPI, tmp_path: Path, data: bytes
) -> None:
    github.replace_archive(REPO, HEAD, data)

    result = reviewed(github, model, f"{REPO}#{NUMBER}")

    assert result.exit_code == 0, result.output
    assert f"{PAYMENTS}:16  blocker  fixed" in result.stdout
    assert result.stderr.count("not read") == 1
    assert f"{NOT_READ} (its archive " in result.stderr
    assert not (tmp_path / "escaped.py").exists()
    assert not list((tmp_path / "tiebreak-data" / "snapshots" / "trees").iterdir())


def test_a_disk_that_cannot_keep_the_snapshot_leaves_the_review_to_its_changed_files(
    github: FakeGitHub, model: FakeMessagesAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "a-file"
    data.write_text("")
    monkeypatch.setenv("TIEBREAK_DATA_DIR", str(data))

    result = reviewed(github, model, f"{REPO}#{NUMBER}")

    assert result.exit_code == 0, result.output
    assert f"{PAYMENTS}:16  blocker  fixed" in result.stdout
    assert result.stderr.count("not read") == 1
    assert f"{NOT_READ} (it could not be kept on disk: Not a directory)" in result.stderr


def test_a_pull_request_of_docs_alone_downloads_nothing(github: FakeGitHub) -> None:
    docs = "docs/guide.md"
    github.add_pull(
        REPO,
        3,
        head_sha="d" * 40,
        base_sha="f" * 40,
        diff=git_diff({docs: ("# Guide\n", "# Guide\n\nRun it.\n")}),
        head_ref="docs",
        base_files={docs: "# Guide\n"},
        head_files={docs: "# Guide\n\nRun it.\n"},
    )

    with FakeMessagesAPI(QueuedResponder(report_findings=[{"findings": []}])) as model:
        result = reviewed(github, model, f"{REPO}#3")

    assert result.exit_code == 0, result.output
    assert github.requests_to("GET", rf"/repos/{REPO}/tarball/.*") == []
    assert "not read" not in result.stderr


def test_a_checkout_given_with_repo_is_searched_instead_of_the_archive(
    github: FakeGitHub, tmp_path: Path
) -> None:
    checkout = orders.write(tmp_path / "checkout")
    git(checkout, "init", "-q")

    result, shown = orders_reviewed(github, "--repo", str(checkout))

    assert result.exit_code == 0, result.output
    assert orders.CONTRACT in shown
    assert github.requests_to("GET", rf"/repos/{REPO}/tarball/.*") == []
    assert f"other files read from {checkout}" in result.stderr


def test_a_checkout_given_with_repo_at_another_commit_is_not_searched_and_said_so(
    github: FakeGitHub, tmp_path: Path
) -> None:
    checkout = orders.write(
        tmp_path / "checkout", {**orders.FILES, orders.ORDERS: orders.ORDERS_BEFORE}
    )
    git(checkout, "init", "-q")

    result, shown = orders_reviewed(github, "--repo", str(checkout))

    assert result.exit_code == 0, result.output
    assert orders.CONTRACT not in shown
    assert github.requests_to("GET", rf"/repos/{REPO}/tarball/.*") == []
    assert result.stderr.count("not read") == 1
    assert f"other files not read: {checkout} differs from the diff's new side" in (result.stderr)
