"""What the SZZ method takes from git's output as a commit id."""

import pytest

from app.evaluation.errors import HistoryError
from app.evaluation.szz import object_id, parse_blame

SHA1 = "0123456789abcdef0123456789abcdef01234567"
SHA256 = "0123456789abcdef" * 4


@pytest.mark.parametrize("text", [SHA1, SHA256])
def test_a_full_commit_id_is_taken(text: str) -> None:
    assert object_id(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "--output=/tmp/stolen",
        "deadbeef",
        SHA1.upper(),
        "HEAD",
        f"{SHA1}\n",
        f"{SHA1}..HEAD",
        SHA1 + "0",
        "",
    ],
)
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(HistoryError, match="where a commit id belongs"):
        object_id(text)


def test_blame_lines_are_traced_only_to_full_commit_ids() -> None:
    porcelain = "\n".join(
        [
            "filename shop/before_any_header.py",
            "--output=/tmp/stolen 3 3 1",
            "filename shop/forged.py",
            f"{SHA256} 7 7 1",
            "filename shop/cart.py",
            "\tcode",
        ]
    )

    assert [(b.commit, b.path, b.line) for b in parse_blame(porcelain)] == [
        (SHA256, "shop/cart.py", 7)
    ]
