"""Where Claude runs: Anthropic's API, Amazon Bedrock or Google Vertex AI.

Each provider names the same models its own way and finds its credentials its own way; this
module holds what Tiebreak knows of that without I/O — the default model in each naming, and
what a provider needs set before a process starts — so the settings can refuse to start
without calling anyone. `agents.models.claude` builds the SDK client from a :class:`Cloud`.
"""

import re
from dataclasses import dataclass
from enum import StrEnum

from policies.config import MODEL_ID


class Provider(StrEnum):
    """Whose endpoint serves the Messages API."""

    ANTHROPIC = "anthropic"
    BEDROCK = "bedrock"
    VERTEX = "vertex"


MODEL = "claude-sonnet-5-5"
"""The default model, as Anthropic's API and Vertex AI name it."""

_BEDROCK_MODEL = f"anthropic.{MODEL}"

_BEDROCK_GEOGRAPHIES = (("us-gov-", "us-gov"), ("us-", "us"), ("eu-", "eu"), ("ap-", "apac"))
"""Region prefixes and the cross-region inference profile that keeps calls in their geography."""

_BEDROCK_ID = re.compile(
    r"^(?:(?:[a-z-]+\.)?anthropic\.[a-z0-9.:-]+|arn:aws[a-z-]*:bedrock:[a-z0-9-]+:\d{12}:\S+)$"
)
"""A model id, an inference profile id (`us.anthropic.…`) or an ARN, as Bedrock takes them."""

_VERTEX_ID = re.compile(r"^claude-[a-z0-9.-]+(?:@[a-z0-9]+)?$")
"""`claude-…`, optionally `@version`, as Vertex AI takes them."""


def default_model(provider: Provider, region: str | None = None) -> str:
    """The same Claude model in the provider's naming.

    Bedrock serves recent models on demand only through inference profiles, so its default is
    the profile of the region's geography (the global one outside the named geographies).
    """
    if provider is not Provider.BEDROCK:
        return MODEL
    prefix = next(
        (geo for start, geo in _BEDROCK_GEOGRAPHIES if (region or "").startswith(start)), "global"
    )
    return f"{prefix}.{_BEDROCK_MODEL}"


def model_fault(provider: Provider, model: str) -> str | None:
    """Why `model` is not a model id `provider` takes, or None when it is one."""
    if not re.fullmatch(MODEL_ID, model):
        return f"{model!r} is not a model id"
    if provider is Provider.BEDROCK and not _BEDROCK_ID.match(model):
        return f"{model!r} is not a Bedrock model id (e.g. {default_model(provider, 'us-east-1')})"
    if provider is Provider.VERTEX and not _VERTEX_ID.match(model):
        return f"{model!r} is not a Vertex AI model id (e.g. {MODEL})"
    return None


@dataclass(frozen=True, slots=True)
class Cloud:
    """Where and as whom a provider's client calls; None leaves a value to the SDK's own lookup.

    Credentials are never here: Bedrock's come from AWS's credential chain (the variables,
    `AWS_PROFILE` and the shared files, the instance's or the task's role), or a Bedrock API
    key (`AWS_BEARER_TOKEN_BEDROCK`); Vertex AI's from Google's application-default
    credentials.
    """

    provider: Provider = Provider.ANTHROPIC
    region: str | None = None
    """Bedrock's AWS region, or Vertex AI's region (`global`, `us-east5`, …)."""
    project: str | None = None
    """Vertex AI: the Google Cloud project billed for the calls."""

    def missing(self) -> list[str]:
        """The settings this provider needs but lacks, named as the operator sets them."""
        if self.provider is Provider.BEDROCK and not self.region:
            # Required even where a profile names one: a start never depends on files it cannot see.
            return ["AWS_REGION (or AWS_DEFAULT_REGION)"]
        if self.provider is Provider.VERTEX:
            missing = [] if self.region else ["CLOUD_ML_REGION"]
            if not self.project:
                missing.append("ANTHROPIC_VERTEX_PROJECT_ID (or GOOGLE_CLOUD_PROJECT)")
            return missing
        return []
