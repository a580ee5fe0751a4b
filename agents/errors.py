"""Errors of the debate, rooted in :class:`policies.errors.TiebreakError`.

DebateError
├── DiffError        the diff cannot be parsed: the review cannot start
├── LLMError         a model call failed
│   ├── LLMUnavailable   transient (overloaded, rate limited, timed out) after the client's
│   │                    own retries: one failed turn, never a crash
│   └── LLMFatal         no call can succeed (bad key, no permission): the review stops
└── NotHeard         a person's reply on a finding could not be weighed: nothing changed

An agent's tool input that is malformed or breaks a rule is no error: it is refused back to
the agent, item by item (:mod:`agents.debate.input_checks`, :mod:`agents.debate.turns`).
"""

from policies.errors import TiebreakError


class DebateError(TiebreakError):
    """An error of the debate."""


class DiffError(DebateError):
    """The diff is empty or malformed."""


class LLMError(DebateError):
    """A model call failed."""


class LLMUnavailable(LLMError):
    """The model could not answer this time; a later call may succeed."""


class LLMFatal(LLMError):
    """The model cannot be called at all; the review must stop with this message."""


class NotHeard(DebateError):
    """A person's reply could not be weighed: the finding is not open, or the tester could
    not be asked (the token ceiling, or every attempt at the call failed)."""
