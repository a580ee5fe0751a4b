"""How Tiebreak hears people who reply on its findings' threads (`conversation` in the config).

A reply by the pull request's author or by someone with write access, on a thread Tiebreak
started, is that finding's next message: the tester weighs it as it weighs the coder's
answers. Each reply heard costs one tester call, so a pull request hears a bounded number.
"""

from pydantic import Field

from policies.config_section import ConfigSection, Switch


class HearingPolicy(ConfigSection):
    """Replies on Tiebreak's finding threads, heard as the finding's next message."""

    enabled: Switch = True
    """Whether a reply by the pull request's author, or by someone with write access, on
    one of Tiebreak's finding threads is heard: the tester weighs it and either withdraws the
    finding or answers why it stands."""

    max_replies: int = Field(default=10, ge=0, le=100)
    """Replies heard per pull request, over all its threads; a reply past this gets one
    short note, once, and is not weighed."""
