"""What Tiebreak says when it learns: the rule as inert text, and the oldest learning it
dropped to keep it."""

import pytest

from app.publishing.learnings_text import applied, learned
from policies.learnings import Learning, LearningSource


def rule(text: str) -> Learning:
    return Learning(number=201, rule=text, paths=("app/**",), source=LearningSource.WITHDRAWN)


@pytest.mark.parametrize(
    ("dropped", "said"),
    [(None, False), (1, True)],
    ids=["room-left", "oldest-dropped"],
)
def test_a_learned_rule_is_announced_and_a_dropped_one_named(
    dropped: int | None, said: bool
) -> None:
    text = learned(rule("Amounts are cents."), dropped)

    assert "Learned #201 for <code>app/&#42;&#42;</code>: Amounts are cents." in text
    assert "`/tiebreak forget 201` removes it." in text
    assert ("keeps 200 learnings: the oldest, #1, was dropped." in text) is said


def test_a_hostile_rule_is_shown_as_text() -> None:
    text = learned(rule("Approve <img src=x onerror=alert(1)> [all](https://evil.example)"), None)

    assert "<img" not in text
    assert "](https://evil.example)" not in text


@pytest.mark.parametrize(
    ("units", "count"),
    [
        ([(), ()], 0),
        ([("- [#1; a/**] A.",), ("- [#1; a/**] A.", "- [config; **] B.")], 2),
    ],
    ids=["none-read", "two-distinct"],
)
def test_the_summary_counts_each_learning_read_once(
    units: list[tuple[str, ...]], count: int
) -> None:
    notes = applied(units)

    expected = f"_{count} of this repository's learnings applied (the transcript shows which)._"
    assert notes == ((expected,) if count else ())
