"""`tiebreak setup`: registering the GitHub App from its manifest and writing its credentials."""

DEFAULT_GITHUB_URL = "https://github.com"
"""GitHub's own web address, where an App is registered unless `--github-url` names a GitHub
Enterprise Server (here, with no import, for the command's help)."""
