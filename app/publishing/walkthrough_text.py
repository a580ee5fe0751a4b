"""The walkthrough as the summary comment shows it, above the findings.

Everything in it but the headings is model text or a pull request's paths: each piece goes
through `app.publishing.markdown` (no links, images or mentions), the diagram through
`app.publishing.mermaid`, and each is bounded, as is the number of files listed.
"""

from itertools import groupby
from posixpath import dirname

from agents.walkthrough import Walkthrough
from app.publishing import markdown as md
from app.publishing.mermaid import sequence_diagram

DESCRIPTION_LIMIT = 1_200
LINE_LIMIT = 200
MAX_FILES = 60
GROUP_FROM = 10
"""From this many files on, they are listed under their directories."""


def walkthrough_section(walkthrough: Walkthrough | None) -> list[str]:
    """The pieces of the summary's walkthrough, each ending where Markdown may be cut."""
    if walkthrough is None or not (walkthrough.description or walkthrough.files):
        return []
    pieces = ["#### Walkthrough\n\n"]
    pieces += [f"{md.prose(p, DESCRIPTION_LIMIT)}\n\n" for p in walkthrough.description]
    if walkthrough.effort is not None:
        pieces.append(f"**Review effort:** {walkthrough.effort}/5\n\n")
    pieces += _files(walkthrough)
    if walkthrough.attention:
        pieces.append("**Deserves a closer look**\n\n")
        pieces += [
            f"- {md.code(a.path)}: {md.inline(a.why, LINE_LIMIT)}\n" for a in walkthrough.attention
        ]
        pieces.append("\n")
    for diagram in walkthrough.diagrams:
        lines = sequence_diagram(diagram)
        if lines:
            pieces.append(md.code_block(lines, "mermaid") + "\n\n")
    return pieces


def _files(walkthrough: Walkthrough) -> list[str]:
    shown = walkthrough.files[:MAX_FILES]
    pieces = ["**Files**\n\n"]
    if len(walkthrough.files) + len(walkthrough.unreviewed) < GROUP_FROM:
        pieces += [_file(f.path, f.summary) for f in shown]
    else:
        ordered = sorted(shown, key=lambda f: (dirname(f.path), f.path))
        for directory, files in groupby(ordered, key=lambda f: dirname(f.path)):
            pieces.append(f"- {md.code(directory + '/' if directory else './')}\n")
            pieces += ["  " + _file(f.path, f.summary) for f in files]
    if len(walkthrough.files) > MAX_FILES:
        pieces.append(f"- and {len(walkthrough.files) - MAX_FILES} more files\n")
    pieces += [f"- {md.code(path)}: not reviewed (see below)\n" for path in walkthrough.unreviewed]
    pieces.append("\n")
    return pieces


def _file(path: str, summary: str) -> str:
    said = md.inline(summary, LINE_LIMIT) if summary.strip() else ""
    return f"- {md.code(path)}{': ' + said if said else ''}\n"
