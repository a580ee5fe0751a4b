"""Webhook handlers, one module per event; :data:`ROUTER` holds them all."""

from app.web.dispatch import WebhookRouter
from app.web.handlers import check_runs, comments, installation, pull_request, workflow_runs

ROUTER = WebhookRouter().include(
    [
        pull_request.router,
        comments.router,
        check_runs.router,
        installation.router,
        workflow_runs.router,
    ]
)
