"""Slash commands in pull request comments: `/tiebreak review`, `@tiebreak apply`, ...

A command is a line of its own that starts with `/tiebreak` or `@tiebreak`, in any case.
Lines inside fenced code blocks, indented code and quotes (`>`) are never commands: quoting
someone's command must not run it again. Parsing is pure; who may run what is decided later.
"""

import re
from dataclasses import dataclass
from enum import StrEnum

APP_NAME = "tiebreak"
MAX_BUDGET_DIGITS = 9

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class CommandName(StrEnum):
    REVIEW = "review"
    ARBITRATE = "arbitrate"
    RESOLVE = "resolve"
    APPLY = "apply"
    STOP = "stop"
    BUDGET = "budget"
    HELP = "help"


@dataclass(frozen=True, slots=True)
class Command:
    """A recognised command; `argument` is set for `budget N`."""

    name: CommandName
    argument: int | None = None


@dataclass(frozen=True, slots=True)
class Unrecognised:
    """A line addressed to Tiebreak that is no command it knows: it earns the help reply."""

    text: str


Parsed = Command | Unrecognised

HELP = f"""\
Tiebreak's commands, each on a line of its own (`/{APP_NAME}` or `@{APP_NAME}`):

| command | what it does |
|---|---|
| `/{APP_NAME} review` | review the current head again |
| `/{APP_NAME} arbitrate` | send the open findings of the latest review to the arbiter now \
(in a reply to a finding: just that finding) |
| `/{APP_NAME} resolve` | accept the current state: remove `Unresolved` and pass the check |
| `/{APP_NAME} apply` | commit the agreed and forced fixes of the latest review to the head branch |
| `/{APP_NAME} stop` | stop the running review |
| `/{APP_NAME} budget N` | set the token budget of this pull request's next review |
| `/{APP_NAME} help` | show this list |

Only people with write access to the repository can run them."""


def parse_commands(body: str, *, app_name: str = APP_NAME) -> list[Parsed]:
    """Every command line of a comment, in order, each once."""
    prefix = re.compile(rf"^[/@]{re.escape(app_name)}(?:\[bot\])?(?:\s+(.*))?$", re.IGNORECASE)
    found: list[Parsed] = []
    fence: str | None = None
    for line in body.splitlines():
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        if line.startswith(("    ", "\t")):
            continue  # indented code
        text = line.strip()
        if text.startswith(">"):
            continue
        match = prefix.match(text)
        if match is None:
            continue
        parsed = _command(match.group(1) or "")
        if parsed not in found:
            found.append(parsed)
    return found


def _command(rest: str) -> Parsed:
    word, _, argument = rest.strip().partition(" ")
    try:
        name = CommandName(word.lower())
    except ValueError:
        return Unrecognised(rest.strip())
    argument = argument.strip()
    if name is CommandName.BUDGET:
        digits = argument.replace(",", "").replace("_", "")
        if not digits.isdigit() or len(digits) > MAX_BUDGET_DIGITS or int(digits) == 0:
            return Unrecognised(rest.strip())
        return Command(name, int(digits))
    if argument:
        return Unrecognised(rest.strip())
    return Command(name)
