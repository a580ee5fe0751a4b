"""The provider setting: what each cloud needs before a process starts, and its model names."""

import pytest
from pydantic import ValidationError

from app.settings import MissingSettings, Settings

APP: dict[str, object] = {"github_app_id": 1, "github_private_key": "pem"}


@pytest.mark.parametrize(
    ("settings", "model"),
    [
        ({}, "claude-sonnet-5-5"),
        (
            {"tiebreak_provider": "bedrock", "aws_region": "us-east-1"},
            "us.anthropic.claude-sonnet-5-5",
        ),
        (
            {"tiebreak_provider": "bedrock", "aws_default_region": "eu-west-3"},
            "eu.anthropic.claude-sonnet-5-5",
        ),
        (
            {"tiebreak_provider": "bedrock", "aws_region": "ap-northeast-1"},
            "apac.anthropic.claude-sonnet-5-5",
        ),
        (
            {"tiebreak_provider": "bedrock", "aws_region": "me-central-1"},
            "global.anthropic.claude-sonnet-5-5",
        ),
        ({"tiebreak_provider": "VERTEX"}, "claude-sonnet-5-5"),
        (
            {"tiebreak_provider": "vertex", "tiebreak_model": "claude-opus-5@20260301"},
            "claude-opus-5@20260301",
        ),
    ],
)
def test_the_default_model_is_named_as_the_provider_names_it(
    settings: dict[str, object], model: str
) -> None:
    assert Settings.model_validate(settings).tiebreak_model == model


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("bedrock", "claude-sonnet-5-5"),
        ("vertex", "us.anthropic.claude-sonnet-5-5"),
        ("anthropic", "arn:aws:bedrock:us-east-1:123456789012:inference-profile/x y"),
    ],
)
def test_a_model_in_another_providers_naming_is_refused(provider: str, model: str) -> None:
    with pytest.raises(ValidationError, match=r"(?i)tiebreak_model"):
        Settings.model_validate({"tiebreak_provider": provider, "tiebreak_model": model})


@pytest.mark.parametrize(
    ("settings", "missing"),
    [
        ({}, "ANTHROPIC_API_KEY"),
        ({"tiebreak_provider": "bedrock"}, "AWS_REGION (or AWS_DEFAULT_REGION)"),
        (
            {"tiebreak_provider": "vertex", "google_cloud_project": "p"},
            "CLOUD_ML_REGION",
        ),
    ],
)
def test_a_worker_refuses_to_start_naming_what_its_provider_lacks(
    settings: dict[str, object], missing: str
) -> None:
    with pytest.raises(MissingSettings) as refused:
        Settings.model_validate(APP | settings).require(worker=True)
    assert str(refused.value) == f"missing settings: {missing}"


@pytest.mark.parametrize(
    "settings",
    [
        {"anthropic_api_key": "sk-test"},
        {"tiebreak_provider": "bedrock", "aws_default_region": "us-west-2"},
        {
            "tiebreak_provider": "vertex",
            "cloud_ml_region": "global",
            "anthropic_vertex_project_id": "p",
        },
    ],
)
def test_a_cloud_needs_no_anthropic_key(settings: dict[str, object]) -> None:
    Settings.model_validate(APP | settings).require(worker=True)
