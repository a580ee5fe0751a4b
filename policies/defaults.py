"""The defaults and names the command line shows in its help, as plain constants: a help page
reads them without loading the models they are the defaults of (pydantic and the config's
whole schema), which import them from here."""

CONFIG_PATH = ".github/tiebreak.yml"
"""Where a repository's config file is, at the base of a pull request."""

MAX_ROUNDS = 6
"""Rounds of coder answers and tester evaluations before open findings go to the arbiter."""

INITIAL_BUDGET = 60_000
"""Starting token budget of each coder-tester edge."""

TOKEN_CEILING = 400_000
"""Hard ceiling on the tokens one review may spend, across all its units."""
