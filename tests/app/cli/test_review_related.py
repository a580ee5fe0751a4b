"""`tiebreak review --repo` searches the work tree's other files for what they tell about the
change: the contract of a helper of another module, the callers and tests of what it changes."""

from pathlib import Path

from tests.app.cli.test_review_context import git, review
from tests.scenarios import orders


def test_the_tester_reads_another_module_s_contract_and_the_changed_function_s_callers(
    tmp_path: Path,
) -> None:
    repo = orders.write(tmp_path / "repo")
    git(repo, "init", "-q")

    result, (prompt,) = review(tmp_path, "--repo", str(repo), diff=orders.diff_text())

    assert result.exit_code == 0, result.output
    assert orders.CONTRACT in prompt
    assert "due = orders.order_total(basket.order)" in prompt
    assert "assert order_total(order) == 0" in prompt
    assert "Other files of the repository" not in result.stderr
