"""The logs: JSON lines (text on a terminal) that say what they are about, and hold no secret."""

import asyncio
import io
import json
import logging
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import jwt
import pytest
from pydantic import SecretStr, ValidationError

from app.settings import LogFormat, LogLevel, Settings
from app.telemetry.logs import (
    JsonLines,
    bind,
    configure,
    known_secrets,
    log_context,
    make_handler,
    skip_access_lines,
)
from app.telemetry.redaction import REDACTED, Redactor
from tests.fakes.github_api import AppKey, new_app_key

WEBHOOK_SECRET = "whsec-7f3a9c1e5b2d"
API_KEY = "sk-ant-api03-" + "Zq8xN2vL5kR7tY1wP4mB" * 4 + "AA"
TOKEN = "ghs_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY2z4A"
PAT = "github_pat_11ABCDEFG0123456789abc_" + "x" * 59
OPAQUE = "opaque-credential-0a1b2c3d"
"""A credential of no known shape: only the header it travels in gives it away."""


@pytest.fixture(scope="module")
def stranger() -> AppKey:
    """A private key this process was not told about."""
    return new_app_key()


def settings(key: AppKey, **overrides: object) -> Settings:
    return Settings(
        github_webhook_secret=SecretStr(WEBHOOK_SECRET),
        anthropic_api_key=SecretStr(API_KEY),
        github_private_key=SecretStr(key.private_pem),
        **overrides,  # type: ignore[arg-type]
    )


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Capture:
    """A logger with Tiebreak's handler on a string, as the process would write it."""

    def __init__(self, config: Settings, stream: io.StringIO | None = None) -> None:
        self.stream = stream or io.StringIO()
        self.logger = logging.getLogger(f"tests.logs.{id(self)}")
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)
        self.logger.addHandler(make_handler(config, self.stream))

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    def records(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.text.splitlines()]


@pytest.fixture
def capture(key: AppKey) -> Capture:
    return Capture(settings(key))


def app_jwt(key: AppKey) -> str:
    return jwt.encode({"iss": "42", "iat": 1, "exp": 2}, key.private_pem, algorithm="RS256")


SECRETS: dict[str, Callable[[AppKey], tuple[str, list[str]]]] = {
    # kind → (the text that is logged, the strings that must not reach the line)
    "webhook secret": lambda key: (WEBHOOK_SECRET, [WEBHOOK_SECRET]),
    "API key": lambda key: (API_KEY, [API_KEY]),
    "private key": lambda key: (key.private_pem, pem_body(key.private_pem)),
    "installation token": lambda key: (TOKEN, [TOKEN]),
    "personal token": lambda key: (PAT, [PAT]),
    "App JWT": lambda key: (app_jwt(key), [app_jwt(key)]),
    "Authorization value": lambda key: (f"Authorization: Bearer {OPAQUE}", [OPAQUE]),
}

PLACES: dict[str, Callable[[logging.Logger, str], None]] = {
    "message": lambda log, text: log.info(f"got {text} back"),
    "argument": lambda log, text: log.info("got %s back", text),
    "repr'd bytes": lambda log, text: log.debug("got %r back", text.encode()),
    "JSON-escaped argument": lambda log, text: log.info("body %s", json.dumps({"v": text})),
    "extra field": lambda log, text: log.warning("got it", extra={"detail": text}),
    "traceback": lambda log, text: _log_failure(log, text),
}


def _log_failure(log: logging.Logger, text: str) -> None:
    try:
        raise RuntimeError(f"refused: {text}")
    except RuntimeError:
        log.exception("the call failed")


def pem_body(pem: str) -> list[str]:
    return [line for line in pem.splitlines() if line and not line.startswith("-----")]


@pytest.mark.parametrize("form", [LogFormat.JSON, LogFormat.TEXT])
@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_no_secret_reaches_a_line(key: AppKey, kind: str, place: str, form: LogFormat) -> None:
    text, forbidden = SECRETS[kind](key)
    capture = Capture(settings(key, tiebreak_log_format=form))

    PLACES[place](capture.logger, text)

    assert REDACTED in capture.text
    assert [s for s in forbidden if s in capture.text] == []
    if form is LogFormat.JSON:
        (record,) = capture.records()  # still one JSON object
        assert record["level"] in ("DEBUG", "INFO", "WARNING", "ERROR")


@pytest.mark.parametrize(
    "spell",
    [
        pytest.param(lambda pem: pem, id="as is"),
        pytest.param(lambda pem: json.dumps({"key": pem}), id="JSON-escaped"),
        pytest.param(lambda pem: repr(pem.encode()), id="repr'd bytes"),
        pytest.param(lambda pem: json.dumps(repr(pem)), id="repr'd, then JSON-escaped"),
        pytest.param(lambda pem: pem[:300], id="cut short"),
    ],
)
def test_a_private_key_the_process_never_saw_is_redacted_by_its_shape(
    capture: Capture, stranger: AppKey, spell: Callable[[str], str]
) -> None:
    capture.logger.info("loaded %s from disk", spell(stranger.private_pem))

    (record,) = capture.records()
    message = str(record["message"])
    assert message.startswith("loaded ")
    assert message.endswith(" from disk")
    assert REDACTED in message
    assert "PRIVATE KEY" not in capture.text
    assert [line for line in pem_body(stranger.private_pem) if line in capture.text] == []


def test_a_single_line_of_the_private_key_is_redacted(capture: Capture, key: AppKey) -> None:
    line = pem_body(key.private_pem)[7]

    capture.logger.info("bad base64 near %s", line)

    assert capture.records()[0]["message"] == f"bad base64 near {REDACTED}"


@pytest.mark.parametrize(
    ("logged", "shown"),
    [
        ("Authorization: token abc123", "Authorization: token [REDACTED]"),
        ("authorization: bearer eyJx.eyJy.z", "authorization: bearer [REDACTED]"),
        ("{'authorization': 'Basic b2N0bzpwdw=='}", "{'authorization': 'Basic [REDACTED]'}"),
        ('{"Authorization": "token abc123"}', '{"Authorization": "token [REDACTED]"}'),
        ("[(b'authorization', b'Bearer abc.def')]", "[(b'authorization', b'Bearer [REDACTED]')]"),
        ("X-Api-Key: k-123", "X-Api-Key: [REDACTED]"),
        ("ANTHROPIC_API_KEY=abc", "ANTHROPIC_API_KEY=[REDACTED]"),
        (
            '"GET /runs/r%3A1?token=MTcz.a-b_c HTTP/1.1" 200',
            '"GET /runs/r%3A1?token=[REDACTED] HTTP/1.1" 200',
        ),
        ("/x?a=1&access_token=abc&b=2", "/x?a=1&access_token=[REDACTED]&b=2"),
    ],
)
def test_header_values_are_redacted_and_their_names_kept(
    capture: Capture, logged: str, shown: str
) -> None:
    capture.logger.debug("%s", logged)

    assert capture.records()[0]["message"] == shown


SIGNATURE = "9ac208e942de093c21eda5e1dbf0f88b30ccbd57236bd4efcc80309683bd970e"
SIGV4 = (
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261126/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-security-token, Signature="
)
PRESIGNED = (
    "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={}"
    "&X-Amz-Date=20261126T000000Z&X-Amz-SignedHeaders=host&X-Amz-Security-Token={}"
    "&X-Amz-Signature={}"
)
GOOG4 = "https://storage.googleapis.com/b/o?X-Goog-Credential={}&X-Goog-Signature={}"


@pytest.mark.parametrize(
    ("logged", "shown"),
    [
        # AWS: a session token as botocore's canonical request, a header, JSON and a repr show it
        ("x-amz-security-token:IQoJb3JpZ2lu+/Ez==", "x-amz-security-token:[REDACTED]"),
        ("X-Amz-Security-Token: IQoJb3JpZ2lu", "X-Amz-Security-Token: [REDACTED]"),
        ('{"X-Amz-Security-Token": "IQoJb3JpZ2lu"}', '{"X-Amz-Security-Token": "[REDACTED]"}'),
        (
            "[(b'x-amz-security-token', b'IQoJb3JpZ2lu')]",
            "[(b'x-amz-security-token', b'[REDACTED]')]",
        ),
        # a SigV4 Authorization, a presigned URL, the signature botocore logs alone
        (
            f"Authorization: {SIGV4}{SIGNATURE}",
            "Authorization: AWS4-HMAC-SHA256 [REDACTED], "
            "SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=[REDACTED]",
        ),
        (
            PRESIGNED.format(
                "AKIDEXAMPLE%2F20261126%2Fus-east-1%2Fs3%2Faws4_request", "IQoJ", SIGNATURE
            ),
            PRESIGNED.format(REDACTED, REDACTED, REDACTED),
        ),
        (f"Signature:\n{SIGNATURE}", f"Signature:\n{REDACTED}"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key = [REDACTED]"),
        # Google: credential headers, signed URLs, OAuth tokens and the fields that carry them
        ("x-goog-iam-authorization-token: abc.def", "x-goog-iam-authorization-token: [REDACTED]"),
        ("X-Goog-Api-Key: AIzaSyA-1234567890abcdefghijklmnopqrstu", "X-Goog-Api-Key: [REDACTED]"),
        (
            GOOG4.format("sa%40p.iam.gserviceaccount.com%2F20261126", SIGNATURE),
            GOOG4.format(REDACTED, REDACTED),
        ),
        ("using ya29.a0AfH6SMBx-3kZ_q", f"using {REDACTED}"),
        ("key AIzaSyA-1234567890abcdefghijklmnopqrstu", f"key {REDACTED}"),
        (
            '{"access_token": "opaque-1", "refresh_token": "1//0gLx-opaque", "expires_in": 3599}',
            '{"access_token": "[REDACTED]", "refresh_token": "[REDACTED]", "expires_in": 3599}',
        ),
        (
            '{"client_secret": "GOCSPX-abc", "id_token": "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIx.c2ln"}',
            '{"client_secret": "[REDACTED]", "id_token": "[REDACTED]"}',
        ),
        ("{'private_key': 'MIIEvQIBADANBgkq'}", "{'private_key': '[REDACTED]'}"),
        (
            "grant_type=refresh_token&client_secret=GOCSPX-abc&refresh_token=r-1",
            "grant_type=refresh_token&client_secret=[REDACTED]&refresh_token=[REDACTED]",
        ),
    ],
)
def test_cloud_credentials_are_redacted_by_their_shape(
    capture: Capture, logged: str, shown: str
) -> None:
    capture.logger.debug("%s", logged)

    assert capture.records()[0]["message"] == shown


def test_a_private_key_field_loses_its_whole_pem(capture: Capture, stranger: AppKey) -> None:
    logged = json.dumps({"type": "service_account", "private_key": stranger.private_pem})

    capture.logger.debug("%s", logged)

    message = str(capture.records()[0]["message"])
    assert message.startswith(f'{{"type": "service_account", "private_key": "{REDACTED}')
    assert "PRIVATE KEY" not in message
    assert [line for line in pem_body(stranger.private_pem) if line in message] == []


def test_cloud_secrets_in_the_environment_are_known(
    key: AppKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "cloud-secret-" + OPAQUE)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "cloud-token-" + OPAQUE)
    capture = Capture(settings(key))

    capture.logger.info("retrying as cloud-secret-%s with cloud-token-%s", OPAQUE, OPAQUE)

    assert capture.records()[0]["message"] == f"retrying as {REDACTED} with {REDACTED}"


def test_headers_in_an_extra_field_are_redacted(capture: Capture) -> None:
    capture.logger.debug("sent", extra={"headers": {"Authorization": f"token {OPAQUE}"}})

    assert capture.records()[0]["headers"] == {"Authorization": f"token {REDACTED}"}


@pytest.mark.parametrize(
    "harmless",
    [
        "a ghost_ town",
        "ghs_short is not a token",
        "gho_" + "x" * 35,
        "the authorization failed",
        "missing settings: GITHUB_APP_ID, ANTHROPIC_API_KEY",
        "eyJhbGciOi is no JWT",
        "sk-antelope",
        "-----BEGIN PUBLIC KEY-----",
        "reviewed octo/shop#7 at 1111111 with claude-sonnet-5",
        "x-amz-date:20261126T103314Z",
        "host;x-amz-date;x-amz-security-token;x-stainless-arch",
        "bad signature: sha256=0a1b",
        "Signature: 9ac2 is too short",
        "Asia/Tokyo",
        "grant_type=refresh_token",
        "input_tokens: 1200, cache_read_input_tokens: 0",
        "private_key_path=/etc/tiebreak/app.pem",
        "StringToSign:\nAWS4-HMAC-SHA256\n20261126/us-east-1/bedrock/aws4_request",
    ],
)
def test_look_alikes_are_left_alone(capture: Capture, harmless: str) -> None:
    capture.logger.info("%s", harmless)

    assert capture.records()[0]["message"] == harmless


def test_lines_are_json_with_time_level_logger_message_and_context(capture: Capture) -> None:
    with log_context(delivery_id="d-1", event="pull_request"):
        bind(repository="octo/shop", pull_number=7)
        capture.logger.info("answered %s", 202)
    capture.logger.warning("outside")

    inside, outside = capture.records()
    assert inside == {
        "time": inside["time"],
        "level": "INFO",
        "logger": capture.logger.name,
        "message": "answered 202",
        "delivery_id": "d-1",
        "event": "pull_request",
        "repository": "octo/shop",
        "pull_number": 7,
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", str(inside["time"]))
    assert outside.keys() == {"time", "level", "logger", "message"}


async def test_the_context_reaches_tasks_and_ends_with_its_block(capture: Capture) -> None:
    async def unit(number: int) -> None:
        with log_context(unit=number):
            await asyncio.sleep(0)
            capture.logger.info("debated")

    with log_context(run_id="review:octo/shop#7@abc", repository="octo/shop", pull_number=7):
        await asyncio.gather(unit(0), unit(1))
        capture.logger.info("published", extra={"pull_number": 8})  # a record's own wins

    first, second, published = capture.records()
    assert {first["unit"], second["unit"]} == {0, 1}
    assert first["run_id"] == second["run_id"] == "review:octo/shop#7@abc"
    assert "unit" not in published
    assert published["pull_number"] == 8


def test_an_exception_is_one_string_field(capture: Capture) -> None:
    _log_failure(capture.logger, "nothing secret")

    (record,) = capture.records()
    assert isinstance(record["exc_info"], str)
    assert record["exc_info"].startswith("Traceback")
    assert record["exc_info"].endswith("RuntimeError: refused: nothing secret")


def test_a_terminal_gets_readable_lines(key: AppKey) -> None:
    capture = Capture(settings(key), Terminal())

    with log_context(run_id="r-1", repository="octo/shop", pull_number=7):
        capture.logger.info("token %s minted", TOKEN)

    assert re.fullmatch(
        r"\S+ \S+ INFO    tests\.logs\.\d+: token \[REDACTED\] minted "
        r"\[repository=octo/shop pull_number=7 run_id=r-1\]\n",
        capture.text,
    )


@pytest.mark.parametrize(
    ("form", "stream", "json_lines"),
    [
        (LogFormat.AUTO, io.StringIO, True),
        (LogFormat.AUTO, Terminal, False),
        (LogFormat.JSON, Terminal, True),
        (LogFormat.TEXT, io.StringIO, False),
    ],
)
def test_the_format_follows_the_setting_and_the_stream(
    key: AppKey, form: LogFormat, stream: type[io.StringIO], json_lines: bool
) -> None:
    capture = Capture(settings(key, tiebreak_log_format=form), stream())

    capture.logger.info("hello")

    assert capture.text.startswith("{") is json_lines


@pytest.mark.parametrize(
    ("variable", "value", "field", "expected"),
    [
        ("TIEBREAK_LOG_FORMAT", "JSON", "tiebreak_log_format", LogFormat.JSON),
        ("TIEBREAK_LOG_FORMAT", "text", "tiebreak_log_format", LogFormat.TEXT),
        ("TIEBREAK_LOG_LEVEL", "debug", "tiebreak_log_level", LogLevel.DEBUG),
        ("TIEBREAK_LOG_LEVEL", " WARNING ", "tiebreak_log_level", LogLevel.WARNING),
    ],
)
def test_log_settings_are_read_in_any_case(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, field: str, expected: str
) -> None:
    monkeypatch.setenv(variable, value)

    assert getattr(Settings(), field) == expected


@pytest.mark.parametrize(
    ("variable", "value"),
    [("TIEBREAK_LOG_FORMAT", "xml"), ("TIEBREAK_LOG_LEVEL", "verbose"), ("TIEBREAK_LOG_LEVEL", "")],
)
def test_unknown_log_settings_are_refused(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)

    with pytest.raises(ValidationError, match=variable.lower()):
        Settings()


def test_the_defaults_are_auto_and_info() -> None:
    assert (Settings().tiebreak_log_format, Settings().tiebreak_log_level) == ("auto", "INFO")


def test_a_private_key_read_from_a_file_is_known_too(key: AppKey, tmp_path: Path) -> None:
    path = tmp_path / "app.pem"
    path.write_text(key.private_pem)

    secrets = known_secrets(Settings(github_private_key_path=path), environ={})
    unreadable = known_secrets(
        Settings(github_private_key_path=tmp_path / "missing.pem"), environ={}
    )

    assert secrets == [key.private_pem]
    assert unreadable == []


def test_a_redactor_without_secrets_still_knows_the_shapes() -> None:
    assert Redactor()(f"minted {TOKEN}") == f"minted {REDACTED}"


def test_a_known_value_too_short_to_be_a_secret_leaves_ordinary_words_alone() -> None:
    redact = Redactor(["a", "review", "sk-12345", WEBHOOK_SECRET])

    line = f"a review of octo/shop#7 with sk-12345 signed by {WEBHOOK_SECRET}"

    assert redact(line) == f"a review of octo/shop#7 with {REDACTED} signed by {REDACTED}"


def test_configure_leaves_one_root_handler_that_every_logger_reaches(
    root: logging.Logger, key: AppKey
) -> None:
    stream = io.StringIO()

    handler = configure(settings(key, tiebreak_log_level=LogLevel.DEBUG), stream)
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d',
        *("127.0.0.1:5000", "POST", "/api/github/webhooks", "1.1", 202),
        extra={"color_message": "\x1b[1m...\x1b[0m"},
    )
    logging.getLogger("httpcore.http11").debug(
        "send_request_headers.started request=%r", [(b"Authorization", f"token {TOKEN}".encode())]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(f"leaked {WEBHOOK_SECRET}", UserWarning, stacklevel=1)

    assert root.handlers == [handler]
    assert root.level == logging.DEBUG
    access, http, warning = (json.loads(line) for line in stream.getvalue().splitlines())
    assert access["logger"] == "uvicorn.access"
    assert "color_message" not in access
    assert http["message"].endswith(f"[(b'Authorization', b'token {REDACTED}')]")
    assert warning["logger"] == "py.warnings"
    assert WEBHOOK_SECRET not in warning["message"]


def test_no_access_line_is_written_for_a_path_whose_route_logs_its_own_answers(
    root: logging.Logger, key: AppKey
) -> None:
    stream = io.StringIO()
    configure(settings(key), stream)
    access = logging.getLogger("uvicorn.access")
    kept = skip_access_lines("/api/github/webhooks")
    try:
        for path in ("/api/github/webhooks", "/api/github/webhooks?x=1", "/runs/abc", "/healthz"):
            access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "POST", path, "1.1", 202)
    finally:
        access.removeFilter(kept)

    lines = [json.loads(line)["message"] for line in stream.getvalue().splitlines()]
    assert lines == [
        '127.0.0.1:5000 - "POST /runs/abc HTTP/1.1" 202',
        '127.0.0.1:5000 - "POST /healthz HTTP/1.1" 202',
    ]


def test_each_line_carries_its_own_time_to_the_millisecond_in_utc() -> None:
    formatter = JsonLines()
    times = []
    for created in (0.5, 0.75, 1.25, 86_400.625, 0.001):
        record = logging.LogRecord("tiebreak", logging.INFO, __file__, 1, "m", None, None)
        record.created, record.msecs = created, (created - int(created)) * 1000
        times.append(json.loads(formatter.format(record))["time"])

    assert times == [
        "1970-01-01T00:00:00.500Z",
        "1970-01-01T00:00:00.750Z",
        "1970-01-01T00:00:01.250Z",
        "1970-01-02T00:00:00.625Z",
        "1970-01-01T00:00:00.001Z",
    ]
