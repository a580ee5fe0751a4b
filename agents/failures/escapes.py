"""Terminal escape sequences, as one pattern: what a test's output is cleaned of where it is
recorded (:class:`agents.verification.Run`), and what the terminal's text is cleaned of
(`app.cli.printable`).

A test's output is read by agents and kept in JSON, a transcript and a pull request's
comments, none of them a terminal: a colour (pytest's `--color=yes`, `FORCE_COLOR`) there is
noise around the words that matter (`ESC [ 31 m` before "assert 7 == 12"), and a sequence that
retitles a window or clears a screen is worse. Each sequence goes whole, the text around it
kept.
"""

import re

ESCAPES = re.compile(
    # CSI: the cursor's moves, erasing, colours.
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]"
    # OSC, DCS, SOS, PM and APC strings, to their end (or the line's, unended).
    r"|[\x1b][\]PX^_][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    # Any other escape: `ESC c` resets the terminal, `ESC ( 0` swaps its characters.
    r"|\x1b[ -/]*[0-~]"
)


def without_escapes(text: str) -> str:
    """`text` with every escape sequence removed whole."""
    return ESCAPES.sub("", text)
