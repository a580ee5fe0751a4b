"""Which handler answers which webhook: a registry of (event, action) pairs.

Each event module owns a :class:`WebhookRouter` and registers its handlers with
`@router.on("pull_request", "opened", "synchronize")`; the app combines them. A handler
pulls what it needs out of the payload into a narrow model and enqueues work; nothing slow
happens in it. A delivery is remembered before its handler runs, so that a redelivery is not
handled twice; a handler registered with `remembers=True` remembers it itself, in the same
round trip to Redis as the job it queues.
"""

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, TypeVar

from pydantic import BaseModel

from app.store.deliveries import Installations
from app.store.queue import ReviewQueue


class DeliveryOutcome(StrEnum):
    """What a delivery led to, as its response says."""

    ENQUEUED = "enqueued"
    RECORDED = "recorded"
    SKIPPED = "skipped"
    IGNORED = "ignored"
    DUPLICATE = "duplicate"
    PONG = "pong"


Payload = TypeVar("Payload", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Delivery:
    """One verified webhook delivery: its raw JSON body, parsed only as far as needed."""

    id: str
    event: str
    action: str | None
    body: bytes

    def parse(self, model: type[Payload]) -> Payload:
        """The body as a narrow model; raises `pydantic.ValidationError` if it does not fit."""
        return model.model_validate_json(self.body)


class HandlerDeps(Protocol):
    """What handlers may use: the queue, and the record of installations."""

    @property
    def queue(self) -> ReviewQueue: ...

    @property
    def installations(self) -> Installations: ...


Handler = Callable[[Delivery, HandlerDeps], Awaitable[DeliveryOutcome]]


class WebhookRouter:
    """Maps (event, action) to handlers; `action=None` matches events without actions."""

    def __init__(self) -> None:
        self._handlers: dict[tuple[str, str | None], Handler] = {}
        self._remembering: set[Handler] = set()

    def on(
        self, event: str, *actions: str, remembers: bool = False
    ) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            if remembers:
                self._remembering.add(handler)
            for action in actions or (None,):
                key = (event, action)
                if key in self._handlers:
                    raise ValueError(f"two handlers for {event}.{action}")
                self._handlers[key] = handler
            return handler

        return register

    def include(self, routers: Iterable["WebhookRouter"]) -> "WebhookRouter":
        for router in routers:
            for key, handler in router._handlers.items():
                if key in self._handlers:
                    raise ValueError(f"two handlers for {key[0]}.{key[1]}")
                self._handlers[key] = handler
            self._remembering |= router._remembering
        return self

    def events(self) -> frozenset[str]:
        """The events some handler answers (the App's manifest subscribes to them)."""
        return frozenset(event for event, _ in self._handlers)

    def remembers(self, handler: Handler) -> bool:
        """Whether `handler` remembers its delivery itself (and answers DUPLICATE for one
        remembered already)."""
        return handler in self._remembering

    def handler(self, delivery: Delivery) -> Handler | None:
        return self._handlers.get((delivery.event, delivery.action)) or self._handlers.get(
            (delivery.event, None)
        )
