"""The GitHub side of Tiebreak: settings, webhooks, the queue, publishing, the CLI."""
