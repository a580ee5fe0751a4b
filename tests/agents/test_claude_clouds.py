"""The model client on Amazon Bedrock and Google Vertex AI, through the SDK's own cloud
clients, faked only at the HTTP boundary (respx) and, for Google, at a local token endpoint."""

import json
import re

import httpx
import pytest
import respx

from agents.errors import LLMFatal
from agents.models.claude import ClaudeLLM
from agents.models.llm import Role
from tests.fakes.google_token import ACCESS_TOKEN, SERVICE_ACCOUNT, GoogleTokenEndpoint
from tests.kits.clouds import (
    AWS_KEY_ID,
    BEDROCK_INVOKE,
    REQUEST,
    VERTEX_PREDICT,
    aws_keys,
    bedrock,
    google_adc,
    no_cloud_files,
    vertex,
)
from tests.kits.messages import error, message

__all__ = ["aws_keys", "google_adc", "no_cloud_files"]  # fixtures

OVERLOADED = error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "1"})
ANSWER = message(
    "report_findings", {"findings": []}, input_tokens=30, cache_creation=2100, cache_read=0
)


@respx.mock
@pytest.mark.usefixtures("aws_keys")
async def test_bedrock_calls_are_sigv4_signed_invocations_of_the_model() -> None:
    route = respx.post(BEDROCK_INVOKE).mock(side_effect=[OVERLOADED, ANSWER])

    answer = await bedrock(max_retries=1).complete(REQUEST)

    assert route.call_count == 2  # the 529 was retried
    sent = route.calls[-1].request
    assert re.fullmatch(
        rf"AWS4-HMAC-SHA256 Credential={AWS_KEY_ID}/\d{{8}}/us-east-1/bedrock/aws4_request, "
        r"SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}",
        sent.headers["authorization"],
    )
    assert "x-amz-date" in sent.headers
    body = json.loads(sent.content)
    # The model is in the path, the API version in the body, as Bedrock wants them.
    assert "model" not in body
    assert body["anthropic_version"]
    assert body["tool_choice"] == {"type": "tool", "name": "report_findings"}
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert answer.tool_input == {"findings": []}
    assert answer.usage.cache_creation_input_tokens == 2100
    assert answer.usage.billed == 30 + 80 + 2625


@respx.mock
@pytest.mark.usefixtures("no_cloud_files")
async def test_bedrock_without_aws_credentials_is_fatal_and_sends_nothing() -> None:
    route = respx.post(BEDROCK_INVOKE).mock(return_value=ANSWER)

    with pytest.raises(LLMFatal, match="no credentials for Amazon Bedrock"):
        await bedrock().complete(REQUEST)
    assert not route.called


@respx.mock
async def test_vertex_calls_carry_the_application_default_credentials_token(
    google_adc: GoogleTokenEndpoint,
) -> None:
    route = respx.post(VERTEX_PREDICT).mock(
        side_effect=[
            error(429, "rate_limit_error", "Slow down", **{"retry-after-ms": "1"}),
            ANSWER,
            ANSWER,
        ]
    )
    llm = vertex(max_retries=1)

    answer = await llm.complete(REQUEST)
    await llm.complete(REQUEST.model_copy(update={"role": Role.CODER}))

    assert route.call_count == 3  # the 429 was retried
    assert {c.request.headers["authorization"] for c in route.calls} == {f"Bearer {ACCESS_TOKEN}"}
    assert google_adc.grants == [SERVICE_ACCOUNT]  # one token, kept while it is valid
    body = json.loads(route.calls[-1].request.content)
    assert "model" not in body
    assert body["anthropic_version"]
    assert answer.tool_input == {"findings": []}
    assert answer.usage.cache_creation_input_tokens == 2100


@respx.mock
@pytest.mark.usefixtures("no_cloud_files")
async def test_vertex_without_application_default_credentials_is_fatal() -> None:
    route = respx.post(VERTEX_PREDICT).mock(return_value=ANSWER)

    with pytest.raises(LLMFatal, match="no credentials for Vertex AI"):
        await vertex().complete(REQUEST)
    assert not route.called


@respx.mock
@pytest.mark.usefixtures("aws_keys")
async def test_a_refusal_names_the_cloud() -> None:
    respx.post(BEDROCK_INVOKE).mock(
        return_value=error(403, "permission_error", "not authorized to invoke this model")
    )

    with pytest.raises(LLMFatal) as refused:
        await bedrock().complete(REQUEST)
    assert str(refused.value) == (
        "Amazon Bedrock refused the call: not authorized to invoke this model (403)"
    )


def test_the_request_is_the_same_on_every_provider(
    aws_keys: None, google_adc: GoogleTokenEndpoint
) -> None:
    """Same tools, system blocks, breakpoints and turn: caching works alike everywhere."""
    anthropic_params = ClaudeLLM.connect(api_key="sk-test").params(REQUEST)
    for llm in (bedrock(), vertex()):
        params = llm.params(REQUEST)
        assert {k: v for k, v in params.items() if k != "model"} == {
            k: v for k, v in anthropic_params.items() if k != "model"
        }


_ = httpx  # the alias respx patches
