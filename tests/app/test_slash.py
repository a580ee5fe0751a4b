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
        ("/tiebreak budget ²", [Unrecognised("budget ²")]),
        ("/tiebreak budget 5²", [Unrecognised("budget 5²")]),
        ("/tiebreak forget ①", [Unrecognised("forget ①")]),
        (
            "/tiebreak budget \uff15\uff10\uff10\uff10",
            [Unrecognised("budget \uff15\uff10\uff10\uff10")],
        ),
        ("/tiebreak review now please", [Unrecognised("review now please")]),
        ("/tiebreak help", [HELP]),
        ("/tiebreak learnings", [Command(CommandName.LEARNINGS)]),
        ("/tiebreak forget 3", [Command(CommandName.FORGET, 3)]),
        ("/tiebreak forget #12", [Command(CommandName.FORGET, 12)]),
        ("/tiebreak forget", [Unrecognised("forget")]),
        ("/tiebreak forget all", [Unrecognised("forget all")]),
        ("/tiebreak learnings 2", [Unrecognised("learnings 2")]),
        (
            "/tiebreak resolve Amounts are integer cents here.",
            [Command(CommandName.RESOLVE, text="Amounts are integer cents here.")],
        ),
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


# Breaks `str.splitlines` knows and GitHub's Markdown does not: to GitHub, what follows one is on
# the same line, inside the same quote or code block.
NOT_LINE_ENDINGS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


@pytest.mark.parametrize("separator", NOT_LINE_ENDINGS, ids=ascii)
@pytest.mark.parametrize(
    "template",
    [
        "> Thanks for the review.{sep}/tiebreak resolve",
        ">> nested{sep}@tiebreak apply",
        "```\nprint(1){sep}```{sep}/tiebreak resolve\n```",
        "~~~\nx{sep}~~~{sep}/tiebreak resolve\n~~~",
        "    code(){sep}/tiebreak resolve",
        "Please run{sep}/tiebreak resolve",
    ],
    ids=["quote", "nested-quote", "backtick-fence", "tilde-fence", "indented-code", "sentence"],
)
def test_command_after_unicode_line_separator_in_quote_does_not_run(
    template: str, separator: str
) -> None:
    assert parse_commands(template.format(sep=separator)) == []


@pytest.mark.parametrize(
    "body",
    [
        "/tiebreak review\n/tiebreak apply",
        "/tiebreak review\r\n/tiebreak apply",
        "/tiebreak review\r/tiebreak apply",
    ],
    ids=["lf", "crlf", "cr"],
)
def test_commonmark_line_endings_separate_commands(body: str) -> None:
    assert parse_commands(body) == [REVIEW, APPLY]


def test_a_fence_line_with_an_info_string_does_not_close_a_fence() -> None:
    # CommonMark: a closing fence carries nothing but spaces after its backticks.
    body = "```\nx = 1\n```python\n/tiebreak resolve\n```"

    assert parse_commands(body) == []


def test_distinct_commands_are_kept_in_order_and_unknown_lines_collapse_into_one() -> None:
    body = "\n".join(
        [
            "/tiebreak deploy",
            "/tiebreak review",
            "/tiebreak ship it",
            "/tiebreak budget 50000",
            "/tiebreak budget 60000",
            "/tiebreak review",
            "/tiebreak apply",
        ]
    )

    assert parse_commands(body) == [
        Unrecognised("deploy"),
        REVIEW,
        Command(CommandName.BUDGET, 50_000),
        APPLY,
    ]


def test_no_more_than_the_cap_of_commands_is_taken_from_a_comment() -> None:
    every = "\n".join(f"/tiebreak {name}" for name in ("stop", "help", "review", "apply"))
    body = f"{every}\n/tiebreak resolve\n/tiebreak arbitrate\n/tiebreak budget 9000"

    assert parse_commands(body) == [STOP, HELP, REVIEW, APPLY, Command(CommandName.RESOLVE)]


def sixty_five_kb_of_distinct_command_lines() -> str:
    """GitHub's largest comment (65,536 characters), one distinct command line after another."""
    lines, size, i = [], 0, 0
    while size < 65_536:
        line = [f"/tiebreak x{i}", f"/tiebreak budget {10_000 + i}", f"@tiebreak help {i}"][i % 3]
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines)[:65_536]


def test_huge_comment_of_commands_yields_at_most_the_cap() -> None:
    parsed = parse_commands(sixty_five_kb_of_distinct_command_lines())

    assert parsed == [Unrecognised("x0"), Command(CommandName.BUDGET, 10_001)]


def test_an_unknown_line_is_kept_short() -> None:
    (parsed,) = parse_commands("/tiebreak " + "deploy " * 10_000)

    assert isinstance(parsed, Unrecognised)
    assert len(parsed.text) <= 100
