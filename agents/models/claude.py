"""An :class:`LLMClient` on Anthropic's official SDK: forced tool use, prompt caching, usage.

Request layout, built for prompt caching. The API caches prefixes in the order tools →
system → messages, and a change of `tool_choice` invalidates the cached messages but not the
system prompt. So every request of a review carries the same four tools in the same order,
a system prompt shared by all three roles (a first cache breakpoint: this prefix is the same
for every review, so it stays warm on a busy server), then the unit's stable material
appended to the system prompt — its diff, what its pull request says it does, the code around
the diff, the repository's guidance — with a second breakpoint after the last; the role and
the turn's new material follow in the user message. The first call of a unit writes that
material once; every later call of a role on the same model reads it.

Models that always think refuse a forced tool (a 400 naming thinking and `tool_choice`). For
such a model the call is made again with `tool_choice` `auto` and the turn told which tool to
call; the model is remembered, so later calls go that way at once. The four tools stay offered,
in the same order: the tools open the cached prefix, so offering only the turn's tool would
make every tool a prefix of its own and write the diff to the cache once per tool instead of
once per unit. The answer is read as strictly as a forced one: only a call of the turn's tool
counts, anything else is no answer.

The same client runs on Amazon Bedrock or Google Vertex AI (:class:`agents.models.providers.Cloud`),
whose SDK clients speak the same Messages API with the same usage; only the model's name, the
address and the signature differ.

Faults: the SDK retries 408/409/429/5xx and connection errors itself; a `retry-after` longer
than `max_retry_after` is shortened by a middleware (the SDK honours it uncapped), and a host
that does not take the connection within `CONNECT_SECONDS` is not waited on for the answer's
`timeout`. What still fails becomes :class:`LLMUnavailable` (one failed turn) or, when no call
can succeed (bad key, no permission, no credit, unknown model, no cloud credentials),
:class:`LLMFatal`. A client that `decides_at_first` (a command a person waits on) retries a
call only `FIRST_RETRIES` times until one is answered, and such a call's failure is
:class:`LLMFatal`: a model never reached (no network, a wrong address, a request it refuses)
would fail every other call the same way, slowly and paid for in waiting.
"""

import email.utils
import time
from typing import Any

import anthropic
import botocore.exceptions
import google.auth.exceptions
from anthropic.lib.bedrock import AsyncAnthropicBedrock
from anthropic.lib.vertex import AsyncAnthropicVertex
from anthropic.types import Message
from pydantic import BaseModel, ConfigDict

from agents.errors import LLMFatal, LLMUnavailable
from agents.models.llm import LLMRequest, LLMResponse, Role, Usage
from agents.models.providers import MODEL, Cloud, Provider
from agents.protocol import toolset

CACHE = {"type": "ephemeral"}
TRUNCATED = frozenset({"max_tokens", "model_context_window_exceeded"})
_FATAL = (
    anthropic.AuthenticationError,
    anthropic.PermissionDeniedError,
    anthropic.PaymentRequiredError,
    anthropic.NotFoundError,
)
_NO_CREDENTIALS = (
    botocore.exceptions.BotoCoreError,
    google.auth.exceptions.DefaultCredentialsError,
    google.auth.exceptions.RefreshError,
)
"""A cloud's credential chain found nothing usable (raised before any request is sent)."""

_VENDOR = {
    Provider.ANTHROPIC: "the Anthropic API",
    Provider.BEDROCK: "Amazon Bedrock",
    Provider.VERTEX: "Vertex AI",
}

DEFAULT_MODEL = MODEL

CONNECT_SECONDS = 10.0
"""The longest wait for a connection (and its TLS) to the model's host; the answer's own
`timeout` counts the model's thinking, not a host that never answers."""

FIRST_RETRIES = 1
"""The retries of a call made before any was answered, for a client that `decides_at_first`:
one, for a blip; a host or a request that fails twice is said at once."""

Client = anthropic.AsyncAnthropic | AsyncAnthropicBedrock | AsyncAnthropicVertex
"""The SDK's clients of the three providers: one `messages.create`, one usage."""


class RoleModels(BaseModel):
    """The model each role runs on.

    The prompt cache is kept per model: roles on one model share the cached diff, and a role
    on another model pays to write it again. So all three default to one model.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tester: str = DEFAULT_MODEL
    coder: str = DEFAULT_MODEL
    arbiter: str = DEFAULT_MODEL

    def for_role(self, role: Role) -> str:
        return str(getattr(self, role.value))


class CapRetryAfter(anthropic.Middleware):
    """Shortens a server's `retry-after` to at most `seconds` before the SDK sleeps on it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def handle_async(
        self, request: anthropic.APIRequest, call_next: anthropic.AsyncCallNext
    ) -> Any:
        response = await call_next(request)
        headers = response.http_response.headers
        wait = _retry_after(headers.get("retry-after-ms"), headers.get("retry-after"))
        if wait is not None and wait > self.seconds:
            headers["retry-after-ms"] = str(int(self.seconds * 1000))
            headers.pop("retry-after", None)
        return response


class ClaudeLLM:
    """Answers the engine's requests with Claude models through the Messages API."""

    def __init__(
        self,
        client: "Client",
        models: RoleModels | None = None,
        *,
        cache: bool = True,
        provider: Provider = Provider.ANTHROPIC,
        unforced: set[str] | None = None,
        decides_at_first: bool = False,
    ) -> None:
        self.client = client
        self.models = models or RoleModels()
        self.cache = cache
        self.provider = provider
        self.unforced = set() if unforced is None else unforced
        """The models found to refuse a forced tool, shared by every copy of this client."""
        self.decides_at_first = decides_at_first
        """Whether a call that fails before any was answered ends everything (`LLMFatal`)."""
        self.answered = False
        """Whether a call was answered yet."""

    @classmethod
    def connect(
        cls,
        *,
        cloud: Cloud | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        models: RoleModels | None = None,
        cache: bool = True,
        max_retries: int = 4,
        max_retry_after: float = 30.0,
        timeout: float = 120.0,
        decides_at_first: bool = False,
    ) -> "ClaudeLLM":
        """A client with Tiebreak's retry policy, on Anthropic's API or on `cloud`'s provider.

        On Anthropic's API, key and URL default to the SDK's own `ANTHROPIC_API_KEY` and
        `ANTHROPIC_BASE_URL`. On Bedrock and Vertex AI, `base_url` replaces the cloud's
        regional endpoint (a proxy, or a fake in tests) and the key is not used: the cloud's
        own credentials sign the calls. No call is made here."""
        cloud = cloud or Cloud()
        common: dict[str, Any] = {
            "base_url": base_url,
            "max_retries": max_retries,
            "timeout": anthropic.Timeout(timeout, connect=min(timeout, CONNECT_SECONDS)),
            "middleware": [CapRetryAfter(max_retry_after)],
        }
        client: Client
        if cloud.provider is Provider.BEDROCK:
            client = AsyncAnthropicBedrock(aws_region=cloud.region, **common)
        elif cloud.provider is Provider.VERTEX:
            client = AsyncAnthropicVertex(
                region=cloud.region or anthropic.not_given,
                project_id=cloud.project or anthropic.not_given,
                **common,
            )
        else:
            client = anthropic.AsyncAnthropic(api_key=api_key, **common)
        return cls(
            client, models, cache=cache, provider=cloud.provider, decides_at_first=decides_at_first
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.close()

    async def complete(self, request: LLMRequest) -> LLMResponse:
        started = time.monotonic()
        model = request.model or self.models.for_role(request.role)
        forced = model not in self.unforced
        try:
            try:
                message = await self._create(request, forced=forced)
            except anthropic.BadRequestError as exc:
                if not (forced and _refuses_forced_tools(exc)):
                    raise
                self.unforced.add(model)
                message = await self._create(request, forced=False)
        except _FATAL as exc:
            raise LLMFatal(f"{self.vendor} refused the call: {_reason(exc)}") from exc
        except anthropic.APIStatusError as exc:
            raise self._failed(_reason(exc), f"{self.vendor} answered {_reason(exc)}") from exc
        except anthropic.APIConnectionError as exc:
            raise self._failed(f"no answer from {self.vendor}: {exc}") from exc
        except _NO_CREDENTIALS as exc:
            raise LLMFatal(f"no credentials for {self.vendor}: {exc}") from exc
        except google.auth.exceptions.TransportError as exc:
            raise self._failed(f"no answer from Google's token service: {exc}") from exc
        except RuntimeError as exc:
            # The Bedrock client's words when AWS's credential chain finds nothing.
            if "credentials" not in str(exc):
                raise
            raise LLMFatal(f"no credentials for {self.vendor}: {exc}") from exc
        self.answered = True
        return _response(message, request).model_copy(
            update={"seconds": round(time.monotonic() - started, 3)}
        )

    def _failed(self, reason: str, first: str | None = None) -> LLMUnavailable | LLMFatal:
        """A call's failure after the SDK's retries: one failed turn, or, for a client that
        `decides_at_first` and no call answered yet, the end (said as `first`, if given)."""
        if self.decides_at_first and not self.answered:
            return LLMFatal(f"the model's first call failed: {first or reason}")
        return LLMUnavailable(reason)

    @property
    def vendor(self) -> str:
        """Who answers the calls, as errors name it."""
        return _VENDOR[self.provider]

    async def _create(self, request: LLMRequest, *, forced: bool) -> Message:
        client = self.client
        if self.decides_at_first and not self.answered:
            client = client.with_options(max_retries=FIRST_RETRIES)
        message: Message = await client.messages.create(**self.params(request, forced=forced))
        return message

    def params(self, request: LLMRequest, *, forced: bool = True) -> dict[str, Any]:
        """The Messages API parameters for a request: its tool forced, or only asked for."""
        stable = [b.text for b in request.blocks if b.stable]
        system: list[dict[str, Any]] = [
            {"type": "text", "text": text} for text in (request.system, *stable)
        ]
        if self.cache:
            # One breakpoint after the prompt every review shares, one after the unit's diff.
            system[0]["cache_control"] = CACHE
            system[-1]["cache_control"] = CACHE
        turn = [{"type": "text", "text": b.text} for b in request.blocks if not b.stable]
        if not forced:
            # After the cached prefix, so asking rather than forcing costs no cache write.
            turn.append({"type": "text", "text": _ask_for(request.tool.name)})
        return {
            "model": request.model or self.models.for_role(request.role),
            "max_tokens": request.max_output_tokens,
            "system": system,
            "tools": [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "input_schema": spec.input_schema(),
                }
                for spec in toolset(request.tool.shows).values()
            ],
            "tool_choice": (
                {"type": "tool", "name": request.tool.name} if forced else {"type": "auto"}
            ),
            "messages": [{"role": "user", "content": turn}],
        }


def _ask_for(tool: str) -> str:
    return (
        f"Answer by calling the `{tool}` tool, once. Call no other tool and write no other "
        "answer: only that call is read."
    )


def _refuses_forced_tools(exc: anthropic.BadRequestError) -> bool:
    """Whether a 400 is a thinking model refusing a forced `tool_choice`."""
    reason = _reason(exc).lower()
    return "thinking" in reason and "tool_choice" in reason


def _response(message: Message, request: LLMRequest) -> LLMResponse:
    usage = Usage(
        input_tokens=message.usage.input_tokens,
        output_tokens=message.usage.output_tokens,
        cache_creation_input_tokens=message.usage.cache_creation_input_tokens or 0,
        cache_read_input_tokens=message.usage.cache_read_input_tokens or 0,
    )
    tool_input = next(
        (
            block.input
            for block in message.content
            if block.type == "tool_use" and block.name == request.tool.name
        ),
        None,
    )
    return LLMResponse(
        tool_input=tool_input if isinstance(tool_input, dict) else None,
        usage=usage,
        truncated=message.stop_reason in TRUNCATED,
    )


def _reason(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return f"{error['message']} ({exc.status_code})"
    return f"HTTP {exc.status_code}"


def _retry_after(milliseconds: str | None, seconds: str | None) -> float | None:
    """The wait a response asks for, read the way the SDK reads it."""
    for value, scale in ((milliseconds, 1000.0), (seconds, 1.0)):
        try:
            return float(value) / scale  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
    date = email.utils.parsedate_tz(seconds) if seconds else None
    return None if date is None else email.utils.mktime_tz(date) - time.time()
