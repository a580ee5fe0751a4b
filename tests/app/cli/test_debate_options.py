"""`tiebreak review`'s options of the debate, as a person types them: each bound shown in
`--help`, and a value out of bounds refused naming the option, the rule and the value."""

import annotated_types
import click
import pytest

from app.cli.debate_options import OPTIONS, DebateOption
from policies.debate import DebatePolicy
from policies.panel import Focus
from tests.kits.command import tiebreak

DIFF = "diff --git a/x b/x\n"


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--ceiling", "5", "must be a whole number of at least 10,000, not 5"),
        ("--budget", "5", "must be a whole number of at least 1,000, not 5"),
        ("--max-rounds", "0", "must be a whole number from 1 to 50, not 0"),
        ("--testers", "9", "must be a whole number from 1 to 5, not 9"),
    ],
)
def test_a_number_out_of_bounds_is_refused_naming_the_option(
    option: str, value: str, said: str
) -> None:
    done = tiebreak("review", option, value, "-", stdin=DIFF)

    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == f"Error: Invalid value for '{option}': {said}"


def test_an_unknown_focus_is_refused_naming_the_option() -> None:
    done = tiebreak("review", "--focus", "speed", "-", stdin=DIFF)

    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--focus': 'speed' is not one of 'general', 'correctness', "
        "'security', 'performance', 'concurrency', 'error_handling', 'compatibility'."
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--testers", "1", "--focus", "security", "--focus", "performance"],
            "Error: Invalid value for '--focus' / '--testers': --focus names 2 focuses for 1 "
            "tester",
        ),
        (
            ["--testers", "2", "--focus", "security", "--focus", "security"],
            "Error: Invalid value for '--focus': --focus names 'security' twice: each tester "
            "needs its own focus",
        ),
        (
            ["--budget", "300000"],
            "Error: Invalid value for '--budget': budget_cap (240,000) is less than --budget "
            "(300,000)",
        ),
    ],
)
def test_options_that_disagree_are_refused_naming_them(args: list[str], said: str) -> None:
    done = tiebreak("review", *args, "-", stdin=DIFF)

    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == said
    assert "Value error" not in done.stderr


def test_help_shows_each_bound() -> None:
    done = tiebreak("review", "--help")

    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.split())
    for bound in (
        "--ceiling INTEGER Hard token ceiling of the whole review (default 400,000). "
        "[at least 10,000]",
        "[at least 1,000]",
        "[from 1 to 50]",
        "[from 1 to 5]",
    ):
        assert bound in shown
    assert "general, correctness, security, performance, concurrency, error_handling, " in shown


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.flag)
def test_each_options_bounds_are_those_the_config_holds_the_field_to(option: DebateOption) -> None:
    """The options read their bounds from constants so that `--help` loads no pydantic; a
    field's bound changed in the policy alone would let the option promise what the config
    refuses, or refuse what it takes."""
    field = DebatePolicy.model_fields[option.field]
    low = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None)

    if option.field == "focus":
        assert (low, high) == (None, None)
        choice = option.click_type()
        assert isinstance(choice, click.Choice)
        assert list(choice.choices) == list(Focus)
    else:
        assert (option.low, option.high) == (low, high)
