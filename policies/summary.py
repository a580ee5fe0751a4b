"""What the summary comment says before its findings: the config's `summary` section.

The walkthrough is written by each unit's first tester, in the report it makes anyway; these
switches say whether the report is asked for one and what it says.
"""

from policies.config_section import ConfigSection, Switch


class SummaryConfig(ConfigSection):
    """The walkthrough at the top of the summary comment."""

    walkthrough: Switch = True
    """Whether the summary opens with a walkthrough: what the change does, a line per changed
    file, the places that deserve a person's attention. Written in each unit's first report:
    no call of its own, only its few hundred tokens of answer."""

    diagram: Switch = False
    """Whether the walkthrough may carry a Mermaid sequence diagram, when the change alters a
    call flow across functions."""

    effort: Switch = True
    """Whether the walkthrough estimates the effort of reviewing the change, from 1 to 5."""
