"""The config's `summary` section: the walkthrough's switches, read from the repository's
`.github/tiebreak.yml` like every other section."""

import pytest

from policies.config import parse_config
from policies.summary import SummaryConfig


@pytest.mark.parametrize(
    ("text", "summary"),
    [
        ("", SummaryConfig(walkthrough=True, diagram=False, effort=True)),
        ("summary: {walkthrough: false}\n", SummaryConfig(walkthrough=False)),
        (
            "summary:\n  diagram: true\n  effort: false\n",
            SummaryConfig(diagram=True, effort=False),
        ),
    ],
    ids=["defaults", "no walkthrough", "diagram without effort"],
)
def test_the_summary_section_sets_the_walkthrough(text: str, summary: SummaryConfig) -> None:
    config, problems = parse_config(text)

    assert problems == []
    assert config.summary == summary


def test_an_unknown_summary_option_is_named_on_its_line() -> None:
    config, problems = parse_config("summary:\n  diagrams: true\n")

    assert config.summary == SummaryConfig()
    assert [(p.line, "summary.diagrams" in p.message) for p in problems] == [(2, True)]
