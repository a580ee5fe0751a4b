"""Parsing slash commands out of pull request comments."""

import pytest

from app.slash import Command, CommandName, Parsed, Unrecognised, parse_commands

REVIEW, APPLY, STOP, HELP = (Command(CommandName(n)) for n in ("review", "apply", "stop", "help"))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/tiebreak review", [REVIEW]),
        ("/TieBreak REVIEW", [REVIEW]),
        ("@tiebreak review", [REVIEW]),
        ("@tiebreak[bot] apply", [APPLY]),
        ("  /tiebreak stop  ", [STOP]),
        ("Looks good.\n/tiebreak apply\nThanks!", [APPLY]),
        ("/tiebreak review\n/tiebreak apply", [REVIEW, APPLY]),
        ("/tiebreak review\n/tiebreak review", [REVIEW]),
        ("/tiebreak budget 50000", [Command(CommandName.BUDGET, 50_000)]),
        ("/tiebreak budget 120,000", [Command(CommandName.BUDGET, 120_000)]),
        (
            "/tiebreak arbitrate\r\n/tiebreak resolve",
            [Command(CommandName.ARBITRATE), Command(CommandName.RESOLVE)],
        ),
        ("/tiebreak", [Unrecognised("")]),
        ("/tiebreak deploy", [Unrecognised("deploy")]),
        ("/tiebreak budget lots", [Unrecognised("budget lots")]),
        ("/tiebreak budget 0", [Unrecognised("budget 0")]),
        ("/tiebreak budget 99999999999", [Unrecognised("budget 99999999999")]),
        ("/tiebreak review now please", [Unrecognised("review now please")]),
        ("/tiebreak help", [HELP]),
    ],
)
def test_command_lines(body: str, expected: list[Parsed]) -> None:
    assert parse_commands(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "Please run /tiebreak review when ready",
        "/tiebreakreview",
        "> /tiebreak apply",
        ">> @tiebreak apply",
        "```\n/tiebreak apply\n```",
        "~~~sh\n/tiebreak apply\n~~~",
        "````\n```\n/tiebreak apply\n```\n````",
        "    /tiebreak apply",
        "\t/tiebreak apply",
        "/tiebreakers unite",
        "@tiebreaker review",
        "",
    ],
    ids=[
        "in-a-sentence",
        "glued",
        "quoted",
        "nested-quote",
        "fenced",
        "tilde-fence",
        "nested-fence",
        "indented-code",
        "tab-code",
        "other-word",
        "other-mention",
        "empty",
    ],
)
def test_lines_that_are_no_commands(body: str) -> None:
    assert parse_commands(body) == []


def test_a_command_after_a_closed_fence_counts() -> None:
    body = "```python\nprint('/tiebreak apply')\n```\n/tiebreak review"

    assert parse_commands(body) == [REVIEW]


def test_an_unclosed_fence_hides_the_rest() -> None:
    assert parse_commands("```\n/tiebreak apply") == []
