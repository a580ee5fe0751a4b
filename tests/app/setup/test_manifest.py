"""`app.yml`, the App's manifest: least privilege, and exactly the events Tiebreak handles."""

import pytest
import yaml
from pydantic import SecretStr, ValidationError
from starlette.routing import Match

from app.cli.config_docs import ROOT
from app.settings import Settings
from app.setup.manifest import (
    MANIFEST_FILE,
    api_url_for,
    base_url,
    install_url,
    is_private,
    load_manifest,
    manifest_text,
    registration_url,
)
from app.web.handlers import ROUTER
from app.web.server import create_app
from tests.kits.setup_flow import EVENTS, PERMISSIONS

DELIVERED_TO_EVERY_APP = {"installation", "installation_repositories"}
"""Events GitHub sends every App, with no subscription (and none possible)."""


def test_app_yml_asks_for_exactly_the_issues_events_and_permissions() -> None:
    raw = yaml.safe_load((ROOT / MANIFEST_FILE).read_text(encoding="utf-8"))

    assert raw["default_events"] == EVENTS
    assert raw["default_permissions"] == PERMISSIONS
    assert raw["public"] is False
    assert manifest_text() == (ROOT / MANIFEST_FILE).read_text(encoding="utf-8")


def test_the_app_subscribes_to_exactly_the_events_it_handles() -> None:
    manifest = load_manifest()

    assert set(manifest.default_events) | DELIVERED_TO_EVERY_APP == ROUTER.events()


def test_the_webhook_goes_to_the_servers_endpoint() -> None:
    app = create_app(
        Settings(github_webhook_secret=SecretStr("a-webhook-secret-unused-here")),
        "redis://127.0.0.1:1",
    )
    scope = {"type": "http", "method": "POST", "path": load_manifest().webhook_path}

    assert any(route.matches(scope)[0] is Match.FULL for route in app.routes)


def test_a_manifest_with_a_misspelt_key_is_refused() -> None:
    text = manifest_text().replace("default_permissions:", "default_permission:")

    with pytest.raises(ValidationError, match="default_permission"):
        load_manifest(text)


def test_the_deployments_urls_complete_the_manifest() -> None:
    manifest = load_manifest().for_deployment(
        "https://example.com/tiebreak/", "http://127.0.0.1:5000/callback"
    )

    assert manifest["url"] == "https://example.com/tiebreak"
    assert manifest["hook_attributes"]["url"] == "https://example.com/tiebreak/api/github/webhooks"
    assert manifest["redirect_url"] == "http://127.0.0.1:5000/callback"


@pytest.mark.parametrize(
    ("github", "org", "expected"),
    [
        ("https://github.com", None, "https://github.com/settings/apps/new?state=s+1"),
        (
            "https://ghe.example.com/",
            "acme",
            "https://ghe.example.com/organizations/acme/settings/apps/new?state=s+1",
        ),
    ],
)
def test_the_form_goes_to_the_owners_new_app_page(
    github: str, org: str | None, expected: str
) -> None:
    assert registration_url(github, "s 1", org) == expected


@pytest.mark.parametrize(
    ("github", "api"),
    [
        ("https://github.com", "https://api.github.com"),
        ("https://github.com/", "https://api.github.com"),
        ("https://ghe.example.com", "https://ghe.example.com/api/v3"),
    ],
)
def test_the_api_of_each_github(github: str, api: str) -> None:
    assert api_url_for(github) == api


def test_the_app_is_installed_from_its_page() -> None:
    assert (
        install_url("https://github.com/apps/tb/") == "https://github.com/apps/tb/installations/new"
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [("tiebreak.example.com", "not an http"), ("https://h/?a=1", "query"), ("ftp://h", "http")],
)
def test_a_public_url_must_be_a_plain_web_address(value: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        base_url(value)


@pytest.mark.parametrize(
    ("url", "private"),
    [
        ("http://localhost:8000", True),
        ("http://127.0.0.1", True),
        ("http://10.1.2.3", True),
        ("http://192.168.1.5:8000", True),
        ("https://tiebreak.example.com", False),
        ("https://203.0.113.9", True),  # documentation range: private to the ipaddress module
        ("https://8.8.8.8", False),
    ],
)
def test_github_cannot_reach_a_private_address(url: str, private: bool) -> None:
    assert is_private(url) is private
