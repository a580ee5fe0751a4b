"""`tiebreak setup`: registering the GitHub App from its manifest and writing its credentials."""
