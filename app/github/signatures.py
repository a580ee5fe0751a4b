"""Webhook signatures: whether a delivery's body was signed with the App's webhook secret.

Pure, as gidgethub's `sansio` is: no request is made. Only GitHub's SHA-256 signature counts;
a check fails closed on anything else.
"""

import hashlib
import hmac
import re

_SHA256 = re.compile(r"sha256=[0-9a-f]{64}")
"""The one shape of the header GitHub sends: the prefix, then the digest in lowercase hex."""


def signed(secret: str, body: bytes, signature: str) -> bool:
    """Whether `signature` (the `X-Hub-Signature-256` header) is the HMAC-SHA256 of `body`
    under `secret`."""
    # Anything of another shape is no signature, checked before comparing:
    # `hmac.compare_digest` raises on a non-ASCII string.
    if _SHA256.fullmatch(signature) is None:
        return False
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(digest, signature.removeprefix("sha256="))
