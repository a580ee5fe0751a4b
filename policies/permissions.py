"""Who may steer Tiebreak on a pull request.

GitHub's collaborator permission says it: a writer may run `/tiebreak` commands and is heard
on a finding's thread; so is the pull request's author, on its own pull request's threads.
"""

WRITERS = frozenset({"admin", "write"})
"""Collaborator permissions that may run commands and are heard (maintain counts as write)."""
