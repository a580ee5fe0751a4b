"""A cases file's base commits: a full commit id, or none at all."""

import json

import pytest

from app.evaluation.cases import parse_cases
from app.evaluation.errors import CasesError
from tests.kits.reviewers import case

LINE = json.loads(case("cart-total", [("shop/cart.py", [5])]).model_dump_json())


@pytest.mark.parametrize(
    ("base", "kept"),
    [
        ("b" * 40, "b" * 40),
        ("c" * 64, "c" * 64),  # a SHA-256 repository's
        (None, None),  # a case built before the base was kept
    ],
)
def test_a_base_commit_is_kept_as_given(base: str | None, kept: str | None) -> None:
    (parsed,) = parse_cases([json.dumps({**LINE, "base_commit": base})])

    assert parsed.base_commit == kept


@pytest.mark.parametrize(
    "base",
    ["b" * 39, "B" * 40, "HEAD~1", "--output=/tmp/x", "b" * 40 + "\n", f"{'b' * 40}..HEAD"],
)
def test_a_base_commit_that_is_not_a_full_id_is_refused(base: str) -> None:
    with pytest.raises(CasesError, match="line 1 is not a case"):
        parse_cases([json.dumps({**LINE, "base_commit": base})])
