"""Webhook handlers, one module per event; :data:`ROUTER` holds them all."""

from app.handlers import checks, comments, installation, pull_request
from app.routing import WebhookRouter

ROUTER = WebhookRouter().include(
    [pull_request.router, comments.router, checks.router, installation.router]
)
