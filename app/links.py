"""Links to debate transcripts: signed with the server's key, and expiring.

A transcript shows private code, so its page answers only a link this server signed for that
run, and only until the link expires (with the transcript itself). The token is an
itsdangerous timestamp signature of the run id: nothing in it can be changed to open another
run, or to live longer.
"""

import hashlib
import time
from collections.abc import Callable
from datetime import timedelta
from urllib.parse import quote

from itsdangerous import BadSignature, TimestampSigner

from app.settings import Settings

SALT = "tiebreak.transcript"


class _Signer(TimestampSigner):
    def __init__(self, key: bytes, clock: Callable[[], float]) -> None:
        super().__init__(key, salt=SALT, digest_method=hashlib.sha256, key_derivation="hmac")
        self.clock = clock

    def get_timestamp(self) -> int:
        return int(self.clock())


class TranscriptLinks:
    """Makes and checks the links to the transcripts of runs."""

    def __init__(
        self,
        key: bytes,
        public_url: str,
        ttl: int,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not key:
            raise ValueError("a transcript link needs a key")
        self._signer = _Signer(key, clock)
        self.public_url = public_url.rstrip("/")
        self.ttl = ttl
        """Seconds a link stays valid."""

    def url(self, run_id: str) -> str | None:
        """The link to the run's transcript; None when the server's address is unknown."""
        if not self.public_url:
            return None
        return f"{self.public_url}/runs/{quote(run_id, safe='')}?token={self.token(run_id)}"

    def token(self, run_id: str) -> str:
        signed = self._signer.sign(run_id).decode()
        return signed[len(run_id) + 1 :]

    def valid(self, run_id: str, token: str) -> bool:
        """Whether `token` is this server's, for `run_id`, and has not expired."""
        try:
            self._signer.unsign(f"{run_id}.{token}", max_age=self.ttl)
        except BadSignature:  # a forged, altered or expired token alike
            return False
        return True


def links_for(settings: Settings) -> TranscriptLinks | None:
    """The links this process can make and check, or None when it has no key, keeps no
    transcripts, or (to make links) does not know where the server is reachable."""
    key = settings.link_key()
    if key is None or not settings.tiebreak_transcript_retention:
        return None
    public_url = str(settings.public_url) if settings.public_url else ""
    retention = timedelta(days=settings.tiebreak_transcript_retention)
    return TranscriptLinks(key, public_url, int(retention.total_seconds()))
