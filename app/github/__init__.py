"""GitHub's API through githubkit: the App's client, its retries, its errors, its signatures."""
