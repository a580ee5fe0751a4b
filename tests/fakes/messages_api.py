"""A local fake of Anthropic's Messages API, for tests and benchmarks that use the real SDK.

`FakeMessagesAPI` is a real HTTP server on 127.0.0.1 (an ephemeral port, a background
thread), so a test drives the production client — `anthropic.AsyncAnthropic`, `ClaudeLLM` —
over loopback with no mocking library: request building, headers, retries, error mapping and
response parsing are the SDK's own.

    with FakeMessagesAPI.queued(report_findings=[{"findings": []}]) as api:
        client = anthropic.AsyncAnthropic(api_key=api.api_key, base_url=api.base_url)
        ...
    api.requests[0].usage

It serves `POST /v1/messages` for forced tool calls only (`tool_choice` of type `tool`), the
way Tiebreak calls the model, and like the API it wants the key (`Authorization: Bearer` or
`x-api-key`) and an `anthropic-version` header. The tool input comes from a *responder*, a
function of the request body; :meth:`FakeMessagesAPI.queued` builds one from a queue per
tool. A reply may also be an :class:`Error` (that HTTP error instead) or :class:`Truncated`
(the answer hit `max_tokens`).

Usage is deterministic and follows the API's accounting: every prompt unit — each tool
definition, each system block, each message content block, in that order — costs
ceil(characters / 4) tokens, and prompt caching works as documented: the cache is keyed by
model and the exact content of a prefix ending at a `cache_control` breakpoint; a request
reads the longest live prefix among its breakpoints, writes the rest up to its last one, and
pays plain input for everything after it. See :class:`PromptCache` for the details.
"""

import hashlib
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.fakes.loopback import LoopbackFake, Response

CHARS_PER_TOKEN = 4
"""The fake tokenizer: every four characters (or part of them) are one token."""

DEFAULT_MIN_CACHEABLE_TOKENS = 1024
"""Prefixes shorter than this are silently not cached (the documented minimum of many models)."""

MAX_BREAKPOINTS = 4
"""The API refuses a request with more `cache_control` blocks than this."""

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
"""The cache lifetimes `cache_control.ttl` may ask for; "5m" is the default."""

Body = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Error:
    """A reply that answers with an HTTP error in the API's shape instead of a message."""

    status: int
    type: str
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Truncated:
    """A reply cut at the output limit: the tool input as given, stop_reason `max_tokens`."""

    tool_input: dict[str, Any]


Reply = dict[str, Any] | Error | Truncated
"""A tool input (a normal answer), an :class:`Error`, or a :class:`Truncated` answer."""

Responder = Callable[[Body], Reply]
"""Answers one request, given its JSON body."""

Step = Reply | Callable[[Body], Reply]
"""One queued reply: the reply itself, or a function of the request body giving one."""


class Unscripted(AssertionError):
    """The fake was asked something its script did not expect."""


class QueuedResponder:
    """A responder that answers each forced tool from its own queue of steps, in order."""

    def __init__(self, **queues: Iterable[Step]) -> None:
        self._queues = {tool: deque(steps) for tool, steps in queues.items()}

    def __call__(self, body: Body) -> Reply:
        tool = forced_tool(body)
        queue = self._queues.get(tool)
        if not queue:
            raise Unscripted(f"no reply queued for a {tool} call")
        step = queue.popleft()
        return step(body) if callable(step) else step

    def remaining(self) -> dict[str, int]:
        """How many steps each tool still has queued (the script's unused rest)."""
        return {tool: len(queue) for tool, queue in self._queues.items() if queue}


@dataclass(frozen=True, slots=True)
class Usage:
    """The usage block of one answer, as the API reports it."""

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    ephemeral_5m_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.ephemeral_5m_input_tokens,
                "ephemeral_1h_input_tokens": self.ephemeral_1h_input_tokens,
            },
            "service_tier": "standard",
        }


@dataclass(frozen=True, slots=True)
class Recorded:
    """One request the fake received and what it answered."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The parsed JSON body, or None if it was not JSON."""
    status: int
    response: dict[str, Any]
    usage: Usage | None
    """None when the answer was an error."""

    @property
    def tool(self) -> str | None:
        """The forced tool's name, if the request named one."""
        choice = self.body.get("tool_choice") if isinstance(self.body, dict) else None
        name = choice.get("name") if isinstance(choice, dict) else None
        return name if isinstance(name, str) else None


# -- token counting and prompt units ---------------------------------------------------------


def count_tokens(text: str) -> int:
    """The fake tokenizer's count: ceil(len / 4)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def canonical_json(value: Any) -> str:
    """The JSON text the fake counts and hashes: compact, keys in the order given."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class PromptUnit:
    """One cacheable unit of a prompt, in the API's order: tools → system → messages."""

    label: str
    """Where it is, e.g. `tools[0]`, `system[1]`, `messages[0].content[2]`."""
    section: str
    """`tools`, `system` or `messages`."""
    material: str
    """What identifies it for the cache: its place in the prompt's structure and its content."""
    tokens: int
    ttl: str | None
    """The lifetime its `cache_control` asks for, or None if it is not a breakpoint."""


class InvalidRequest(ValueError):
    """The request breaks a rule the API enforces: answered with 400 invalid_request_error."""


def prompt_units(body: Body) -> list[PromptUnit]:
    """The request's prompt as cacheable units, with breakpoints, in the API's order.

    A unit's token count excludes its `cache_control` marker, so moving a breakpoint does not
    change what the content costs or how it is keyed. A top-level `cache_control` marks the
    last unit, as the API's automatic caching does.
    """
    units: list[PromptUnit] = []
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise InvalidRequest("tools: expected a list")
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise InvalidRequest(f"tools.{i}: expected an object")
        units.append(_unit(f"tools[{i}]", "tools", "tool", tool, canonical_json))

    system = body.get("system")
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system or []
    if not isinstance(blocks, list):
        raise InvalidRequest("system: expected a string or a list of text blocks")
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("text"), str):
            raise InvalidRequest(f"system.{i}: expected a text block")
        units.append(_unit(f"system[{i}]", "system", "system", block, _block_text))

    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("messages: expected a non-empty list")
    for m, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise InvalidRequest(f"messages.{m}: expected a user or assistant message")
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list) or not content:
            raise InvalidRequest(f"messages.{m}.content: expected a string or a non-empty list")
        for c, block in enumerate(content):
            if not isinstance(block, dict):
                raise InvalidRequest(f"messages.{m}.content.{c}: expected an object")
            kind = f"messages[{m}]:{message['role']}"
            units.append(_unit(f"messages[{m}].content[{c}]", "messages", kind, block, _block_text))

    automatic = body.get("cache_control")
    if automatic is not None:
        ttl = _ttl(automatic, "cache_control")
        last = units[-1]
        if last.ttl is None:
            units[-1] = PromptUnit(last.label, last.section, last.material, last.tokens, ttl)
    breakpoints = sum(1 for u in units if u.ttl is not None)
    if breakpoints > MAX_BREAKPOINTS:
        raise InvalidRequest(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {breakpoints}."
        )
    return units


def _unit(
    label: str, section: str, kind: str, block: dict[str, Any], text: Callable[[Any], str]
) -> PromptUnit:
    marker = block.get("cache_control")
    ttl = None if marker is None else _ttl(marker, f"{label}.cache_control")
    content = text({k: v for k, v in block.items() if k != "cache_control"})
    return PromptUnit(label, section, f"{kind}\x1f{content}", count_tokens(content), ttl)


def _block_text(block: dict[str, Any]) -> str:
    # A text block costs its text; any other block (tool_use, tool_result, image) its JSON.
    text = block.get("text")
    if block.get("type") == "text" and isinstance(text, str):
        return text
    return canonical_json(block)


def _ttl(marker: Any, where: str) -> str:
    if not isinstance(marker, dict) or marker.get("type") != "ephemeral":
        raise InvalidRequest(f"{where}: expected {{'type': 'ephemeral'}}")
    ttl = marker.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise InvalidRequest(f"{where}.ttl: expected one of {', '.join(TTL_SECONDS)}")
    return str(ttl)


def forced_tool(body: Body) -> str:
    """The name of the tool `tool_choice` forces; the fake answers nothing else."""
    choice = body.get("tool_choice")
    names = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    if not isinstance(choice, dict) or choice.get("type") != "tool":
        raise InvalidRequest("the fake answers forced tool calls only: tool_choice type 'tool'")
    name = choice.get("name")
    if not isinstance(name, str) or name not in names:
        raise InvalidRequest(f"tool_choice: tool {name!r} is not among the request's tools")
    return name


# -- the prompt cache ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CacheCharge:
    """How one request's prompt tokens split between plain input, cache writes and reads."""

    input_tokens: int
    read_tokens: int
    write_5m_tokens: int
    write_1h_tokens: int

    @property
    def write_tokens(self) -> int:
        return self.write_5m_tokens + self.write_1h_tokens


class PromptCache:
    """Prompt caching as the API documents it, over a clock the caller controls.

    An entry is the exact content of a prefix — from the first tool up to and including a
    block with `cache_control` — under one model. A breakpoint inside the messages is also
    keyed by `tool_choice`, since the API drops the message cache when it changes (the tools
    and system cache survive it). For each request:

    * breakpoints whose prefix is shorter than `min_tokens` are ignored: nothing is read or
      written for them and their tokens are plain input;
    * the longest live prefix among the remaining breakpoints is read
      (`cache_read_input_tokens`);
    * the tokens from there up to the last breakpoint are written
      (`cache_creation_input_tokens`), split by the TTL of the breakpoint closing each part;
    * every breakpoint prefix is stored (or refreshed) with its TTL from now;
    * the tokens after the last breakpoint are `input_tokens`.
    """

    def __init__(self, clock: Callable[[], float], min_tokens: int) -> None:
        self.clock = clock
        self.min_tokens = min_tokens
        self._expiry: dict[tuple[str, str], float] = {}

    def charge(self, model: str, units: list[PromptUnit], tool_choice: Any) -> CacheCharge:
        now = self.clock()
        self._expiry = {k: t for k, t in self._expiry.items() if t > now}
        total = sum(u.tokens for u in units)
        digest = hashlib.sha256()
        choice = canonical_json(tool_choice)
        prefix = 0
        # (prefix tokens, cache key, ttl) of every breakpoint long enough to be cached
        points: list[tuple[int, tuple[str, str], str]] = []
        for unit in units:
            material = unit.material.encode()
            digest.update(f"{len(material)}:".encode() + material)
            prefix += unit.tokens
            if unit.ttl is None or prefix < self.min_tokens:
                continue
            content = digest.hexdigest() + (f"|{choice}" if unit.section == "messages" else "")
            points.append((prefix, (model, content), unit.ttl))
        if not points:
            return CacheCharge(total, 0, 0, 0)
        read = max((p for p, key, _ in points if key in self._expiry), default=0)
        writes = {"5m": 0, "1h": 0}
        start = read
        for tokens, key, ttl in points:
            if tokens > start:
                writes[ttl] += tokens - start
                start = tokens
            self._expiry[key] = max(self._expiry.get(key, now), now + TTL_SECONDS[ttl])
        cached = points[-1][0]
        return CacheCharge(total - cached, read, writes["5m"], writes["1h"])


# -- the server ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    body: dict[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)


class ManualClock:
    """A clock for cache expiry that moves only when a test says so."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakeMessagesAPI(LoopbackFake):
    """A fake `POST /v1/messages` on 127.0.0.1, answering forced tool calls from a responder.

    Use it as a context manager; `base_url` is valid inside. Every request is recorded in
    `requests`. A responder that raises (an exhausted queue, a failed assertion) makes the fake
    answer 400 and note the failure in `problems`; with `strict` (the default), leaving the
    `with` block with problems noted raises :class:`Unscripted`, so a benchmark or test cannot
    silently measure a conversation other than the scripted one.
    """

    def __init__(
        self,
        responder: Responder,
        *,
        api_key: str = "test-key",
        clock: Callable[[], float] = time.monotonic,
        min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
        strict: bool = True,
    ) -> None:
        super().__init__(strict=strict)
        self.responder = responder
        self.api_key = api_key
        self.cache = PromptCache(clock, min_cacheable_tokens)
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()

    @classmethod
    def queued(
        cls,
        *,
        api_key: str = "test-key",
        clock: Callable[[], float] = time.monotonic,
        min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
        strict: bool = True,
        **queues: Iterable[Step],
    ) -> "FakeMessagesAPI":
        """A fake answering each tool from its own queue: `queued(report_findings=[...])`."""
        return cls(
            QueuedResponder(**queues),
            api_key=api_key,
            clock=clock,
            min_cacheable_tokens=min_cacheable_tokens,
            strict=strict,
        )

    # -- lifecycle (the rest is LoopbackFake's) -----------------------------------------------

    description = "the fake Messages API"
    thread_name = "fake-messages-api"
    methods = ("POST", "GET")

    def _problems_error(self) -> Exception:
        return Unscripted("; ".join(self.problems))

    # -- what was asked ------------------------------------------------------------------------

    @property
    def usages(self) -> list[Usage]:
        """The usage of every successful answer, in order."""
        return [r.usage for r in self.requests if r.usage is not None]

    # -- answering -----------------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: Mapping[str, str], raw: bytes) -> _Answer:
        """Answer one HTTP request (the server calls this, one request at a time)."""
        with self._lock:
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = None
            answer = self._answer(method, urlsplit(target).path, headers, body)
            usage = answer.body.get("usage") if answer.status == 200 else None
            self.requests.append(
                Recorded(
                    method=method,
                    path=target,
                    headers=dict(headers),
                    body=body,
                    status=answer.status,
                    response=answer.body,
                    usage=None if usage is None else _usage(usage),
                )
            )
            request_id = f"req_fake_{len(self.requests):06d}"
            return _Answer(answer.status, answer.body, {**answer.headers, "request-id": request_id})

    def _respond(
        self, method: str, target: str, headers: Mapping[str, str], raw: bytes
    ) -> Response:
        answer = self.handle(method, target, headers, raw)
        payload = json.dumps(answer.body).encode()
        return Response(answer.status, "application/json", payload, list(answer.headers.items()))

    def _answer(self, method: str, path: str, headers: Mapping[str, str], body: Any) -> _Answer:
        if method != "POST" or path != "/v1/messages":
            return _error(Error(404, "not_found_error", f"{method} {path} is not served here"))
        if not self._authorised(headers):
            return _error(Error(401, "authentication_error", "invalid x-api-key"))
        if not headers.get("anthropic-version"):
            return _error(
                Error(400, "invalid_request_error", "anthropic-version: header is required")
            )
        if not isinstance(body, dict):
            return _error(Error(400, "invalid_request_error", "the body is not a JSON object"))
        try:
            model, max_tokens = _model(body), _max_tokens(body)
            tool = forced_tool(body)
            units = prompt_units(body)
        except InvalidRequest as exc:
            return _error(Error(400, "invalid_request_error", str(exc)))
        try:
            reply = self.responder(body)
        except Exception as exc:
            problem = f"request {len(self.requests) + 1} ({tool}): {exc}"
            self.problems.append(problem)
            return _error(Error(400, "invalid_request_error", f"fake Messages API: {problem}"))
        if isinstance(reply, Error):
            return _error(reply)
        if not isinstance(reply, Truncated | dict):
            problem = f"request {len(self.requests) + 1} ({tool}): the responder gave {reply!r}"
            self.problems.append(problem)
            return _error(Error(400, "invalid_request_error", f"fake Messages API: {problem}"))
        # Charged only for a real answer: an error costs nothing and caches nothing.
        charge = self.cache.charge(model, units, body.get("tool_choice"))
        tool_input = reply.tool_input if isinstance(reply, Truncated) else reply
        output = count_tokens(canonical_json(tool_input))
        # An answer longer than max_tokens is cut there, as the model would be.
        truncated = isinstance(reply, Truncated) or output > max_tokens
        usage = Usage(
            input_tokens=charge.input_tokens,
            output_tokens=max_tokens if truncated else output,
            cache_creation_input_tokens=charge.write_tokens,
            cache_read_input_tokens=charge.read_tokens,
            ephemeral_5m_input_tokens=charge.write_5m_tokens,
            ephemeral_1h_input_tokens=charge.write_1h_tokens,
        )
        n = len(self.requests) + 1
        return _Answer(
            200,
            {
                "id": f"msg_fake_{n:06d}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_fake_{n:06d}",
                        "name": tool,
                        "input": tool_input,
                    }
                ],
                "stop_reason": "max_tokens" if truncated else "tool_use",
                "stop_sequence": None,
                "usage": usage.as_json(),
            },
        )

    def _authorised(self, headers: Mapping[str, str]) -> bool:
        bearer = headers.get("authorization", "")
        return bearer == f"Bearer {self.api_key}" or headers.get("x-api-key") == self.api_key


def _model(body: Body) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("model: Field required")
    return model


def _max_tokens(body: Body) -> int:
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidRequest("max_tokens: expected a positive integer")
    return max_tokens


def _error(error: Error) -> _Answer:
    return _Answer(
        error.status,
        {"type": "error", "error": {"type": error.type, "message": error.message}},
        error.headers,
    )


def _usage(raw: dict[str, Any]) -> Usage:
    creation = raw["cache_creation"]
    return Usage(
        input_tokens=raw["input_tokens"],
        output_tokens=raw["output_tokens"],
        cache_creation_input_tokens=raw["cache_creation_input_tokens"],
        cache_read_input_tokens=raw["cache_read_input_tokens"],
        ephemeral_5m_input_tokens=creation["ephemeral_5m_input_tokens"],
        ephemeral_1h_input_tokens=creation["ephemeral_1h_input_tokens"],
    )
