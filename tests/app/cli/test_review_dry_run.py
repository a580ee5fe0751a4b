"""`tiebreak review --dry-run` as a real process, with no key in its environment: the review's
plan — its units, what each reads, the files no unit reviews and why, the cost estimate —
and no request to the Messages API (a local fake that records every request it is sent);
and a review that is not a dry run still stops at once without a key, saying so."""

import json
import subprocess
from pathlib import Path

import pytest

from tests.fakes.messages_api import FakeMessagesAPI
from tests.kits.command import Done, run_tiebreak

CART_BASE = """\
def total(prices):
    result = 0
    for price in prices:
        result += price
    return result
"""
CART_HEAD = CART_BASE.replace("for price in prices", "for price in prices[1:]")
LOGO_BASE = b"\x89PNG\r\n\x1a\n\x00base"
LOGO_HEAD = b"\x89PNG\r\n\x1a\n\x00head"


def git(checkout: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(checkout), *args], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout at the change's head, whose change is `change.diff` beside it: a Python
    file changed, one deleted, an image changed."""
    root = tmp_path / "shop"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "cart.py").write_text(CART_BASE)
    (root / "old.py").write_text("RETIRED = True\n")
    (root / "logo.png").write_bytes(LOGO_BASE)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "base")
    (root / "shop" / "cart.py").write_text(CART_HEAD)
    (root / "old.py").unlink()
    (root / "logo.png").write_bytes(LOGO_HEAD)
    (tmp_path / "change.diff").write_text(git(root, "diff"))
    return root


def review(checkout: Path, *args: str, api: FakeMessagesAPI) -> Done:
    """`tiebreak review ../change.diff ARGS` in the checkout, without a key, the Messages API
    a local fake."""
    return run_tiebreak(
        "review", "../change.diff", *args, cwd=checkout, env={"ANTHROPIC_BASE_URL": api.base_url}
    )


def test_a_dry_run_prints_the_plan_without_a_key_and_calls_no_model(checkout: Path) -> None:
    with FakeMessagesAPI.queued() as api:
        done = review(checkout, "--dry-run", api=api)

    assert done.returncode == 0, done.stderr
    assert api.requests == []
    out = done.stdout.splitlines()
    assert out[0] == "Dry run: no model is called, nothing is billed."
    assert "Unit u1 · 1 file · about " in done.stdout
    assert "  shop/cart.py: 2 lines changed" in out
    assert "    shop/cart.py lines 1-5: function total, around a change" in out
    assert "Not reviewed (deleted: nothing is left of it to review):" in out
    assert "  old.py" in out
    assert "Not reviewed (binary: no lines to review):" in out
    assert "  logo.png" in out
    (estimate,) = [line for line in out if line.startswith("Estimate: ")]
    assert estimate.startswith("Estimate: 1 unit of 2 files (1 binary, not reviewed) · about ")
    assert estimate.endswith("billed tokens expected against a ceiling of 400,000")


def test_a_dry_run_s_json_is_the_plan(checkout: Path) -> None:
    with FakeMessagesAPI.queued() as api:
        done = review(
            checkout, "--dry-run", "--json", "--description", "Skip the first price.", api=api
        )

    assert done.returncode == 0, done.stderr
    assert api.requests == []
    plan = json.loads(done.stdout)
    assert plan["dry_run"] == "Dry run: no model is called, nothing is billed."
    (unit,) = plan["units"]
    assert unit["files"] == {"shop/cart.py": 2}
    assert unit["reads"] == [
        "shop/cart.py lines 1-5: function total, around a change",
        "what the change says it does",
    ]
    assert unit["reached"] is True
    assert plan["unreviewed"] == {
        "deleted: nothing is left of it to review": ["old.py"],
        "binary: no lines to review": ["logo.png"],
    }
    assert plan["estimate"]["tokens"] == unit["tokens"]
    assert plan["estimate"]["ceiling"] == 400_000


def test_a_dry_run_says_which_units_the_ceiling_may_not_reach(checkout: Path) -> None:
    with FakeMessagesAPI.queued() as api:
        done = review(checkout, "--dry-run", "--ceiling", "10000", api=api)

    assert done.returncode == 0, done.stderr
    assert api.requests == []
    assert "Unit u1 · 1 file · about " in done.stdout
    assert "the ceiling may not reach it" in done.stdout
    assert "it may not cover even the first unit" in done.stdout


def test_without_a_key_a_review_stops_before_anything_and_says_what_works_without_one(
    checkout: Path,
) -> None:
    with FakeMessagesAPI.queued() as api:
        done = review(checkout, api=api)

    assert done.returncode == 2
    assert api.requests == []
    assert done.stdout == ""
    (said,) = done.stderr.splitlines()
    assert said.startswith("tiebreak: ANTHROPIC_API_KEY is not set")
    assert "--dry-run" in said
    assert "tiebreak demo" in said


def test_a_dry_run_posts_nothing(checkout: Path) -> None:
    with FakeMessagesAPI.queued() as api:
        done = review(checkout, "--dry-run", "--post", api=api)

    assert done.returncode == 2
    assert "--dry-run posts nothing" in done.stderr
