"""Which changed files a review reaches first: code, the sensitive first, then tests, docs and
generated files; within a kind, the larger change."""

import pytest

from policies.coverage import Kind, kind_of, rank


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("app/auth/login.py", Kind.SENSITIVE),
        ("src/AuthService.java", Kind.SENSITIVE),
        ("shop/payments.py", Kind.SENSITIVE),
        ("db/migrations/0042_add_index.sql", Kind.SENSITIVE),
        ("lib/crypto/keys.go", Kind.SENSITIVE),
        ("app/user_permissions.rb", Kind.SENSITIVE),
        ("app/authors.py", Kind.CODE),
        ("src/tokenizer.py", Kind.CODE),
        ("shop/cart.py", Kind.CODE),
        ("Makefile", Kind.CODE),
        ("config/settings.yaml", Kind.CODE),
        ("tests/test_auth.py", Kind.TESTS),
        ("src/cart_test.go", Kind.TESTS),
        ("web/cart.spec.ts", Kind.TESTS),
        ("web/__tests__/cart.js", Kind.TESTS),
        ("conftest.py", Kind.TESTS),
        ("README.md", Kind.DOCS),
        ("docs/security.rst", Kind.DOCS),
        ("CHANGELOG", Kind.DOCS),
        ("uv.lock", Kind.GENERATED),
        ("web/package-lock.json", Kind.GENERATED),
        ("go.sum", Kind.GENERATED),
        ("static/app.min.js", Kind.GENERATED),
        ("proto/auth_pb2.py", Kind.GENERATED),
        ("vendor/github.com/x/auth.go", Kind.GENERATED),
        ("web/__snapshots__/cart.test.js.snap", Kind.GENERATED),
    ],
)
def test_each_file_has_one_kind(path: str, kind: Kind) -> None:
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
