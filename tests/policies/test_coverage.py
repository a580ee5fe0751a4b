"""Which changed files a review reaches first: code, the sensitive first, then tests, docs and
generated files; within a kind, the larger change."""

import pytest

from policies.coverage import FileKind, kind_of, rank


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("app/auth/login.py", FileKind.SENSITIVE),
        ("src/AuthService.java", FileKind.SENSITIVE),
        ("shop/payments.py", FileKind.SENSITIVE),
        ("db/migrations/0042_add_index.sql", FileKind.SENSITIVE),
        ("lib/crypto/keys.go", FileKind.SENSITIVE),
        ("app/user_permissions.rb", FileKind.SENSITIVE),
        ("app/authors.py", FileKind.CODE),
        ("src/tokenizer.py", FileKind.CODE),
        ("shop/cart.py", FileKind.CODE),
        ("Makefile", FileKind.CODE),
        ("config/settings.yaml", FileKind.CODE),
        ("tests/test_auth.py", FileKind.TESTS),
        ("src/cart_test.go", FileKind.TESTS),
        ("web/cart.spec.ts", FileKind.TESTS),
        ("web/__tests__/cart.js", FileKind.TESTS),
        ("conftest.py", FileKind.TESTS),
        ("README.md", FileKind.DOCS),
        ("docs/security.rst", FileKind.DOCS),
        ("CHANGELOG", FileKind.DOCS),
        ("uv.lock", FileKind.GENERATED),
        ("web/package-lock.json", FileKind.GENERATED),
        ("go.sum", FileKind.GENERATED),
        ("static/app.min.js", FileKind.GENERATED),
        ("proto/auth_pb2.py", FileKind.GENERATED),
        ("vendor/github.com/x/auth.go", FileKind.GENERATED),
        ("web/__snapshots__/cart.test.js.snap", FileKind.GENERATED),
    ],
)
def test_each_file_has_one_kind(path: str, kind: FileKind) -> None:
    assert kind_of(path) is kind


@pytest.mark.parametrize(
    ("files", "order"),
    [
        pytest.param(
            [("README.md", 400), ("uv.lock", 900), ("shop/cart.py", 3)],
            ["shop/cart.py", "README.md", "uv.lock"],
            id="code-over-docs-over-lockfiles",
        ),
        pytest.param(
            [("shop/cart.py", 10), ("shop/orders.py", 200), ("shop/tax.py", 50)],
            ["shop/orders.py", "shop/tax.py", "shop/cart.py"],
            id="more-changed-lines-first",
        ),
        pytest.param(
            [("shop/orders.py", 500), ("shop/payments.py", 2)],
            ["shop/payments.py", "shop/orders.py"],
            id="sensitive-code-over-larger-code",
        ),
        pytest.param(
            [("tests/test_cart.py", 300), ("shop/cart.py", 1)],
            ["shop/cart.py", "tests/test_cart.py"],
            id="code-over-its-tests",
        ),
        pytest.param(
            [("b.py", 5), ("a.py", 5)],
            ["b.py", "a.py"],
            id="ties-keep-the-diff-order",
        ),
    ],
)
def test_files_are_ranked_riskiest_first(files: list[tuple[str, int]], order: list[str]) -> None:
    ranked = sorted(files, key=lambda f: rank(*f))

    assert [path for path, _ in ranked] == order
