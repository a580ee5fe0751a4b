"""How a repository's tests are written, read from its files' paths and the command that runs
a test: the runner, the tests' language, where they live and how they are named, and a few of
them, as the tester is told them."""

import pytest

from agents.conventions import ProjectTests, runner_of
from agents.debate.briefs import unit_briefs
from agents.diff import Diff, ReviewUnit
from tests.scenarios.debates import git_diff

PYTHON_REPOSITORY = [
    "shop/__init__.py",
    "shop/cart.py",
    "tests/test_cart.py",
    "tests/test_orders.py",
    "tests/helpers.py",
    "README.md",
]
GO_REPOSITORY = [
    "go.mod",
    "shop/cart.go",
    "shop/cart_test.go",
    "shop/orders.go",
    "shop/orders_test.go",
    "coupons/coupons_test.go",
    "tools/gen.py",
]
NODE_REPOSITORY = [
    "package.json",
    "src/cart.js",
    "test/cart.test.js",
    "test/orders.test.js",
    "src/ui/__tests__/button.test.tsx",
    "scripts/test_release.py",
]


@pytest.mark.parametrize(
    ("command", "runner", "language"),
    [
        ("python -m pytest -x -q {test}", "pytest", "python"),
        (".venv/bin/pytest {test}", "pytest", "python"),
        ("python3 -m unittest {test}", "unittest", "python"),
        ('go test "./$(dirname {test})"', "go test", "go"),
        ("/usr/local/go/bin/go test ./...", "go test", "go"),
        ("node --test {test}", "node --test", "javascript"),
        ("npx jest {test}", "jest", "javascript"),
        ("npm test -- {test}", "the package's test script", "javascript"),
        ("make check TEST={test}", "", ""),
    ],
)
def test_the_runner_is_read_from_the_command(command: str, runner: str, language: str) -> None:
    assert runner_of(command) == (runner, language)


def test_a_python_project_s_tests_live_in_tests_named_test_something() -> None:
    told = ProjectTests.of(PYTHON_REPOSITORY, "python -m pytest -q {test}")

    assert told == ProjectTests(
        runner="pytest",
        language="python",
        ways=("tests/test_*.py (2 files)",),
        examples=("tests/test_cart.py", "tests/test_orders.py"),
    )


def test_a_go_project_s_tests_are_beside_their_package() -> None:
    told = ProjectTests.of(GO_REPOSITORY, 'go test "./$(dirname {test})"')

    assert told.runner == "go test"
    assert told.ways == ("`*_test.go` beside its package's files (3 files)",)
    assert told.examples == ("coupons/coupons_test.go", "shop/cart_test.go", "shop/orders_test.go")


def test_a_node_project_s_ways_come_most_followed_first_and_other_languages_not_at_all() -> None:
    told = ProjectTests.of(NODE_REPOSITORY, "node --test {test}")

    assert told.ways == (
        "test/*.test.js (2 files)",
        "src/**/__tests__/*.test.tsx (1 file)",
    )
    assert "scripts/test_release.py" not in told.examples


def test_the_tester_reads_them_in_the_cached_prefix() -> None:
    diff = Diff.parse(git_diff({"src/cart.js": ("a\n", "b\n")}))
    told = ProjectTests.of(NODE_REPOSITORY, "node --test {test}")

    blocks = unit_briefs(ReviewUnit("u1", diff, conventions=told))
    without = unit_briefs(ReviewUnit("u1", diff))

    last = blocks[-1]
    assert last.stable
    assert '"runner":"node --test"' in last.text
    assert "test/*.test.js (2 files)" in last.text
    assert len(blocks) == len(without) + 1
