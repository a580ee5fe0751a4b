"""Who may do what on the fake GitHub: a GitHub App's key pair, the JWT the App exchanges
for an installation token (and reads itself with, `GET /app`), the repositories a token
reaches (a fork through an open pull request from it, writable only where maintainers may
modify it), and a collaborator's permission on a repository.
"""

import secrets
import time
from dataclasses import dataclass

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.github_api.base import _Base, _user
from tests.fakes.github_api.constants import (
    APP_OWNER,
    APP_PERMISSIONS,
    CLOCK_SKEW,
    DOCS,
    JWT_MAX_LIFETIME,
    NOT_ACCESSIBLE,
    ROLE_PERMISSIONS,
    SETUP_DATE,
    TOKEN_ALPHABET,
    TOKEN_EXPIRES_AT,
)
from tests.fakes.github_api.state import (
    _Answer,
    _error,
    _HTTPError,
    _not_found,
    _Pull,
    _Repo,
    _Request,
    _Token,
)


@dataclass(frozen=True, slots=True)
class AppKey:
    """A GitHub App's RSA key pair (PEM): the App signs with one, the fake checks with the other."""

    private_pem: str
    public_pem: str


def new_app_key() -> AppKey:
    """A fresh 2048-bit RSA key pair (about 50 ms: make one per test session)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return AppKey(private.decode(), public.decode())


class _Auth(_Base):
    """Installation tokens, what they reach, and collaborators' permissions."""

    # -- authentication -----------------------------------------------------------------------

    def _create_token(self, request: _Request, installation_id: int) -> _Answer:
        self._verify_jwt(request.headers.get("authorization", ""))
        installed = self._installations.get(installation_id)
        if installed is None:
            raise _not_found(f"{DOCS}/apps/apps#create-an-installation-access-token-for-an-app")
        body = request.body if isinstance(request.body, dict) else {}
        narrowed: set[str] | None = None
        if body.get("repositories") or body.get("repository_ids"):
            narrowed = set()
            for name in body.get("repositories") or []:
                matches = {r for r in installed if r.split("/", 1)[1] == str(name).lower()}
                if not matches:
                    raise _inaccessible()
                narrowed |= matches
            ids = {self._repos[r].id: r for r in installed}
            for repo_id in body.get("repository_ids") or []:
                if repo_id not in ids:
                    raise _inaccessible()
                narrowed.add(ids[repo_id])
        token = self._new_token(installation_id, None if narrowed is None else frozenset(narrowed))
        return _Answer(
            201,
            {
                "token": token,
                "expires_at": TOKEN_EXPIRES_AT,
                "permissions": body.get("permissions") or dict(APP_PERMISSIONS),
                "repository_selection": "selected",
            },
        )

    def _get_app(self, request: _Request) -> _Answer:
        """`GET /app`: the App the JWT authenticates, with its slug (its bot user is
        `<slug>[bot]`). An installation token is refused, as GitHub refuses it."""
        self._verify_jwt(request.headers.get("authorization", ""))
        app_id = int(self.app_id) if self.app_id.isdigit() else self._user_id(self.app_id)
        return _Answer(
            200,
            {
                "id": app_id,
                "slug": self.app_slug,
                "node_id": f"A_{app_id}",
                "client_id": f"Iv1.{app_id:016x}",
                "owner": _user(APP_OWNER, "Organization", self._user_id(APP_OWNER)),
                "name": self.app_slug.replace("-", " ").title(),
                "description": "",
                "external_url": "https://example.com",
                "html_url": f"https://github.com/apps/{self.app_slug}",
                "created_at": SETUP_DATE,
                "updated_at": SETUP_DATE,
                "permissions": dict(APP_PERMISSIONS),
                "events": ["check_run", "issue_comment", "pull_request"],
                "installations_count": len(self._installations),
            },
        )

    def _verify_jwt(self, authorization: str) -> None:
        scheme, _, token = authorization.partition(" ")
        if token:
            self.app_jwts.append(token)
        if scheme.lower() != "bearer" or not token:
            raise _error(401, "A JSON web token could not be decoded")
        try:
            claims = jwt.decode(
                token,
                self._public_key,
                algorithms=["RS256"],
                options={"require": ["iat", "exp", "iss"]},
                leeway=CLOCK_SKEW,
            )
        except jwt.ExpiredSignatureError as exc:
            raise _error(
                401,
                "'Expiration time' claim ('exp') must be a numeric value representing the "
                "future time at which the assertion expires",
            ) from exc
        except jwt.ImmatureSignatureError as exc:  # issued in the future, by GitHub's clock
            raise _error(
                401,
                "'Issued at' claim ('iat') must be an Integer representing the time that the "
                "assertion was issued",
            ) from exc
        except jwt.InvalidTokenError as exc:
            raise _error(401, "A JSON web token could not be decoded") from exc
        if claims["exp"] > time.time() + JWT_MAX_LIFETIME + CLOCK_SKEW:
            raise _error(401, "'Expiration time' claim ('exp') is too far in the future")
        if str(claims["iss"]) != self.app_id:
            raise _error(401, "A JSON web token could not be decoded: unknown issuer")

    def _new_token(self, installation_id: int, repos: frozenset[str] | None) -> str:
        token = "ghs_" + "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(36))
        self._tokens[token] = _Token(installation_id, repos)
        self.issued_tokens.append(token)
        return token

    def _new_person_token(self, login: str, repos: frozenset[str]) -> str:
        token = "ghp_" + "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(36))
        self._tokens[token] = _Token(0, repos, person=login)
        return token

    def _authorised_repo(self, request: _Request, full_name: str, *, via_pull: bool) -> _Repo:
        """The repository, if the request's token may see it: a repository it covers or, with
        `via_pull`, a fork an open pull request into one of those comes from."""
        covered = self._covered(request)
        key = full_name.lower()
        repo = self._repos.get(key)
        if repo is not None and (key in covered or (via_pull and self._pulls_from(covered, key))):
            return repo
        # GitHub answers 404, not 403, for a repository the token cannot see.
        raise _not_found()

    def _covered(self, request: _Request) -> frozenset[str]:
        """The lower-cased names of the repositories the request's token covers."""
        authorization = request.headers.get("authorization", "")
        if not authorization:
            raise _error(401, "Requires authentication")
        scheme, _, credential = authorization.partition(" ")
        token = self._tokens.get(credential) if scheme.lower() in ("token", "bearer") else None
        if token is None:
            raise _error(401, "Bad credentials")
        if token.repos is not None:
            return token.repos
        return frozenset(self._installations.get(token.installation_id, ()))

    def _person(self, request: _Request) -> str | None:
        """The login of the person whose token the request carries; None for an App's."""
        _, _, credential = request.headers.get("authorization", "").partition(" ")
        token = self._tokens.get(credential)
        return token.person if token is not None else None

    def _pulls_from(self, covered: frozenset[str], key: str) -> list[_Pull]:
        """The open pull requests into covered repositories whose head lives in fork `key`."""
        return [
            pull
            for (base, _), pull in self._pulls.items()
            if base in covered
            and base != key
            and pull.head_repo is not None
            and pull.head_repo.lower() == key
            and pull.state == "open"
        ]

    def _check_writable(
        self, request: _Request, repo: _Repo, docs: str, branch: str | None = None
    ) -> None:
        """Refuse a write to a fork unless a pull request from it lets maintainers modify it
        (and, for a ref, unless the branch is that pull request's head)."""
        covered = self._covered(request)
        key = repo.full_name.lower()
        if key in covered:
            return
        for pull in self._pulls_from(covered, key):
            if pull.maintainer_can_modify and branch in (None, pull.head_ref):
                return
        raise _error(403, NOT_ACCESSIBLE, docs)

    # -- collaborators ------------------------------------------------------------------------

    def _get_permission(self, request: _Request, repo: _Repo, params: dict[str, str]) -> _Answer:
        docs = f"{DOCS}/collaborators/collaborators#get-repository-permissions-for-a-user"
        entry = repo.permissions.get(params["username"].lower())
        if entry is None:
            raise _not_found(docs)
        login, role = entry
        rank = list(ROLE_PERMISSIONS).index(role)  # admin first, none last
        grants = ("admin", "maintain", "push", "triage", "pull")
        user = {
            **_user(login, "User", self._user_id(login)),
            "permissions": {grant: rank <= i for i, grant in enumerate(grants)},
            "role_name": role,
        }
        return _Answer(200, {"permission": ROLE_PERMISSIONS[role], "role_name": role, "user": user})


def _inaccessible() -> _HTTPError:
    return _error(
        422,
        "There is at least one repository that does not exist or is not accessible to the "
        "parent installation.",
        f"{DOCS}/apps/apps#create-an-installation-access-token-for-an-app",
    )
