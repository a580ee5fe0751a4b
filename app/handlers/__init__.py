"""Webhook handlers, one module per event; :data:`ROUTER` holds them all."""

from app.handlers import installation, pull_request
from app.routing import WebhookRouter

ROUTER = WebhookRouter().include([pull_request.router, installation.router])
