"""A model's Mermaid sequence diagram made inert, or refused.

GitHub renders a `mermaid` block as a diagram, and Mermaid has its own ways to act on a page:
`click` and `link` directives, `%%{init}%%` configuration, HTML in labels, addresses. Only a
`sequenceDiagram` is accepted, line by line against the statements a sequence diagram needs
(participants, messages, notes, blocks); any other line is dropped, and what a label says is
kept to plain words: no `<`, `>`, quotes of HTML, backticks or web addresses.
"""

import re

MAX_LINES = 40
MAX_LINE = 160

_NAME = r"[A-Za-z0-9_. -]{1,40}"
_ARROW = r"(?:-{1,2}(?:>>|>|x|\)))"
_STATEMENTS = (
    re.compile(rf"^(?:participant|actor) {_NAME}(?: as {_NAME})?$"),
    re.compile(rf"^{_NAME}{_ARROW}[+-]?{_NAME}: .{{1,{MAX_LINE}}}$"),
    re.compile(rf"^Note (?:left of|right of|over) {_NAME}(?:,{_NAME})?: .{{1,{MAX_LINE}}}$"),
    re.compile(r"^(?:loop|alt|else|opt|par|and|critical|break)(?: [A-Za-z0-9 _.,?()-]{1,80})?$"),
    re.compile(rf"^(?:end|autonumber|(?:activate|deactivate) {_NAME})$"),
)
_ADDRESS = re.compile(r"(?i)(?:[a-z][a-z0-9+.-]{1,20}:|www\.)\S*")
_UNSAFE = re.compile(r"[<>`\"'{}\\;#&]")


def sequence_diagram(text: str) -> list[str] | None:
    """The diagram's lines, safe inside a `mermaid` block; None if it is no sequence
    diagram or nothing of it is left."""
    lines = [line.strip() for line in text.replace("\r", "\n").split("\n") if line.strip()]
    if not lines or lines[0] != "sequenceDiagram":
        return None
    kept = ["sequenceDiagram"]
    for line in lines[1:]:
        label_at = line.find(":")
        if label_at > 0:
            head, label = line[:label_at], line[label_at + 1 :]
            label = " ".join(_UNSAFE.sub("", _ADDRESS.sub("", label)).split())
            line = f"{head}: {label}" if label else ""
        if line and any(s.match(line) for s in _STATEMENTS):
            kept.append("    " + line)
        if len(kept) > MAX_LINES:
            break
    return kept if len(kept) > 1 else None
