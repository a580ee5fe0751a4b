"""The defaults, bounds and names the command line shows in its help, as plain constants: a
help page reads them without loading the models they are the defaults of (pydantic and the
config's whole schema), which import them from here."""

CONFIG_PATH = ".github/tiebreak.yml"
"""Where a repository's config file is, at the base of a pull request."""

MAX_ROUNDS = 6
"""Rounds of coder answers and tester evaluations before open findings go to the arbiter."""

MAX_ROUNDS_LIMIT = 50
"""The most rounds a config or `--max-rounds` may ask for (the least is one)."""

INITIAL_BUDGET = 60_000
"""Starting token budget of each coder-tester edge."""

BUDGET_FLOOR = 1_000
"""The least budget an edge may be given."""

TOKEN_CEILING = 400_000
"""Hard ceiling on the tokens one review may spend, across all its units."""

TOKEN_CEILING_FLOOR = 10_000
"""The least ceiling a review may be given."""
