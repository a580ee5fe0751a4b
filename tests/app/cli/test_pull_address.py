"""A pull request's address for `tiebreak review`, read by GitHub's rules: pure."""

import pytest

from app.cli.pull_address import AddressError, PullAddress, is_address, parse_address

PUBLIC = "https://api.github.com"
ENTERPRISE = "https://ghe.example.com/api/v3"
HELLO = PullAddress("Codertocat", "Hello-World", 2)


@pytest.mark.parametrize(
    ("text", "api", "expected"),
    [
        ("https://github.com/Codertocat/Hello-World/pull/2", PUBLIC, HELLO),
        ("https://www.github.com/Codertocat/Hello-World/pull/2/", PUBLIC, HELLO),
        ("https://github.com/Codertocat/Hello-World/pull/2/files", PUBLIC, HELLO),
        ("https://github.com/Codertocat/Hello-World/pull/2#discussion_r1", PUBLIC, HELLO),
        ("Codertocat/Hello-World#2", PUBLIC, HELLO),
        ("github.com/Codertocat/Hello-World/pull/2", PUBLIC, HELLO),
        ("ghe.example.com/Codertocat/Hello-World/pull/2/files", ENTERPRISE, HELLO),
        ("https://ghe.example.com/Codertocat/Hello-World/pull/2", ENTERPRISE, HELLO),
        ("https://github.com/a/b.c_d-e/pull/12345", PUBLIC, PullAddress("a", "b.c_d-e", 12345)),
    ],
)
def test_an_address_names_its_pull_request(text: str, api: str, expected: PullAddress) -> None:
    assert is_address(text)
    assert parse_address(text, api) == expected


@pytest.mark.parametrize(
    ("text", "api"),
    [
        ("https://github.com/Codertocat/Hello-World/pull/2", ENTERPRISE),
        ("https://ghe.example.com/Codertocat/Hello-World/pull/2", PUBLIC),
        ("https://github.com.evil.example/Codertocat/Hello-World/pull/2", PUBLIC),
        ("https://token@github.com/Codertocat/Hello-World/pull/2", PUBLIC),
        ("http://github.com/Codertocat/Hello-World/pull/2", PUBLIC),
        ("https://github.com/Codertocat/Hello-World/pull/2/../../../other", PUBLIC),
        ("https://github.com/Codertocat/Hello-World/pull/-2", PUBLIC),
        ("https://github.com/Codertocat/Hello-World/pull/\uff12", PUBLIC),  # a full-width 2
        ("https://github.com/Coder--tocat/Hello-World/pull/2", PUBLIC),
        ("https://github.com/" + "a" * 40 + "/Hello-World/pull/2", PUBLIC),
        ("https://github.com/Codertocat/Hello World/pull/2", PUBLIC),
        ("Codertocat/Hello-World#99999999999", PUBLIC),
        ("Codertocat/.#2", PUBLIC),
        ("github.com.evil.example/Codertocat/Hello-World/pull/2", PUBLIC),
    ],
)
def test_an_address_of_anything_else_is_refused(text: str, api: str) -> None:
    with pytest.raises(AddressError):
        parse_address(text, api)


@pytest.mark.parametrize("text", ["change.diff", "-", "dir/change.patch", "a/b#c/d"])
def test_a_file_name_is_no_address(text: str) -> None:
    assert not is_address(text)
