"""`tiebreak review` on Amazon Bedrock and Google Vertex AI, chosen by the same settings as the
server, over the SDK's cloud clients (respx; Google's tokens from a local fake)."""

import json
from pathlib import Path

import pytest
import respx
from click.testing import CliRunner, Result

from app.cli.main import main
from app.cli.reviewing import NO_KEY
from tests.fakes.google_token import ACCESS_TOKEN, GoogleTokenEndpoint
from tests.kits.clouds import (
    AWS_KEY_ID,
    BEDROCK_INVOKE,
    VERTEX_PREDICT,
    VERTEX_PROJECT,
    VERTEX_REGION,
    aws_keys,
    google_adc,
    no_cloud_files,
)
from tests.kits.messages import message
from tests.scenarios.debates import PAYMENTS, PAYMENTS_AFTER, PAYMENTS_BEFORE, git_diff

__all__ = ["aws_keys", "google_adc", "no_cloud_files"]  # fixtures

NO_FINDINGS = message("report_findings", {"findings": []})


@pytest.fixture
def patch_file(tmp_path: Path) -> Path:
    path = tmp_path / "change.diff"
    path.write_text(git_diff({PAYMENTS: (PAYMENTS_BEFORE, PAYMENTS_AFTER)}))
    return path


def review(patch_file: Path, env: dict[str, str]) -> Result:
    return CliRunner().invoke(main, ["review", str(patch_file)], env=env)


@respx.mock
@pytest.mark.usefixtures("aws_keys")
def test_review_runs_on_bedrock_in_the_regions_inference_profile(patch_file: Path) -> None:
    route = respx.post(BEDROCK_INVOKE).mock(return_value=NO_FINDINGS)

    result = review(patch_file, {"TIEBREAK_PROVIDER": "bedrock", "AWS_REGION": "us-east-1"})

    assert result.exit_code == 0, result.output
    assert route.call_count == 1
    authorization = route.calls[0].request.headers["authorization"]
    assert authorization.startswith(f"AWS4-HMAC-SHA256 Credential={AWS_KEY_ID}/")
    assert "/us-east-1/bedrock/aws4_request" in authorization


@respx.mock
def test_review_runs_on_vertex_with_application_default_credentials(
    patch_file: Path, google_adc: GoogleTokenEndpoint
) -> None:
    route = respx.post(VERTEX_PREDICT).mock(return_value=NO_FINDINGS)
    env = {
        "TIEBREAK_PROVIDER": "Vertex",
        "CLOUD_ML_REGION": VERTEX_REGION,
        "GOOGLE_CLOUD_PROJECT": VERTEX_PROJECT,
    }

    result = review(patch_file, env)

    assert result.exit_code == 0, result.output
    assert route.calls[0].request.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert "tools" in json.loads(route.calls[0].request.content)


@respx.mock
@pytest.mark.usefixtures("aws_keys")
def test_a_role_model_is_taken_in_bedrocks_naming(patch_file: Path) -> None:
    arn = "arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/a1b2c3"
    route = respx.post(url__regex=r"https://bedrock-runtime\.eu-west-1\.amazonaws\.com/.*").mock(
        return_value=NO_FINDINGS
    )

    result = CliRunner().invoke(
        main,
        ["review", str(patch_file), "--tester-model", arn],
        env={"TIEBREAK_PROVIDER": "bedrock", "AWS_DEFAULT_REGION": "eu-west-1"},
    )

    assert result.exit_code == 0, result.output
    assert route.calls[0].request.url.raw_path.decode() == (
        "/model/arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile%2Fa1b2c3"
        "/invoke"
    )


@pytest.mark.usefixtures("no_cloud_files")
@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"TIEBREAK_PROVIDER": "bedrock"}, "AWS_REGION (or AWS_DEFAULT_REGION) is not set"),
        (
            {"TIEBREAK_PROVIDER": "vertex"},
            "CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID (or GOOGLE_CLOUD_PROJECT) are not set",
        ),
        (
            {"TIEBREAK_PROVIDER": "vertex", "CLOUD_ML_REGION": "global"},
            "ANTHROPIC_VERTEX_PROJECT_ID (or GOOGLE_CLOUD_PROJECT) is not set",
        ),
    ],
)
def test_review_names_what_a_cloud_lacks_and_calls_nothing(
    patch_file: Path, env: dict[str, str], reason: str
) -> None:
    result = review(patch_file, env)

    assert result.exit_code == 2
    # What can be done without the model follows, as when a key is missing.
    assert result.stderr.strip() == f"tiebreak: {reason}{NO_KEY}"
