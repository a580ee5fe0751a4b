"""What a failure is called where the public reads it: the check run, the summary comment.

A pull request's readers are not Tiebreak's operators: they get what happened, in words they
can act on, never an exception's text (a host and port, a file path, a stack's vocabulary).
The details go to the logs, on a line carrying the run's id, which the public text names.
"""

from agents.errors import DiffError, LLMFatal
from app.github.errors import GitHubError, TokenRefused
from app.store.connection import STORE_ERRORS


def public_reason(exc: BaseException) -> str:
    """Why a review or one of its units failed, for the pull request's readers."""
    if isinstance(exc, LLMFatal | DiffError):
        # Tiebreak's own words about the model or the diff, written for the pull request.
        return str(exc)
    if isinstance(exc, TokenRefused):
        return f"{token_refusal(exc)}."
    if isinstance(exc, GitHubError):
        if exc.status is None:
            return "GitHub could not be reached."
        return f"GitHub answered {exc.status} to one of Tiebreak's requests."
    if isinstance(exc, STORE_ERRORS):
        return "Tiebreak lost the connection to its queue."
    return "Tiebreak failed with an internal error; its operators' logs say why."


def logged_reason(exc: BaseException) -> str:
    """The same failure for the logs and the job's result: the exception as it is."""
    if isinstance(exc, LLMFatal | DiffError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def token_refusal(exc: TokenRefused) -> str:
    """GitHub's refusal of the installation's access token, for the public: what it means
    (the App's key, or its installation here), without a final stop."""
    if exc.cause is None:
        return (
            f"GitHub answered {exc.answered} to Tiebreak's request for this installation's "
            "access token"
        )
    return f"GitHub refused this installation an access token ({exc.answered}): {exc.cause}"
