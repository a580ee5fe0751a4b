"""Each cloud's environment for tests: fake AWS keys, Google credentials from a local fake.

Nothing of the machine's own configuration is read (no `~/.aws`, no gcloud directory, no
instance metadata), so a test sees only the credentials it sets.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from anthropic.lib.aws import _auth as aws_auth

from agents.debate.prompts import SYSTEM
from agents.models.claude import ClaudeLLM, RoleModels
from agents.models.llm import LLMRequest, PromptBlock, Role
from agents.models.providers import Cloud, Provider
from agents.protocol import TOOLS, ToolName
from tests.fakes.google_token import GoogleTokenEndpoint

AWS_KEY_ID = "AKIDEXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
BEDROCK_URL = "https://bedrock-runtime.us-east-1.amazonaws.com"
BEDROCK_MODEL = "us.anthropic.claude-sonnet-5-5"
BEDROCK_INVOKE = f"{BEDROCK_URL}/model/{BEDROCK_MODEL}/invoke"

VERTEX_PROJECT = "tiebreak-test"
VERTEX_REGION = "us-east5"
VERTEX_MODEL = "claude-sonnet-5-5"
VERTEX_PREDICT = (
    f"https://{VERTEX_REGION}-aiplatform.googleapis.com/v1/projects/{VERTEX_PROJECT}"
    f"/locations/{VERTEX_REGION}/publishers/anthropic/models/{VERTEX_MODEL}:rawPredict"
)

REQUEST = LLMRequest(
    role=Role.TESTER,
    agent="tester",
    tool=TOOLS[ToolName.REPORT_FINDINGS],
    system=SYSTEM,
    blocks=(PromptBlock(text="<untrusted-diff-1>…</untrusted-diff-1>", stable=True),),
    max_output_tokens=1024,
)


def bedrock(**options: Any) -> ClaudeLLM:
    """The model client on Bedrock, as a worker builds it."""
    models = RoleModels(tester=BEDROCK_MODEL, coder=BEDROCK_MODEL, arbiter=BEDROCK_MODEL)
    cloud = Cloud(Provider.BEDROCK, region="us-east-1")
    return ClaudeLLM.connect(cloud=cloud, models=models, **options)


def vertex(**options: Any) -> ClaudeLLM:
    """The model client on Vertex AI, as a worker builds it."""
    models = RoleModels(tester=VERTEX_MODEL, coder=VERTEX_MODEL, arbiter=VERTEX_MODEL)
    cloud = Cloud(Provider.VERTEX, region=VERTEX_REGION, project=VERTEX_PROJECT)
    return ClaudeLLM.connect(cloud=cloud, models=models, **options)


@pytest.fixture
def no_cloud_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Neither cloud's libraries find anything but what the test sets. Google's would ask the
    metadata server of a Google VM last: the file they are sent to is missing, so they stop
    there (as they do when an operator names a key file that is not there)."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "no-key.json"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    # The SDK keeps one AWS session per process, and the session its credentials: a test
    # starts with none.
    cast(Any, aws_auth._get_session).cache_clear()  # an lru_cache the SDK types as a function


@pytest.fixture
def aws_keys(no_cloud_files: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Static AWS keys in the environment, as AWS's credential chain reads them first."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)


@pytest.fixture
def google_adc(
    no_cloud_files: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[GoogleTokenEndpoint]:
    """Application-default credentials whose access tokens come from a local fake."""
    with GoogleTokenEndpoint() as tokens:
        path = tokens.credentials_file(tmp_path)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
        yield tokens
