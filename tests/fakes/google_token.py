"""A local fake of Google's OAuth token endpoint, and application-default credentials for it.

Google's libraries find their credentials in the file `GOOGLE_APPLICATION_CREDENTIALS` names:
a service account's key, whose signed assertion they trade for an access token at the file's
`token_uri`. Pointing that at this fake lets a test run the real credential chain
(google-auth, its `requests` transport) over loopback: no metadata server, no Google endpoint.

    with GoogleTokenEndpoint() as tokens:
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tokens.credentials_file(tmp)))
        ...
    tokens.grants  # the service accounts that were given a token, in order
"""

import json
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.loopback import LoopbackFake, Response

ACCESS_TOKEN = "ya29.fake-access-token"
SERVICE_ACCOUNT = "tiebreak@tiebreak-test.iam.gserviceaccount.com"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class GoogleTokenEndpoint(LoopbackFake):
    """`POST /token` with an assertion signed by the account's key answers
    :data:`ACCESS_TOKEN` for an hour."""

    description: ClassVar[str] = "the fake Google token endpoint"
    thread_name: ClassVar[str] = "fake-google-token"
    methods: ClassVar[tuple[str, ...]] = ("POST",)

    def __init__(self) -> None:
        super().__init__(strict=True)
        self.grants: list[str] = []
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def credentials_file(self, directory: Path) -> Path:
        """A service account's key file whose tokens come from this endpoint."""
        pem = self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        path = directory / "service-account.json"
        path.write_text(
            json.dumps(
                {
                    "type": "service_account",
                    "project_id": "tiebreak-test",
                    "private_key_id": "fake-key-id",
                    "private_key": pem.decode(),
                    "client_email": SERVICE_ACCOUNT,
                    "client_id": "1",
                    "token_uri": f"{self.base_url}/token",
                }
            )
        )
        return path

    def _respond(
        self, method: str, target: str, headers: Mapping[str, str], raw: bytes
    ) -> Response:
        form = urllib.parse.parse_qs(raw.decode())
        try:
            if target != "/token" or form.get("grant_type") != [JWT_GRANT]:
                raise jwt.InvalidTokenError(f"{method} {target} {form}")
            claims = jwt.decode(
                form["assertion"][0],
                self._key.public_key(),
                algorithms=["RS256"],
                audience="https://oauth2.googleapis.com/token",  # what google-auth signs
            )
        except jwt.InvalidTokenError as exc:
            self.problems.append(str(exc))
            return Response(400, "application/json", b'{"error": "invalid_grant"}')
        self.grants.append(claims["iss"])
        answer = {"access_token": ACCESS_TOKEN, "expires_in": 3600, "token_type": "Bearer"}
        return Response(200, "application/json", json.dumps(answer).encode())

    def _problems_error(self) -> Exception:
        return AssertionError(f"{self.description} got: {'; '.join(self.problems)}")
