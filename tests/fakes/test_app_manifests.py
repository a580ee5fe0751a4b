"""The fake GitHub's manifest flow answers as GitHub does: the form, the redirect, the code."""

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from tests.fakes.github_api import AppKey, FakeGitHub, new_app_key

APP_ID = 99
MANIFEST = {
    "name": "Octoapp",
    "url": "https://example.com",
    "hook_attributes": {"url": "https://example.com/github/events"},
    "redirect_url": "https://example.com/redirect",
    "public": False,
    "default_permissions": {"issues": "write", "checks": "write"},
    "default_events": ["issues", "check_run"],
}


class _Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@pytest.fixture(scope="module")
def key() -> AppKey:
    return new_app_key()


@pytest.fixture
def fake(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as github:
        github.allow_registration(key.private_pem, webhook_secret="whsec")
        yield github


def post(url: str, *, form: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    data = urlencode(form).encode() if form is not None else b""
    request = urllib.request.Request(url, data=data, method="POST")
    if form is not None:
        request.add_header("content-type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.build_opener(_Stay()).open(request, timeout=10) as response:
            return int(response.status), dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return int(error.code), dict(error.headers), error.read().decode()


def register(fake: FakeGitHub, manifest: Any, path: str = "/settings/apps/new?state=abc") -> Any:
    return post(fake.base_url + path, form={"manifest": json.dumps(manifest)})


def test_the_form_registers_the_app_and_redirects_with_a_code_and_the_state(
    fake: FakeGitHub,
) -> None:
    status, headers, _ = register(fake, MANIFEST)

    assert status == 302
    location = urlsplit(headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == MANIFEST["redirect_url"]
    query = parse_qs(location.query)
    assert query["state"] == ["abc"]
    (app,) = fake.registered_apps()
    assert (app.manifest, app.org, app.state, app.code) == (MANIFEST, None, "abc", query["code"][0])


def test_an_organizations_form_registers_its_app(fake: FakeGitHub) -> None:
    register(fake, MANIFEST, "/organizations/acme/settings/apps/new")

    (app,) = fake.registered_apps()
    assert (app.org, app.state) == ("acme", None)


def test_a_code_is_traded_once_for_the_apps_credentials(fake: FakeGitHub, key: AppKey) -> None:
    _, headers, _ = register(fake, MANIFEST)
    code = parse_qs(urlsplit(headers["location"]).query)["code"][0]

    first = post(f"{fake.base_url}/app-manifests/{code}/conversions")
    second = post(f"{fake.base_url}/app-manifests/{code}/conversions")

    assert (first[0], second[0]) == (201, 404)
    config = json.loads(first[2])
    assert (config["id"], config["slug"], config["pem"]) == (APP_ID, "octoapp", key.private_pem)
    assert config["webhook_secret"] == "whsec"
    assert config["html_url"] == f"{fake.base_url}/apps/octoapp"
    assert config["permissions"] == {"metadata": "read", "issues": "write", "checks": "write"}
    assert config["events"] == ["issues", "check_run"]


def test_a_code_expires_after_an_hour(fake: FakeGitHub) -> None:
    _, headers, _ = register(fake, MANIFEST)
    code = parse_qs(urlsplit(headers["location"]).query)["code"][0]

    fake.expire_manifest_codes()

    assert post(f"{fake.base_url}/app-manifests/{code}/conversions")[0] == 404


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        ("not json", "not JSON"),
        ({**MANIFEST, "url": None}, "url is required"),
        ({**MANIFEST, "hook_attributes": {"active": True}}, "hook_attributes.url"),
        ({**MANIFEST, "name": "x" * 35}, "name is too long"),
        ({**MANIFEST, "default_permissions": {"issues": "admin"}}, "read or write"),
    ],
)
def test_a_manifest_github_would_refuse_registers_nothing(
    fake: FakeGitHub, manifest: Any, problem: str
) -> None:
    form = {"manifest": manifest if isinstance(manifest, str) else json.dumps(manifest)}
    status, _, page = post(fake.base_url + "/settings/apps/new", form=form)

    assert status == 422
    assert problem in page
    assert fake.registered_apps() == []


def test_the_api_takes_no_form(fake: FakeGitHub) -> None:
    status, _, body = post(f"{fake.base_url}/app-manifests/x/conversions", form={"a": "b"})

    assert status == 400
    assert "Problems parsing JSON" in body


def test_without_a_key_to_hand_out_nothing_is_registered(key: AppKey) -> None:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as fake:
        status, _, _ = register(fake, MANIFEST)

    assert status == 403
    assert fake.registered_apps() == []
