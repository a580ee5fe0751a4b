"""Secrets out of log lines: the last step of formatting every record, whatever logged it.

Redaction works on the final formatted line, so the message, its arguments, a traceback and
any extra field are covered alike, in JSON or text. It removes two kinds of secret:

* the values this process knows (the webhook secret, the API key, the App's private key and
  each line of it), also as they look JSON-escaped or inside a `repr`;
* the shapes of those it does not: installation and personal tokens (`ghs_…`, `github_pat_…`),
  the App's JWTs, Anthropic keys, PEM private key blocks (with real or escaped newlines), and
  `Authorization` / `X-Api-Key` values, and `token=` in a URL's query (a transcript link's).

Each becomes :data:`REDACTED`. The replacement never spans a quote or a backslash escape, so
a JSON line stays JSON. It is cheap where there is nothing to find: a substring test per known
value, and the patterns only run on a line holding a hint of what they look for.
"""

import json
import re
from collections.abc import Iterable

REDACTED = "[REDACTED]"

MIN_PIECE = 8
"""A line of a multi-line secret (a PEM body line) shorter than this is not looked for on its
own: the whole secret and its longer lines still are."""

# Characters of a token or header value: RFC 6750's b64token (and `%`, URL-encoded), never a
# quote or a backslash, so a match inside a JSON string ends before the string does.
_VALUE = r"[A-Za-z0-9._~+/=%-]+"
_QUOTE = r"""\\*["']"""

_TOKENS = re.compile(
    "|".join(
        [
            r"gh[pousr]_[A-Za-z0-9]{36,}",
            r"github_pat_[A-Za-z0-9_]{22,}",
            r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
            r"sk-ant-[A-Za-z0-9_-]{10,}",
            # A PEM block, its body lines separated by real newlines or by `\n` escapes (JSON,
            # repr, or both), maybe indented; a block cut short loses what there is of it.
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----"
            rf"(?:[A-Za-z0-9+/=]|(?:\r?\n|\\+[rn])[ \t]*|{re.escape(REDACTED)})*"
            r"(?:-----END [A-Z ]*PRIVATE KEY-----)?",
        ]
    )
)
"""Every alternative starts with a literal, which lets `re` skip ahead fast."""

_HEADERS = re.compile(
    # A header's value, its name and scheme kept: `Authorization: Bearer x`, `"authorization":
    # "token x"`, `(b'authorization', b'Bearer x')`, `X-Api-Key=k`.
    rf"(?i)(?P<kept>(?:authorization|(?:x-)?api[-_]?key)(?:{_QUOTE}?\s*[:=]|{_QUOTE}\s*,)"
    rf"\s*(?:b?{_QUOTE})?\s*(?:(?:bearer|token|basic)\s+)?){_VALUE}"
)

_TOKEN_HINTS = (*(f"gh{c}_" for c in "pousr"), "github_pat_", "eyj", "sk-ant-", "private key")
_QUERY = re.compile(rf"(?P<kept>[?&](?:access_)?token=){_VALUE}")
"""A credential in a URL's query: the signed token of a transcript link (which opens a
private transcript), as a request line of the access log shows it."""

_HEADER_HINTS = ("authorization", "api_key", "api-key", "apikey")
"""Lower-case substrings without which the patterns cannot match: most lines have none, and
are spared the patterns."""


class Redactor:
    """Replaces known secret values and secret-shaped strings in a line with ``[REDACTED]``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        variants: set[str] = set()
        for secret in secrets:
            if not secret.strip():
                continue
            lines = (line.strip() for line in secret.splitlines())
            pieces = [secret] + [
                line for line in lines if len(line) >= MIN_PIECE and not line.startswith("-----")
            ]
            for piece in pieces:
                variants.update(_spellings(piece))
        variants.discard("")
        # Longest first: a whole secret goes before the pieces it contains.
        self._values = sorted(variants, key=len, reverse=True)

    def __call__(self, line: str) -> str:
        for value in self._values:
            if value in line:
                line = line.replace(value, REDACTED)
        lower = line.lower()
        if any(hint in lower for hint in _HEADER_HINTS):
            line = _HEADERS.sub(lambda match: match["kept"] + REDACTED, line)
        if "token=" in lower:
            line = _QUERY.sub(lambda match: match["kept"] + REDACTED, line)
        if any(hint in lower for hint in _TOKEN_HINTS):
            line = _TOKENS.sub(REDACTED, line)
        return line


def _spellings(value: str) -> set[str]:
    """How `value` may appear in a line: as is, inside a repr (str or bytes), JSON-escaped,
    and JSON-escaped inside a repr."""
    escaped = {value, repr(value)[1:-1], repr(value.encode())[2:-1]}
    return escaped | {json.dumps(v, ensure_ascii=False)[1:-1] for v in escaped}
