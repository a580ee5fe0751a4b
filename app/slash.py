"""Slash commands in pull request comments: `/tiebreak review`, `@tiebreak apply`, ...

A command is a line of its own that starts with `/tiebreak` or `@tiebreak`, in any case.
Lines inside fenced code blocks, indented code and quotes (`>`) are never commands: quoting
someone's command must not run it again. Lines are split where GitHub's Markdown splits them
(CommonMark's line endings), so a command is what the comment shows on a line of its own.
Parsing is pure and linear in the comment, and stops at :data:`MAX_COMMANDS`; who may run
what is decided later.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

APP_NAME = "tiebreak"
MAX_BUDGET_DIGITS = 9

MAX_COMMANDS = 5
"""Commands taken from one comment, an unrecognised line included; the rest is not read.
Nine commands exist and each runs at most once per comment: more than this is no request a
person makes, and each one may cost a reply."""

MAX_UNRECOGNISED = 100
"""Characters of an unrecognised line kept to quote back."""

MAX_REASON = 600
"""Characters of `/tiebreak resolve <reason>` kept: a learning's rule is at most 300, and a
longer reason is refused as one rather than cut silently."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CLOSING_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
# CommonMark's line endings, and no others: `str.splitlines` also breaks at U+2028, U+0085,
# form feeds..., which GitHub shows inside the line (and so inside its quote or code block).
_LINE_ENDING = re.compile(r"\r\n|\r|\n")
_NUMBER = re.compile(rf"[0-9]{{1,{MAX_BUDGET_DIGITS}}}")
"""A budget's or a learning's number: ASCII digits only (`str.isdigit` also takes "²", which
`int` refuses)."""


class CommandName(StrEnum):
    REVIEW = "review"
    ARBITRATE = "arbitrate"
    RESOLVE = "resolve"
    APPLY = "apply"
    STOP = "stop"
    BUDGET = "budget"
    LEARNINGS = "learnings"
    FORGET = "forget"
    HELP = "help"


_NAMES = {str(name): name for name in CommandName}


@dataclass(frozen=True, slots=True)
class Command:
    """A recognised command; `argument` is set for `budget N` and `forget N`, `text` for
    `resolve <reason>`."""

    name: CommandName
    argument: int | None = None
    text: str = ""


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
| `/{APP_NAME} resolve <reason>` | in a finding's thread: resolve, and teach Tiebreak the \
reason as a learning for later reviews of that file's directory |
| `/{APP_NAME} learnings` | list what this repository taught Tiebreak |
| `/{APP_NAME} forget N` | remove learning N: later reviews no longer read it |
| `/{APP_NAME} help` | show this list |

Only people with write access to the repository can run them; a comment runs at most \
{MAX_COMMANDS} commands, each once."""


def parse_commands(body: str, *, app_name: str = APP_NAME) -> list[Parsed]:
    """The command lines of a comment, in order: each command once (the first `budget N`),
    every unrecognised line folded into the first, and at most :data:`MAX_COMMANDS` in all."""
    prefix = re.compile(rf"^[/@]{re.escape(app_name)}(?:\[bot\])?(?:\s+(.*))?$", re.IGNORECASE)
    found: list[Parsed] = []
    taken: set[CommandName | None] = set()  # None: an unrecognised line
    for line in _command_lines(body):
        match = prefix.match(line)
        if match is None:
            continue
        parsed = _command(match.group(1) or "")
        name = parsed.name if isinstance(parsed, Command) else None
        if name in taken:
            continue
        taken.add(name)
        found.append(parsed)
        if len(found) == MAX_COMMANDS:
            break
    return found


def _command_lines(body: str) -> Iterator[str]:
    """The lines of `body` that may hold a command, stripped: not in code, not quoted."""
    fence: str | None = None
    for line in _lines(body):
        if fence is not None:
            closing = _CLOSING_FENCE.match(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence):
                fence = None
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)
            continue
        if line.startswith(("    ", "\t")):
            continue  # indented code
        text = line.strip()
        if not text.startswith(">"):
            yield text


def _lines(body: str) -> Iterator[str]:
    """`body`'s lines as GitHub's Markdown splits them, one at a time."""
    start = 0
    for ending in _LINE_ENDING.finditer(body):
        yield body[start : ending.start()]
        start = ending.end()
    if start < len(body):
        yield body[start:]


def _command(rest: str) -> Parsed:
    word, _, argument = rest.strip().partition(" ")
    name = _NAMES.get(word.lower())
    if name is None:
        return _unrecognised(rest)
    argument = argument.strip()
    if name in (CommandName.BUDGET, CommandName.FORGET):
        digits = argument.replace(",", "").replace("_", "").removeprefix("#")
        if not _NUMBER.fullmatch(digits) or int(digits) == 0:
            return _unrecognised(rest)
        return Command(name, int(digits))
    if name is CommandName.RESOLVE:
        return Command(name, text=argument[:MAX_REASON])
    if argument:
        return _unrecognised(rest)
    return Command(name)


def _unrecognised(rest: str) -> Unrecognised:
    return Unrecognised(rest.strip()[:MAX_UNRECOGNISED])


_SUGGESTION = re.compile(r"^ {0,3}(?:`{3,}|~{3,})[ \t]*suggestion\b", re.IGNORECASE | re.MULTILINE)
_FIXED_IN = re.compile(r"\bfixed\s+(?:in|by)\s+`?[0-9a-f]{7,40}\b", re.IGNORECASE)


def carries_fix(body: str) -> bool:
    """Whether a reply on a finding brings a fix rather than an argument: a ```suggestion
    block, or "fixed in <sha>". The next push's review sees the fix; it is not argued."""
    return bool(_SUGGESTION.search(body) or _FIXED_IN.search(body))
