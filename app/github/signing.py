"""The App's JWT signed with its private key read once per process.

githubkit signs the App's JWT with PyJWT, handing it the key as PEM text each time; PyJWT
parses it anew, and parsing a 2,048-bit RSA key checks it: 36 ms of CPU, where signing with
the parsed key takes 0.3 ms. Every App client a process builds (one a worker, one a command;
one each of a test's) signs again. RS256 is registered here as PyJWT's own algorithm with one
change: a PEM key is parsed, and checked, once per process (a few keys at most are kept).
"""

import functools

import jwt
from jwt.algorithms import AllowedRSAKeys, RSAAlgorithm

ALGORITHM = "RS256"
"""What GitHub signs Apps' JWTs with, and githubkit asks PyJWT for."""


class KeyReadOnce(RSAAlgorithm):
    """PyJWT's RS256, a PEM key parsed at its first use."""

    def prepare_key(self, key: AllowedRSAKeys | str | bytes) -> AllowedRSAKeys:
        if isinstance(key, str):
            key = key.encode()
        if isinstance(key, bytes):
            return _parsed(key)
        return super().prepare_key(key)


@functools.lru_cache(maxsize=8)
def _parsed(pem: bytes) -> AllowedRSAKeys:
    return RSAAlgorithm(RSAAlgorithm.SHA256).prepare_key(pem)


@functools.cache
def read_keys_once() -> None:
    """Have PyJWT sign RS256 with :class:`KeyReadOnce` from now on, in this process."""
    jwt.unregister_algorithm(ALGORITHM)
    jwt.register_algorithm(ALGORITHM, KeyReadOnce(RSAAlgorithm.SHA256))
