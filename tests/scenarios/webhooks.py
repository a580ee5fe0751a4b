"""GitHub's webhook payload examples (tests/fixtures, octokit, MIT) and signed deliveries."""

import json
import uuid
from typing import Any

from githubkit import webhooks

from tests.scenarios.webhook_shapes import FIXTURES, mismatches

SECRET = "webhook-secret-for-tests"


def payload(name: str) -> dict[str, Any]:
    """A payload example, e.g. `payload("pull_request/opened")`."""
    path = FIXTURES / f"{name}.payload.json"
    if not path.exists():
        path = FIXTURES / f"{name}.json"
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def signed(
    event: str,
    body: dict[str, Any] | bytes,
    *,
    delivery: str | None = None,
    secret: str = SECRET,
    like_github: bool = True,
) -> tuple[bytes, dict[str, str]]:
    """A delivery's raw body and headers, signed as GitHub signs them.

    A payload (not raw bytes) must carry what Tiebreak reads where GitHub's own example of the
    event does (`webhook_shapes`); `like_github=False` for one a test breaks on purpose.
    """
    if isinstance(body, dict) and like_github and (unlike := mismatches(event, body)):
        raise AssertionError("A delivery GitHub would not send:\n" + "\n".join(unlike))
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": webhooks.sign(secret, raw, method="sha256"),
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/tests",
    }
    return raw, headers
