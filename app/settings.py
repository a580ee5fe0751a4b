"""Tiebreak's settings, read from the environment once, through :func:`get_settings`.

Nothing reads the environment at import time; tests build `Settings` directly.
"""

import functools

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Process-wide settings. Secrets are `SecretStr` so they never print."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    anthropic_api_key: SecretStr | None = None
    """The Anthropic API key (`ANTHROPIC_API_KEY`)."""

    anthropic_base_url: str | None = None
    """Another Messages API endpoint (`ANTHROPIC_BASE_URL`): a proxy, or a fake in tests."""


@functools.cache
def get_settings() -> Settings:
    return Settings()
