"""Who may steer Tiebreak on a pull request.

GitHub's collaborator permission says it: a writer may run `/tiebreak` commands and is heard
on a finding's thread; so is the pull request's author, on its own pull request's threads.
Only a writer teaches the repository, and only a writer's 👎 dismisses a finding: what the
author who may not write taught holds on their own pull request alone.
"""

WRITERS = frozenset({"admin", "write"})
"""Collaborator permissions that may run commands and are heard (maintain counts as write)."""
