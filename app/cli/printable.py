"""Text from outside Tiebreak as a terminal shows it: the model's, the tests', a pull request's
or Redis's, without what would drive the terminal.

A terminal obeys what it is sent. An escape sequence retitles its window (`ESC ] 0 ; … BEL`),
clears the screen or moves the cursor (`ESC [ 2 J`), a C1 control does the same in one
character, a bell rings, a carriage return writes over what a line said, and bidi overrides
or zero-width characters make what a person reads differ from what is there. So every such
text goes through :func:`printable` on its way to the terminal: escape sequences removed
whole, the text around them kept (the pattern of :mod:`agents.failures.escapes`, which a
test's output is cleaned of where it is recorded), then every control character (Unicode's
Cc: C0, DEL, C1) but the line breaks and tabs a layout needs, every format character (Cf:
bidi controls, zero-width ones) and every lone surrogate, which no terminal encoding can
write.

`--json` is data for a program: :func:`json_text` keeps every text as it was, exactly, and
writes those same characters as JSON escapes (`\\u001b`, `\\u202e`), so that the document
still means what the model said and a terminal it is printed to shows it inertly.
"""

import json
import re
import unicodedata
from typing import Any

from agents.failures.escapes import without_escapes

_BREAKS = re.compile(r"\r\n|[\r\v\f\x85\u2028\u2029]")
"""What ends a line besides a newline: each is one."""
_KEPT = frozenset("\n\t")
_INERT = frozenset({"Cc", "Cf", "Cs"})
"""Unicode's controls, format characters and surrogates."""


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` without what would drive a terminal: its newlines and tabs kept, or, with
    `one_line`, every run of spaces, tabs and line breaks made one space."""
    text = _BREAKS.sub("\n", without_escapes(text))
    kept = "".join(c for c in text if c in _KEPT or unicodedata.category(c) not in _INERT)
    return " ".join(kept.split()) if one_line else kept


def json_text(data: Any) -> str:
    """`data` as indented JSON, every character :func:`printable` removes or breaks a line
    at written as an escape (JSON escapes the C0 controls itself; the rest are escaped here)."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    # Outside its strings JSON writes only ASCII punctuation, letters, digits, spaces and the
    # indent's newlines: any other such character is inside a string, where its escape means
    # the same.
    return "".join(_escaped(c) if _unsafe(c) else c for c in text)


def _unsafe(char: str) -> bool:
    return char != "\n" and (char in "\u2028\u2029" or unicodedata.category(char) in _INERT)


def _escaped(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
