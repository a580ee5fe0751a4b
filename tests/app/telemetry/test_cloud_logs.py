"""The cloud SDKs' own lines at DEBUG — botocore signing a Bedrock call, google-auth getting
Vertex AI's token — go through Tiebreak's logging as a worker's do, and hold no credential."""

import io
import json
import logging
from pathlib import Path

import pytest
import respx

from app.settings import LogFormat, LogLevel, Settings
from app.telemetry.logs import configure
from app.telemetry.redaction import REDACTED
from tests.fakes.google_token import ACCESS_TOKEN, GoogleTokenEndpoint
from tests.kits.clouds import (
    AWS_KEY_ID,
    AWS_SECRET,
    BEDROCK_INVOKE,
    REQUEST,
    VERTEX_PREDICT,
    aws_keys,
    bedrock,
    google_adc,
    no_cloud_files,
    vertex,
)
from tests.kits.messages import message

__all__ = ["aws_keys", "google_adc", "no_cloud_files"]  # fixtures

SESSION_TOKEN = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDexample+token=="
ANSWER = message("report_findings", {"findings": []})


def debug_logs(form: LogFormat) -> io.StringIO:
    """Tiebreak's logging at DEBUG, as `tiebreak worker` sets it up, written to a string."""
    stream = io.StringIO()
    configure(Settings(tiebreak_log_level=LogLevel.DEBUG, tiebreak_log_format=form), stream)
    return stream


@pytest.mark.usefixtures("root")
@pytest.mark.parametrize("form", [LogFormat.JSON, LogFormat.TEXT])
@pytest.mark.parametrize("source", ["environment", "credentials file"])
@respx.mock
async def test_a_signed_bedrock_call_logs_no_session_token_or_signature(
    no_cloud_files: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    source: str,
    form: LogFormat,
) -> None:
    if source == "environment":  # known to the process when it starts
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
        monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    else:  # as a role's rotating credentials would be: unknown, found by their shape
        credentials = tmp_path / "no-aws-credentials"
        credentials.write_text(
            f"[default]\naws_access_key_id = {AWS_KEY_ID}\n"
            f"aws_secret_access_key = {AWS_SECRET}\naws_session_token = {SESSION_TOKEN}\n"
        )
    route = respx.post(BEDROCK_INVOKE).mock(return_value=ANSWER)
    stream = debug_logs(form)

    await bedrock().complete(REQUEST)

    sent = route.calls[0].request.headers
    assert sent["x-amz-security-token"] == SESSION_TOKEN
    signature = sent["authorization"].rpartition("Signature=")[2]
    text = stream.getvalue()
    assert "botocore.auth" in text  # the canonical request and the signature were logged
    leaked = [s for s in (SESSION_TOKEN, AWS_SECRET, signature) if s in text]
    assert leaked == []
    assert f"x-amz-security-token:{REDACTED}" in text


@pytest.mark.usefixtures("root")
@respx.mock
async def test_google_auth_logs_reach_tiebreak_s_handler_without_its_token(
    google_adc: GoogleTokenEndpoint,
) -> None:
    respx.post(VERTEX_PREDICT).mock(return_value=ANSWER)
    stream = debug_logs(LogFormat.JSON)

    await vertex().complete(REQUEST)
    logging.getLogger("google.auth.transport.requests").warning("the token endpoint is slow")

    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    google = [r for r in records if str(r["logger"]).startswith("google.")]
    assert "the token endpoint is slow" in [r["message"] for r in google]
    assert ACCESS_TOKEN not in stream.getvalue()
