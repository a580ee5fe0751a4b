"""Secrets out of log lines: the last step of formatting every record, whatever logged it.

Redaction works on the final formatted line, so the message, its arguments, a traceback and
any extra field are covered alike, in JSON or text. It removes two kinds of secret:

* the values this process knows (the webhook secret, the API key, the App's private key and
  each line of it, the AWS secret key and session token), also as they look JSON-escaped or
  inside a `repr`;
* the shapes of those it does not: installation and personal tokens (`ghs_…`, `github_pat_…`),
  JWTs (the App's, a Google id token), Anthropic keys, PEM private key blocks (with real or
  escaped newlines), Google OAuth tokens (`ya29.…`, `1//0…`) and API keys (`AIza…`); the
  values of `Authorization` / `X-Api-Key`, of AWS's and Google's credential headers and query
  parameters (`X-Amz-Security-Token`, `X-Amz-Credential`, `X-Goog-Iam-Authorization-Token`, …)
  and of credential fields (`access_token`, `refresh_token`, `client_secret`, `private_key`,
  …); a SigV4 `Authorization`'s or a presigned URL's `Credential=` and `Signature=`, and the
  signature botocore logs alone; and `token=` in a URL's query (a transcript link's).

Each becomes :data:`REDACTED`. The replacement never spans a quote or a backslash escape, so
a JSON line stays JSON. It is cheap where there is nothing to find: a substring test per known
value and per hint, and a pattern only runs on a line holding a hint of what it looks for.
"""

import json
import re
from collections.abc import Callable, Iterable

REDACTED = "[REDACTED]"

MIN_PIECE = 8
"""A known value shorter than this is not looked for: as a line of a multi-line secret (a PEM
body line), the whole secret and its longer lines still are; alone, it is no secret any
service would take (an API key, an AWS key, a token), and looked for it would hit ordinary
words of every line. Tiebreak's own secrets are refused shorter than 16 characters
(:data:`app.settings.MIN_SECRET_CHARS`)."""

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
            r"ya29\.[A-Za-z0-9._-]+",  # Google's OAuth access tokens,
            r"1//0[A-Za-z0-9_-]{20,}",  # its refresh tokens,
            r"AIza[A-Za-z0-9_-]{35}",  # and its API keys
            # A PEM block, its body lines separated by real newlines or by `\n` escapes (JSON,
            # repr, or both), maybe indented; a block cut short loses what there is of it.
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----"
            rf"(?:[A-Za-z0-9+/=]|(?:\r?\n|\\+[rn])[ \t]*|{re.escape(REDACTED)})*"
            r"(?:-----END [A-Z ]*PRIVATE KEY-----)?",
        ]
    )
)
"""Every alternative starts with a literal, which lets `re` skip ahead fast."""

_SCHEMES = "bearer|token|basic|aws4-hmac-sha256|goog4-rsa-sha256"


def _credential(names: str) -> re.Pattern[str]:
    """The value after one of `names` (a regex), the name and any auth scheme kept, as a
    header, a query parameter or a field shows it: `Authorization: Bearer x`,
    `"authorization": "token x"`, `(b'authorization', b'Bearer x')`, `X-Api-Key=k`,
    `x-amz-security-token:t` (a canonical request), `"refresh_token": "r"`. A PEM block is
    left whole to `_TOKENS`, which takes its body lines too."""
    return re.compile(
        rf"(?i)(?P<kept>(?:{names})(?:{_QUOTE}?\s*[:=]|{_QUOTE}\s*,)"
        rf"\s*(?:b?{_QUOTE})?\s*(?:(?:{_SCHEMES})\s+)?)(?!-----BEGIN ){_VALUE}"
    )


_CREDENTIALS = (
    # (lower-case hints, without which the pattern cannot match; the pattern). A family per
    # pattern: one alternation of every name costs many times a line's scan for one.
    (("authorization",), _credential("authorization")),
    (("api_key", "api-key", "apikey"), _credential(r"(?:x-)?api[-_]?key")),  # x-goog-api-key
    (("x-amz-",), _credential("x-amz-(?:security-token|credential|signature)")),
    (("x-goog-",), _credential("x-goog-(?:credential|signature|iam-authorization-token)")),
    (
        ("access_token", "refresh_token", "session_token", "secret", "private_key"),
        _credential(
            r"(?:access|refresh|session)_token|client_secret|private_key|aws_secret_access_key"
        ),
    ),
)
"""Names whose value is a credential: headers, query parameters and fields of AWS, Google
and OAuth. Most lines hold none of the hints, and are spared the patterns."""

_SIGNING = re.compile(
    # A SigV4 (or GOOG4) `Authorization`'s `Credential=`/`Signature=`, a presigned URL's
    # `X-Amz-Signature=`, and the lone signature botocore logs on a line of its own.
    rf"(?i)(?P<kept>\b(?:credential|signature)=|\bsignature:(?:\s|\\+[rn])*(?=[0-9a-f]{{64}}\b))"
    rf"{_VALUE}"
)
_SIGNING_HINTS = ("credential", "signature")

_TOKEN_HINTS = (
    *(f"gh{c}_" for c in "pousr"),
    "github_pat_",
    "eyj",
    "sk-ant-",
    "private key",
    "ya29.",
    "1//0",
    "aiza",
)
_QUERY = re.compile(rf"(?P<kept>[?&](?:access_)?token=){_VALUE}")
"""A credential in a URL's query: the signed token of a transcript link (which opens a
private transcript), as a request line of the access log shows it."""


def _kept(match: re.Match[str]) -> str:
    return match["kept"] + REDACTED


_PATTERNS: tuple[
    tuple[tuple[str, ...], re.Pattern[str], str | Callable[[re.Match[str]], str]], ...
] = (
    *((hints, pattern, _kept) for hints, pattern in _CREDENTIALS),
    (("token=",), _QUERY, _kept),
    (_SIGNING_HINTS, _SIGNING, _kept),
    (_TOKEN_HINTS, _TOKENS, REDACTED),
)
"""Each pattern, in the order they run, with its hints and what replaces a match."""
_HINTS = tuple(dict.fromkeys(hint for hints, _, _ in _PATTERNS for hint in hints))


class Redactor:
    """Replaces known secret values and secret-shaped strings in a line with ``[REDACTED]``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        variants: set[str] = set()
        for secret in secrets:
            if len(secret.strip()) < MIN_PIECE:
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
        if not [hint for hint in _HINTS if hint in lower]:
            return line  # most lines: one pass over the hints, and no pattern
        for hints, pattern, replacement in _PATTERNS:
            if any(hint in lower for hint in hints):
                line = pattern.sub(replacement, line)
        return line


def _spellings(value: str) -> set[str]:
    """How `value` may appear in a line: as is, inside a repr (str or bytes), JSON-escaped,
    and JSON-escaped inside a repr."""
    escaped = {value, repr(value)[1:-1], repr(value.encode())[2:-1]}
    return escaped | {json.dumps(v, ensure_ascii=False)[1:-1] for v in escaped}
