"""Tiebreak's logs: one root handler, JSON lines (or readable text on a terminal), each line
carrying the delivery, repository, pull request and run it is about, and no secret.

The context is set for the duration of a webhook delivery or a job with :func:`log_context`
(and widened with :func:`bind` once more is known); contextvars carry it into the asyncio
tasks started inside, and a filter on the handler copies it onto every record, whichever
library logged it. Every line is redacted last (:mod:`app.telemetry.redaction`).
"""

import contextlib
import functools
import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import TextIO, TypedDict, Unpack

from pydantic import SecretStr
from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonEncoder

from app.settings import LogFormat, Settings, SettingsError
from app.telemetry.redaction import Redactor


class LogFields(TypedDict, total=False):
    """What a line may say it is about; None for what is not known."""

    delivery_id: str | None
    event: str | None
    repository: str | None
    pull_number: int | None
    run_id: str | None
    unit: int | None


FIELDS = tuple(LogFields.__annotations__)

_context: ContextVar[Mapping[str, object]] = ContextVar(
    "tiebreak_log_context", default=MappingProxyType({})
)

_NOT_EXTRA = frozenset([*RESERVED_ATTRS, "taskName", "color_message"])
"""A record's own attributes, and uvicorn's copy of its message with terminal colours: the
rest are fields to show."""


@contextlib.contextmanager
def log_context(**fields: Unpack[LogFields]) -> Iterator[None]:
    """Add `fields` to every line logged inside the block (and in tasks it starts)."""
    token = _context.set(_with(fields))
    try:
        yield
    finally:
        _context.reset(token)


def bind(**fields: Unpack[LogFields]) -> None:
    """Add `fields` to the current context, until the enclosing :func:`log_context` ends."""
    _context.set(_with(fields))


def _with(fields: LogFields) -> Mapping[str, object]:
    return {**_context.get(), **{k: v for k, v in fields.items() if v is not None}}


class ContextFilter(logging.Filter):
    """Copies the current context onto each record (fields a record has already win)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in _context.get().items():
            record.__dict__.setdefault(key, value)
        return True


class JsonLines(logging.Formatter):
    """One JSON object a line: time (ISO 8601, UTC), level, logger, message, the context,
    extra fields, and `exc_info` (and `stack_info`) as a string when there is one.

    Built by hand rather than by python-json-logger's formatter, whose generality (renames,
    defaults, a new encoder each line) made it the larger part of a webhook's log line; its
    encoder still writes whatever an extra field holds (dates, dataclasses, anything else
    as `str`)."""

    _encoder = JsonEncoder(ensure_ascii=False)

    def format(self, record: logging.LogRecord) -> str:
        fields = record.__dict__
        line: dict[str, object] = {
            "time": _utc_time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in fields.items():
            if key not in _NOT_EXTRA:
                line[key] = value
        if record.exc_info:
            # Kept on the record, as `logging.Formatter` keeps it: other handlers reuse it.
            record.exc_text = record.exc_text or self.formatException(record.exc_info)
        if record.exc_text:
            line["exc_info"] = record.exc_text
        if record.stack_info:
            line["stack_info"] = self.formatStack(record.stack_info)
        return self._encoder.encode(line)


def _utc_time(record: logging.LogRecord) -> str:
    """`2026-01-31T12:00:00.000Z`: the record's time to the millisecond, in UTC."""
    return f"{_utc_second(int(record.created))}.{int(record.msecs):03d}Z"


@functools.lru_cache(maxsize=4)
def _utc_second(second: int) -> str:
    # Lines come many to a second: the date and time are written once for all of them.
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))


class TextLines(logging.Formatter):
    """`time LEVEL logger: message [field=value ...]`, for a person at a terminal: the
    context's fields, then any extra ones."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        line = super().formatMessage(record)
        extra = [k for k in record.__dict__ if k not in _NOT_EXTRA and k not in FIELDS]
        fields = " ".join(
            f"{key}={record.__dict__[key]}"
            for key in (*FIELDS, *extra)
            if record.__dict__.get(key) is not None
        )
        return f"{line} [{fields}]" if fields else line


class Redacting(logging.Formatter):
    """Formats with `inner`, then redacts the whole result."""

    def __init__(self, inner: logging.Formatter, redact: Redactor) -> None:
        super().__init__()
        self.inner = inner
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        return self.redact(self.inner.format(record))


def configure(settings: Settings, stream: TextIO = sys.stderr) -> logging.Handler:
    """Send every log record, at the configured level, through one handler on `stream`
    (:func:`make_handler`), replacing any other the root logger had."""
    handler = make_handler(settings, stream)
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.tiebreak_log_level.value)
    # google-auth cuts its `google` logger off from the root on its first request unless that
    # logger looks configured; its lines would then bypass this handler (and so redaction),
    # a warning reaching stderr raw through logging's last resort. A level makes it look
    # configured, and it logs here like every other library.
    google = logging.getLogger("google")
    google.setLevel(settings.tiebreak_log_level.value)
    google.propagate = True
    logging.captureWarnings(True)  # a warning is a line like any other, JSON and redacted
    # No line says where in the code, or in which thread or process, a record was made:
    # logging is told not to look (its documented optimisations), which spares every line,
    # a webhook's among them, a walk up the stack and three lookups.
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    return handler


class AccessLines(logging.Filter):
    """Drops uvicorn's access line of a request to one of `paths`: their routes write a line
    of their own per answer, with the status and what the request was about, so one request
    makes one line."""

    def __init__(self, paths: Iterable[str]) -> None:
        super().__init__()
        self.paths = frozenset(paths)

    def filter(self, record: logging.LogRecord) -> bool:
        # uvicorn's access record: (client, method, path with query string, version, status).
        args = record.args
        if not isinstance(args, tuple) or len(args) < 3:
            return True
        return str(args[2]).partition("?")[0] not in self.paths


def skip_access_lines(*paths: str) -> AccessLines:
    """Write no uvicorn access line for requests to `paths` (see :class:`AccessLines`)."""
    access = logging.getLogger("uvicorn.access")
    for old in [f for f in access.filters if isinstance(f, AccessLines)]:
        access.removeFilter(old)
    kept = AccessLines(paths)
    access.addFilter(kept)
    return kept


def make_handler(settings: Settings, stream: TextIO) -> logging.Handler:
    """A handler on `stream` that adds the context and redacts: JSON lines unless the
    format says text, or is `auto` and `stream` is a terminal."""
    form = settings.tiebreak_log_format
    if form is LogFormat.AUTO:
        form = LogFormat.TEXT if _is_terminal(stream) else LogFormat.JSON
    inner = TextLines() if form is LogFormat.TEXT else JsonLines()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(Redacting(inner, Redactor(known_secrets(settings))))
    handler.addFilter(ContextFilter())
    return handler


CLOUD_SECRETS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK")
"""Variables holding secrets that AWS's SDK (and the Bedrock client) read straight from the
environment, outside the settings."""


def known_secrets(settings: Settings, environ: Mapping[str, str] = os.environ) -> list[str]:
    """Every secret value in the settings, the private key wherever it comes from, and the
    cloud secrets `environ` holds."""
    values = [getattr(settings, name) for name in type(settings).model_fields]
    secrets = [v.get_secret_value() for v in values if isinstance(v, SecretStr)]
    secrets += [environ[name] for name in CLOUD_SECRETS if environ.get(name)]
    if settings.github_private_key is None and settings.github_private_key_path is not None:
        # Unreadable, no line can hold it; a process that needs it has refused to start.
        with contextlib.suppress(SettingsError):
            secrets.append(settings.private_key())
    return secrets


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
