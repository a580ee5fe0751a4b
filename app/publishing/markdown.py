"""Markdown for GitHub: untrusted text made inert.

Models write the claims, arguments and rulings; a pull request's author writes the paths. None
of it may act on the page. Model text cannot ping anyone (an @mention gets a zero-width
joiner), cannot open a code fence, HTML block or comment that swallows what follows (fences are
re-emitted closed, `<` is escaped), cannot forge a committable suggestion or Tiebreak's hidden
run marker, and cannot link anywhere or embed an image — a tracking pixel or a phishing link
posted under Tiebreak's name: brackets are escaped, so `[text](url)` and `![alt](url)` read as
the characters they are, and a web address reads as inline code, which GitHub does not turn
into a link. Tiebreak's own links are its own text, never a model's. Inline code survives as
`<code>` with its punctuation encoded as character references, so it still renders as code but
cannot be read as Markdown or HTML.
"""

import re
from collections.abc import Callable, Sequence

PROSE_LIMIT = 4_000
"""Characters of one piece of model text shown in a comment: keeps every comment readable. A
comment that would not fit :data:`app.bodies.LIMIT` shows less of each
(:mod:`app.publishing.comment_text`)."""

ZWJ = "\u200d"

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_TILDES = re.compile(r"~(?=~~)")
# What GitHub would turn into a link by itself: a URL with a scheme, or a `www.` address.
_ADDRESS = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]{1,20}://|www\.)[^\s<>`]*[^\s<>`.,:;!?'\")\]]")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_INFO = re.compile(r"[A-Za-z0-9_+#.-]{1,30}")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# Everything Markdown, GFM or GitHub's filters could read inside a `<code>` element.
_ENCODED = frozenset("&<>`*_[]\\|~$@")


def clip(text: str, limit: int) -> str:
    """`text`, cut to at most `limit` characters with an ellipsis where it was cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def one_line(text: str, limit: int) -> str:
    """`text` on one line, clipped: for titles, table cells and list items."""
    return clip(" ".join(text.split()), limit)


def code(text: str) -> str:
    """`text` as inline code that nothing inside can break out of (paths, shas)."""
    return f"<code>{_encode(' '.join(text.splitlines()))}</code>"


LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".go": "go",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "jsx",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".rb": "ruby",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".php": "php",
    ".cs": "csharp",
    ".swift": "swift",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".sh": "shell",
}
"""A code block's language, by the suffix of the file it shows (GitHub's names for them)."""


def fence_language(path: str) -> str:
    """The language a code block showing the file at `path` is fenced in ("" when not known)."""
    suffix = path[path.rfind(".") :].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return LANGUAGES.get(suffix, "")


def code_block(lines: Sequence[str], info: str = "") -> str:
    """A fenced block holding exactly `lines`: the fence outruns every backtick run inside."""
    content = "\n".join(lines)
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{content}\n{fence}" if lines else f"{fence}{info}\n{fence}"


def replacement_lines(replacement: str) -> list[str]:
    """A patch's replacement as lines, split as the engine splits it (see agents.patches)."""
    if not replacement:
        return []
    return [line.removesuffix("\r") for line in replacement.removesuffix("\n").split("\n")]


def suggestion(replacement: str) -> str:
    """A committable suggestion that replaces the commented lines with `replacement`."""
    return code_block(replacement_lines(replacement), "suggestion")


def prose(text: str, limit: int = PROSE_LIMIT) -> str:
    """Model text as Markdown paragraphs that stay inside their own block."""
    text = clip(text.replace("\r\n", "\n").replace("\r", "\n").strip("\n"), limit)
    lines = text.split("\n")
    out: list[str] = []
    plain: list[str] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None or (opening[2][0] == "`" and "`" in opening[3]):
            plain.append(lines[i])
            i += 1
            continue
        indent, fence = len(opening[1]), opening[2]
        close = _closing_fence(lines, i + 1, fence)
        if plain:
            out.append(_paragraphs("\n".join(plain)))
            plain = []
        # Re-emitted at column 0 with our own fence: closed even if the model never closed
        # it, and its info string can never be `suggestion`.
        body = [_dedent(line, indent) for line in lines[i + 1 : close]]
        out.append(code_block(body, _safe_info(opening[3])))
        i = close + 1
    if plain:
        out.append(_paragraphs("\n".join(plain)))
    return "\n".join(out)


def inline(text: str, limit: int) -> str:
    """Model text on one line, for a list item: no blocks at all."""
    return _inline(one_line(text, limit))


def cell(text: str) -> str:
    """Our own text made safe as one GFM table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def fit(pieces: Sequence[str], limit: int, note: Callable[[int], str]) -> str:
    """Join `pieces`, dropping trailing ones whole until the result and `note(cut)` fit.

    Each piece must end where Markdown may be cut: after a closed block or a table row.
    `note` is given how many characters were cut and must say so.
    """
    whole = "".join(pieces)
    if len(whole) <= limit:
        return whole
    # The longest note is the one for cutting everything: reserving it is always enough.
    room = limit - len(note(len(whole)))
    kept: list[str] = []
    size = 0
    for piece in pieces:
        if size + len(piece) > room:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept) + note(len(whole) - size)


def _closing_fence(lines: Sequence[str], start: int, fence: str) -> int:
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    return next((j for j in range(start, len(lines)) if closing.match(lines[j])), len(lines))


def _dedent(line: str, indent: int) -> str:
    stripped = line.lstrip(" ")
    return line[min(indent, len(line) - len(stripped)) :]


def _safe_info(info: str) -> str:
    words = info.split()
    language = words[0] if words else ""
    if not _INFO.fullmatch(language) or language.lower().startswith("suggestion"):
        return ""
    return language


def _paragraphs(text: str) -> str:
    # A code span never crosses a blank line, so each paragraph is scanned on its own.
    pieces = _BLANK_LINE.split(text)
    return "\n\n".join(_inline(p) for p in pieces)


def _inline(text: str) -> str:
    """Code spans become encoded `<code>`; the rest is escaped where it could do harm."""
    out: list[str] = []
    plain: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\" and i + 1 < n and text[i + 1] in _PUNCTUATION:
            # Escaped punctuation renders literally; keep the pair as it is.
            plain.append(text[i : i + 2])
            i += 2
            continue
        if char != "`":
            plain.append(_INERT.get(char, char))
            i += 1
            continue
        run = len(text[i:]) - len(text[i:].lstrip("`"))
        closing = _closing_run(text, i + run, run)
        if closing is None:
            plain.append("&#96;" * run)
            i += run
            continue
        out.append(_neutralise("".join(plain)))
        plain = []
        out.append(code(text[i + run : closing].strip(" ") or " "))
        i = closing + run
    out.append(_neutralise("".join(plain)))
    return "".join(out)


def _closing_run(text: str, start: int, length: int) -> int | None:
    for match in re.finditer(r"`+", text[start:]):
        if len(match.group()) == length:
            return start + match.start()
    return None


_INERT = {"<": "&lt;", "[": "\\[", "]": "\\]"}
"""Plain characters of model text replaced where they could start HTML, a link or an image."""


def _neutralise(text: str) -> str:
    pieces = _ADDRESS.split(text)
    addresses = _ADDRESS.findall(text)
    out = [_TILDES.sub("&#126;", _MENTION.sub("@" + ZWJ, pieces[0]))]
    for address, piece in zip(addresses, pieces[1:], strict=True):
        out.append(code(address.replace("\\[", "[").replace("\\]", "]").replace("&lt;", "<")))
        out.append(_TILDES.sub("&#126;", _MENTION.sub("@" + ZWJ, piece)))
    return "".join(out)


def _encode(text: str) -> str:
    return "".join(f"&#{ord(c)};" if c in _ENCODED else c for c in text)
