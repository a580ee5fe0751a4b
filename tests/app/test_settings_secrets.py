"""Tiebreak's own secrets (the webhook secret, the links' key, the metrics token): refused
when short enough to guess, and never shown in the error that refuses them."""

from typing import Any

import pytest
from pydantic import ValidationError

from app.settings import Settings


@pytest.mark.parametrize(
    ("setting", "what"),
    [
        ("github_webhook_secret", "forge GitHub's deliveries"),
        ("tiebreak_link_secret", "sign links to the transcripts"),
        ("tiebreak_metrics_token", "read the metrics"),
    ],
)
def test_a_secret_short_enough_to_guess_is_refused_naming_what_it_guards(
    setting: str, what: str
) -> None:
    short: dict[str, Any] = {setting: "fifteen-chars!!"}
    with pytest.raises(ValidationError) as refused:
        Settings(**short)

    (error,) = refused.value.errors()
    assert error["msg"] == (
        f"Value error, {setting.upper()} has 15 characters: one shorter than 16 can be "
        f"guessed, and with it anyone can {what}; use a random one (`openssl rand -hex 32` "
        "prints one)"
    )
    assert "fifteen" not in str(refused.value)
    long_enough: dict[str, Any] = {setting: "sixteen-chars!!!"}
    assert getattr(Settings(**long_enough), setting).get_secret_value() == "sixteen-chars!!!"
