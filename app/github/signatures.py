"""Webhook signatures: whether a delivery's body was signed with the App's webhook secret.

Pure, as gidgethub's `sansio` is: no request is made. Only GitHub's SHA-256 signature counts;
a check fails closed on anything else.
"""

from githubkit import webhooks


def signed(secret: str, body: bytes, signature: str) -> bool:
    """Whether `signature` (the `X-Hub-Signature-256` header) is the HMAC-SHA256 of `body`
    under `secret`."""
    # githubkit falls back to sha1 without the prefix: insist on sha256.
    return signature.startswith("sha256=") and webhooks.verify(secret, body, signature)
