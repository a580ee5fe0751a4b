"""Tiebreak's settings, read once, through :func:`get_settings`, from the environment and from
the dotenv file in the working directory (`.env`, which `tiebreak setup` writes).

A variable set in the environment wins over the same one in the file. Nothing reads either at
import time; tests build `Settings` directly. Each process checks, before it starts, that the
settings it needs are there (:meth:`Settings.require`), so a server never starts
half-configured.
"""

import functools
import hmac
import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import (
    AnyHttpUrl,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from agents.models.providers import Cloud, Provider, default_model, model_fault
from policies.config import MODEL_ID
from policies.errors import TiebreakError

if TYPE_CHECKING:
    from agents.models.claude import ClaudeLLM, RoleModels


MIN_SECRET_CHARS = 16
"""The fewest characters a secret of Tiebreak's own may have (the webhook secret, the links'
key, the metrics token): a shorter one can be guessed from outside. It also keeps the log
redaction of a secret (:mod:`app.telemetry.redaction`) from hitting ordinary words."""

_GUESSED = {
    "github_webhook_secret": "forge GitHub's deliveries",
    "tiebreak_link_secret": "sign links to the transcripts",
    "tiebreak_metrics_token": "read the metrics",
}
"""What a guessed secret lets anyone do, by setting: the settings held to
:data:`MIN_SECRET_CHARS`."""


class SettingsError(TiebreakError):
    """A required setting is missing or unusable."""


class MissingSettings(SettingsError):
    """Settings a process needs are not set."""


class LogFormat(StrEnum):
    """How log lines are written: `auto` is JSON, or text on a terminal."""

    AUTO = "auto"
    JSON = "json"
    TEXT = "text"


class LogLevel(StrEnum):
    """The least severe log lines written."""

    DEBUG = "DEBUG"
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"
    CRITICAL = "CRITICAL"


class Settings(BaseSettings):
    """Process-wide settings. Secrets are `SecretStr` so they never print."""

    # A refused value is never shown, wherever the error is printed: it may be a secret.
    model_config = SettingsConfigDict(extra="ignore", frozen=True, hide_input_in_errors=True)

    github_app_id: int | None = None
    """The GitHub App's id (`GITHUB_APP_ID`)."""

    github_private_key: SecretStr | None = None
    """The App's PEM private key (`GITHUB_PRIVATE_KEY`), or see `github_private_key_path`."""

    github_private_key_path: Path | None = None
    """A file holding the App's PEM private key (`GITHUB_PRIVATE_KEY_PATH`)."""

    github_webhook_secret: SecretStr | None = None
    """The secret GitHub signs webhook deliveries with (`GITHUB_WEBHOOK_SECRET`)."""

    github_api_url: AnyHttpUrl = AnyHttpUrl("https://api.github.com")
    """The REST API root (`GITHUB_API_URL`): GitHub Enterprise Server's `https://host/api/v3`."""

    github_token: SecretStr | None = None
    """A person's token (`GITHUB_TOKEN`), with which `tiebreak review` reads a pull request
    by its address, and with `--post` reviews it as that person; the App never uses it."""

    anthropic_api_key: SecretStr | None = None
    """The Anthropic API key (`ANTHROPIC_API_KEY`)."""

    anthropic_base_url: str | None = None
    """Another Messages API endpoint (`ANTHROPIC_BASE_URL`): a proxy, or a fake in tests."""

    tiebreak_provider: Provider = Provider.ANTHROPIC
    """Who serves the model (`TIEBREAK_PROVIDER`): `anthropic`, `bedrock` (Amazon Bedrock) or
    `vertex` (Google Vertex AI). On a cloud, its own credentials sign the calls: AWS's
    credential chain, or Google's application-default credentials."""

    aws_region: str | None = None
    """Bedrock's AWS region (`AWS_REGION`)."""

    aws_default_region: str | None = None
    """Bedrock's AWS region when `AWS_REGION` is unset (`AWS_DEFAULT_REGION`)."""

    anthropic_bedrock_base_url: str | None = None
    """Another Bedrock runtime endpoint (`ANTHROPIC_BEDROCK_BASE_URL`): a VPC endpoint, a
    proxy, or a fake in tests."""

    cloud_ml_region: str | None = None
    """Vertex AI's region (`CLOUD_ML_REGION`): `global`, `us-east5`, `europe-west1`, …"""

    anthropic_vertex_project_id: str | None = None
    """The Google Cloud project that calls Vertex AI (`ANTHROPIC_VERTEX_PROJECT_ID`)."""

    google_cloud_project: str | None = None
    """The project when `ANTHROPIC_VERTEX_PROJECT_ID` is unset (`GOOGLE_CLOUD_PROJECT`)."""

    anthropic_vertex_base_url: str | None = None
    """Another Vertex AI endpoint (`ANTHROPIC_VERTEX_BASE_URL`): a proxy, or a fake in tests."""

    redis_url: str | None = None
    """Redis for the queue and deduplication (`REDIS_URL`); `tiebreak serve` starts its own
    when unset."""

    public_url: AnyHttpUrl | None = None
    """Where this server is reachable (`PUBLIC_URL`), for links from check runs."""

    tiebreak_link_secret: SecretStr | None = None
    """The key that signs links to debate transcripts (`TIEBREAK_LINK_SECRET`); derived from
    `GITHUB_WEBHOOK_SECRET` when unset. The web server and the workers need the same one."""

    tiebreak_transcript_retention: int = Field(default=14, ge=0, le=365)
    """Days a review's debate transcript is kept, and its link valid
    (`TIEBREAK_TRANSCRIPT_RETENTION`); 0 keeps none."""

    tiebreak_data_dir: Path = Path(".tiebreak")
    """Where `tiebreak serve` keeps its embedded Redis, and workers (and `tiebreak review` of a
    pull request by its address) the repositories' snapshots they read (`TIEBREAK_DATA_DIR`)."""

    tiebreak_snapshot_cache_mb: int = Field(default=4096, ge=0, le=2**20)
    """MiB of disk the repositories' snapshots at a pull request's head take on each worker's
    disk, under `TIEBREAK_DATA_DIR/snapshots`, the least recently used evicted past it
    (`TIEBREAK_SNAPSHOT_CACHE_MB`); 0 downloads none, and the agents read the changed files
    alone. What a snapshot takes is counted in blocks of 4 KiB: one at least for each file,
    directory and link."""

    tiebreak_snapshot_max_mb: int = Field(default=1024, ge=1, le=2**20)
    """MiB of disk one repository's snapshot may take, counted as the cache's, at most the
    cache's size (`TIEBREAK_SNAPSHOT_MAX_MB`); a larger repository is reviewed from its
    changed files alone, as the summary says."""

    tiebreak_snapshot_cache_files: int = Field(default=400_000, ge=1, le=2**31)
    """Files, directories and links of the snapshots each worker's disk keeps in all, each an
    inode of the disk's, the least recently used evicted past it
    (`TIEBREAK_SNAPSHOT_CACHE_FILES`)."""

    tiebreak_snapshot_max_files: int = Field(default=100_000, ge=1, le=2**31)
    """Files, directories and links one repository's snapshot may hold, at most the cache's
    (`TIEBREAK_SNAPSHOT_MAX_FILES`); a larger repository is reviewed from its changed files
    alone, as the summary says."""

    tiebreak_daily_token_cap: int = Field(default=5_000_000, ge=0)
    """Billed tokens each installation may spend per UTC day, across all its reviews and
    commands (`TIEBREAK_DAILY_TOKEN_CAP`). When it is reached, no model is called until the
    next day."""

    tiebreak_model: str = Field(pattern=MODEL_ID)
    """The model every role runs on unless a repository's config chooses another
    (`TIEBREAK_MODEL`), as the provider names it. By default the same Claude model on every
    provider: `claude-sonnet-5-5`, on Bedrock the inference profile of the region's
    geography (`us.anthropic.claude-sonnet-5-5` in `us-east-1`)."""

    tiebreak_unit_concurrency: int = Field(default=8, ge=1, le=256)
    """Review units each worker process debates at a time (`TIEBREAK_UNIT_CONCURRENCY`)."""

    tiebreak_heartbeat: float = Field(default=30.0, ge=1.0, le=600.0)
    """Seconds a review's or a unit's heartbeat lives without renewal: a worker silent this
    long is taken for dead and its work picked up elsewhere (`TIEBREAK_HEARTBEAT`)."""

    tiebreak_janitor_every: int = Field(default=60, ge=1, le=60)
    """Seconds between the janitor's sweeps, a divisor of 60 (`TIEBREAK_JANITOR_EVERY`)."""

    tiebreak_webhook_buffer_mb: int = Field(default=64, ge=25, le=4096)
    """MiB that webhook bodies may hold at once in a web server process, from their first
    byte until their delivery is answered (`TIEBREAK_WEBHOOK_BUFFER_MB`); at least 25, so
    GitHub's largest delivery fits. A delivery that would go past it is answered 503 without
    being read."""

    tiebreak_webhook_read_timeout: float = Field(default=10.0, ge=1.0, le=60.0)
    """Seconds a webhook delivery's whole body has to arrive in once its headers have
    (`TIEBREAK_WEBHOOK_READ_TIMEOUT`); a slower one is answered 408 and its connection closed.
    GitHub itself gives up on a delivery after 10 seconds."""

    tiebreak_metrics_token: SecretStr | None = None
    """The bearer token `GET /metrics` requires (`TIEBREAK_METRICS_TOKEN`); unset, the
    endpoint is open (it shows counts only, nothing private)."""

    tiebreak_log_format: LogFormat = LogFormat.AUTO
    """`json`, `text`, or `auto`: JSON lines unless standard error is a terminal
    (`TIEBREAK_LOG_FORMAT`)."""

    tiebreak_log_level: LogLevel = LogLevel.INFO
    """The least severe log lines written (`TIEBREAK_LOG_LEVEL`): at `DEBUG`, the HTTP
    clients' own lines too."""

    @model_validator(mode="before")
    @classmethod
    def _provider_default_model(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("tiebreak_model"):
            return data
        provider = Provider(str(data.get("tiebreak_provider") or "anthropic").strip().lower())
        region = data.get("aws_region") or data.get("aws_default_region")
        return data | {"tiebreak_model": default_model(provider, region)}

    @model_validator(mode="after")
    def _snapshot_fits_cache(self) -> "Settings":
        if not self.tiebreak_snapshot_cache_mb:
            return self
        bounds = {
            "MB": (self.tiebreak_snapshot_max_mb, self.tiebreak_snapshot_cache_mb),
            "FILES": (self.tiebreak_snapshot_max_files, self.tiebreak_snapshot_cache_files),
        }
        for kind, (most, cache) in bounds.items():
            if most > cache:
                raise ValueError(
                    f"TIEBREAK_SNAPSHOT_MAX_{kind} ({most}) is larger than "
                    f"TIEBREAK_SNAPSHOT_CACHE_{kind} ({cache}), which must hold one snapshot "
                    "at least"
                )
        return self

    @model_validator(mode="after")
    def _model_fits_provider(self) -> "Settings":
        fault = model_fault(self.tiebreak_provider, self.tiebreak_model)
        if fault is not None:
            raise ValueError(f"TIEBREAK_MODEL: {fault}")
        return self

    @field_validator("tiebreak_provider", mode="before")
    @classmethod
    def _provider_in_any_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("tiebreak_log_format", mode="before")
    @classmethod
    def _format_in_any_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("tiebreak_log_level", mode="before")
    @classmethod
    def _level_in_any_case(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("tiebreak_janitor_every")
    @classmethod
    def _divides_a_minute(cls, value: int) -> int:
        if 60 % value:
            raise ValueError("must divide 60 (the janitor runs at fixed seconds of each minute)")
        return value

    @field_validator(*_GUESSED)
    @classmethod
    def _secret_is_long_enough(
        cls, value: SecretStr | None, info: ValidationInfo
    ) -> SecretStr | None:
        if value is None:
            return value
        name, secret = str(info.field_name), value.get_secret_value()
        if not secret.strip():
            raise ValueError(f"{name.upper()} is empty")
        if len(secret) < MIN_SECRET_CHARS:
            raise ValueError(
                f"{name.upper()} has {len(secret)} characters: one shorter than "
                f"{MIN_SECRET_CHARS} can be guessed, and with it anyone can {_GUESSED[name]}; "
                "use a random one (`openssl rand -hex 32` prints one)"
            )
        return value

    def link_key(self) -> bytes | None:
        """The key of transcript links, or None when this process cannot sign any."""
        if self.tiebreak_link_secret is not None:
            return self.tiebreak_link_secret.get_secret_value().encode()
        if self.github_webhook_secret is None:
            return None
        secret = self.github_webhook_secret.get_secret_value().encode()
        # Derived, so that a link's signature says nothing about the webhook secret.
        return hmac.digest(secret, b"tiebreak transcript links", "sha256")

    def private_key(self) -> str:
        """The App's private key, from the variable or the file."""
        if self.github_private_key is not None:
            return self.github_private_key.get_secret_value()
        if self.github_private_key_path is None:
            raise SettingsError("GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH is not set")
        try:
            return self.github_private_key_path.read_text()
        except OSError as exc:
            raise SettingsError(f"cannot read GITHUB_PRIVATE_KEY_PATH: {exc}") from exc

    def require(self, *, web: bool = False, worker: bool = False) -> None:
        """Raise :class:`MissingSettings` naming every setting this process needs but lacks."""
        missing = []
        if web and self.github_webhook_secret is None:
            missing.append("GITHUB_WEBHOOK_SECRET")
        if worker:
            if self.github_app_id is None:
                missing.append("GITHUB_APP_ID")
            if self.github_private_key is None and self.github_private_key_path is None:
                missing.append("GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH")
            missing.extend(self.model_missing())
        if missing:
            raise MissingSettings(f"missing settings: {', '.join(missing)}")

    def model_missing(self) -> list[str]:
        """The settings the model's provider needs but lacks (credentials aside: only a call
        can tell whether a cloud's credential chain finds any)."""
        if self.tiebreak_provider is Provider.ANTHROPIC and self.anthropic_api_key is None:
            return ["ANTHROPIC_API_KEY"]
        return self.cloud().missing()

    def cloud(self) -> Cloud:
        """Where the model is called, and as whom, as far as settings say (credentials aside)."""
        if self.tiebreak_provider is Provider.BEDROCK:
            region = self.aws_region or self.aws_default_region
            return Cloud(self.tiebreak_provider, region=region)
        if self.tiebreak_provider is Provider.VERTEX:
            project = self.anthropic_vertex_project_id or self.google_cloud_project
            return Cloud(self.tiebreak_provider, region=self.cloud_ml_region, project=project)
        return Cloud()

    def claude(
        self, models: "RoleModels | None" = None, *, decides_at_first: bool = False
    ) -> "ClaudeLLM":
        """The model client these settings describe, every role on `models` (by default on
        `TIEBREAK_MODEL`); `decides_at_first` for a command a person waits on
        (:class:`agents.models.claude.ClaudeLLM`). Makes no call: missing credentials fail the
        first one."""
        # The model's SDKs take a large part of a second to import: the commands that read the
        # settings and call no model (`tiebreak status`) do not pay for them.
        from agents.models.claude import ClaudeLLM, RoleModels

        default = self.tiebreak_model
        base_url = {
            Provider.ANTHROPIC: self.anthropic_base_url,
            Provider.BEDROCK: self.anthropic_bedrock_base_url,
            Provider.VERTEX: self.anthropic_vertex_base_url,
        }[self.tiebreak_provider]
        key = self.anthropic_api_key
        return ClaudeLLM.connect(
            cloud=self.cloud(),
            api_key=None if key is None else key.get_secret_value(),
            base_url=base_url,
            models=models or RoleModels(tester=default, coder=default, arbiter=default),
            decides_at_first=decides_at_first,
        )


ENV_FILE = ".env"
ENV_FILE_VARIABLE = "TIEBREAK_ENV_FILE"
"""Names another dotenv file than `.env`; set and empty, no file is read."""


def env_file() -> Path | None:
    """The dotenv file Tiebreak's commands read, and `tiebreak setup` writes."""
    name = os.environ.get(ENV_FILE_VARIABLE, ENV_FILE)
    return Path(name) if name else None


def settings_problem(error: ValidationError) -> str:
    """What is wrong with the settings, as a person fixes it: each variable named, with what
    is wrong with it (never its value, which may be a secret)."""
    said = []
    for problem in error.errors(include_url=False, include_input=False):
        message = str(problem["msg"]).removeprefix("Value error, ")
        named = [str(part).upper() for part in problem["loc"] if isinstance(part, str)]
        if named and named[0] not in message:
            message = f"{named[0]}: {message}"
        said.append(message)
    return "; ".join(said)


@functools.cache
def get_settings() -> Settings:
    """The process's settings: the environment, then the dotenv file for what it leaves unset."""
    return Settings(_env_file=env_file())
