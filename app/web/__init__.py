"""The web server: the webhook endpoint and its handlers, the transcript pages, the metrics."""
