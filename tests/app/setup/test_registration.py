"""`tiebreak setup`'s page and flow, in process, against the fake GitHub over real HTTP.

The test plays the browser: it loads the page (at the address the command prints, keeping the
cookie the page sets), posts its form to the fake GitHub's "new App" page, and follows GitHub's
redirect back to the page's callback. Another `TestClient` of the same page is another browser.
"""

import asyncio
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from dotenv import dotenv_values
from fastapi.testclient import TestClient
from httpx2 import Response

from app.events import PullKey
from app.github.client import GitHubApp
from app.settings import Settings
from app.setup.manifest import load_manifest
from app.setup.page import create_registration_app
from app.setup.registration import FLOW_LIFETIME, Registration, SetupOptions
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.fakes.loopback import free_port
from tests.kits.setup_flow import (
    APP_ID,
    CONVERSIONS,
    EVENTS,
    PERMISSIONS,
    PUBLIC_URL,
    Browser,
    Form,
    parse_form,
)

PAGE = "http://127.0.0.1:9"
"""The page's address, as `tiebreak setup` prints it."""
REDIRECT_URL = f"{PAGE}/callback"


@pytest.fixture
def fake(key: AppKey) -> Iterator[FakeGitHub]:
    with FakeGitHub(app_id=APP_ID, public_key_pem=key.public_pem) as github:
        github.allow_registration(key.private_pem)
        yield github


class SetupPage:
    """The page of one `tiebreak setup`, and what it told the terminal."""

    def __init__(
        self,
        fake: FakeGitHub,
        env_file: Path,
        *,
        org: str | None = None,
        force: bool = False,
        api_url: str | None = None,
    ) -> None:
        self.now = 1000.0
        self.flow = Registration(
            SetupOptions(
                public_url=PUBLIC_URL,
                github_url=fake.base_url,
                api_url=api_url or fake.base_url,
                env_file=env_file,
                org=org,
                force=force,
            ),
            load_manifest(),
            REDIRECT_URL,
            clock=lambda: self.now,
        )
        self.stopped = 0
        self.reports: list[str] = []
        self.app = create_registration_app(self.flow, self._stop, self.reports.append)
        self.client = self.browser()
        """The browser of the user who ran the command."""

    def browser(self) -> TestClient:
        """A browser of its own (its own cookies), on the page's address."""
        return TestClient(self.app, base_url=PAGE)

    def _stop(self) -> None:
        self.stopped += 1

    def form(self) -> Form:
        page = self.client.get("/")
        assert page.status_code == 200
        return parse_form(page.text)

    def register(self) -> tuple[str, str]:
        """Press the button on GitHub: the code and state GitHub redirects back with."""
        return on_github(self.form())

    def callback(self, code: str, state: str) -> Response:
        return self.client.get("/callback", params={"code": code, "state": state})


def on_github(form: Form) -> tuple[str, str]:
    """Post `form` to GitHub and confirm: the code and state GitHub redirects back with."""
    status, _, headers = Browser().submit(form, follow=False)
    assert status == 302
    location = headers["location"]
    assert location.startswith(REDIRECT_URL + "?")
    query = parse_qs(urlsplit(location).query)
    return query["code"][0], query["state"][0]


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    return tmp_path / ".env"


def conversions(fake: FakeGitHub) -> list[int]:
    return [r.status for r in fake.requests_to("POST", CONVERSIONS)]


def test_the_page_posts_app_yml_to_githubs_new_app_form(fake: FakeGitHub, env_file: Path) -> None:
    page = SetupPage(fake, env_file)

    response = page.client.get("/")
    form = parse_form(response.text)

    action = urlsplit(form.action)
    assert f"{action.scheme}://{action.netloc}{action.path}" == f"{fake.base_url}/settings/apps/new"
    assert len(parse_qs(action.query)["state"][0]) >= 43
    assert form.method == "post"
    manifest = form.manifest
    assert manifest["name"] == "Tiebreak"
    assert manifest["default_events"] == EVENTS
    assert manifest["default_permissions"] == PERMISSIONS
    assert manifest["hook_attributes"] == {
        "url": f"{PUBLIC_URL}/api/github/webhooks",
        "active": True,
    }
    assert manifest["redirect_url"] == REDIRECT_URL
    assert manifest["url"] == PUBLIC_URL
    assert manifest["public"] is False
    # The form may go to GitHub only, nothing on the page runs, and only its origin leaves.
    policy = response.headers["content-security-policy"]
    assert f"form-action {fake.base_url};" in policy
    assert "default-src 'none'" in policy
    assert response.headers["referrer-policy"] == "strict-origin"


def test_every_visit_gets_a_state_of_its_own(fake: FakeGitHub, env_file: Path) -> None:
    page = SetupPage(fake, env_file)

    states = {parse_qs(urlsplit(page.form().action).query)["state"][0] for _ in range(3)}

    assert len(states) == 3


def test_an_organizations_app_is_registered_on_its_page(fake: FakeGitHub, env_file: Path) -> None:
    page = SetupPage(fake, env_file, org="acme")

    form = page.form()
    Browser().submit(form, follow=False)

    assert urlsplit(form.action).path == "/organizations/acme/settings/apps/new"
    (registered,) = fake.registered_apps()
    assert registered.org == "acme"


def test_the_redirect_writes_the_apps_credentials_for_its_owner_only(
    fake: FakeGitHub, env_file: Path, key: AppKey
) -> None:
    page = SetupPage(fake, env_file)

    code, state = page.register()
    done = page.callback(code, state)

    assert done.status_code == 200
    assert f'href="{fake.base_url}/apps/tiebreak/installations/new"' in done.text
    # The workflow that runs findings' tests in the repository's Actions, as shipped.
    assert "run-name: Tiebreak ${{ inputs.token }}" in done.text
    assert "printf &#39;%s&#39; &#34;$TIEBREAK_TEST_CONTENT&#34;" in done.text
    assert done.headers["referrer-policy"] == "no-referrer"  # its address holds the code
    assert page.stopped == 1
    assert page.reports == []
    # GitHub got the page's manifest, and one request for the code, which it answered.
    (registered,) = fake.registered_apps()
    assert registered.manifest["default_events"] == EVENTS
    assert registered.conversions == 1
    assert conversions(fake) == [201]
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert dotenv_values(env_file) == {
        "GITHUB_APP_ID": str(APP_ID),
        "GITHUB_WEBHOOK_SECRET": fake.registration_webhook_secret,
        "GITHUB_PRIVATE_KEY": key.private_pem,
        "PUBLIC_URL": PUBLIC_URL,
        "GITHUB_API_URL": fake.base_url,
    }
    # Tiebreak reads the file as it is, and the App's key it holds works on GitHub.
    settings = Settings(_env_file=env_file)
    assert settings.github_app_id == APP_ID
    fake.add_installation(7, repos=["octo/app"])
    fake.set_permission("octo/app", "mona", "write")
    github = GitHubApp(APP_ID, settings.private_key(), str(settings.github_api_url), retry=False)
    pull = PullKey(installation_id=7, owner="octo", repo="app", number=1)
    assert asyncio.run(github.installation(7).permission(pull, "mona")) == "write"


def test_a_redirect_with_a_state_the_page_never_gave_is_refused(
    fake: FakeGitHub, env_file: Path
) -> None:
    page = SetupPage(fake, env_file)
    code, state = page.register()

    forged = page.callback(code, "forged-" + state)

    assert forged.status_code == 403
    assert "does not carry a state this page handed out" in forged.text
    assert conversions(fake) == []
    assert not env_file.exists()
    assert page.stopped == 0
    assert len(page.reports) == 1
    # The forgery spent nothing: the real redirect still works.
    assert page.callback(code, state).status_code == 200


def test_a_state_works_once(fake: FakeGitHub, env_file: Path) -> None:
    page = SetupPage(fake, env_file, force=True)
    code, state = page.register()
    assert page.callback(code, state).status_code == 200
    written = env_file.read_text()

    again = page.callback(code, state)

    assert again.status_code == 403
    assert conversions(fake) == [201]
    assert env_file.read_text() == written


def test_a_state_older_than_the_flows_hour_is_refused(fake: FakeGitHub, env_file: Path) -> None:
    page = SetupPage(fake, env_file)
    code, state = page.register()

    page.now += FLOW_LIFETIME + 1
    late = page.callback(code, state)

    assert late.status_code == 403
    assert conversions(fake) == []
    assert not env_file.exists()


def test_a_code_github_does_not_know_is_a_clear_error(fake: FakeGitHub, env_file: Path) -> None:
    page = SetupPage(fake, env_file)
    _, state = page.register()

    refused = page.callback("0" * 40, state)

    assert refused.status_code == 400
    assert "GitHub refused the code (404)" in refused.text
    assert "within an hour" in refused.text
    assert conversions(fake) == [404]
    assert not env_file.exists()
    assert page.stopped == 0
    assert page.reports == [page.reports[0]]
    assert "GitHub refused the code" in page.reports[0]


def test_an_expired_code_is_a_clear_error(fake: FakeGitHub, env_file: Path) -> None:
    page = SetupPage(fake, env_file)
    code, state = page.register()

    fake.expire_manifest_codes()
    refused = page.callback(code, state)

    assert refused.status_code == 400
    assert "GitHub refused the code (404)" in refused.text
    assert not env_file.exists()


def test_a_code_that_is_not_githubs_never_reaches_github(fake: FakeGitHub, env_file: Path) -> None:
    page = SetupPage(fake, env_file)
    _, state = page.register()

    refused = page.callback("../../app", state)

    assert refused.status_code == 400
    assert conversions(fake) == []
    assert not env_file.exists()


def test_an_existing_file_is_left_alone_and_the_code_kept(fake: FakeGitHub, env_file: Path) -> None:
    env_file.write_text("KEEP=1\n")
    page = SetupPage(fake, env_file)
    code, state = page.register()

    refused = page.callback(code, state)

    assert refused.status_code == 409
    assert "never overwrites it without --force" in refused.text
    assert env_file.read_text() == "KEEP=1\n"
    assert conversions(fake) == []
    # Moved away, the same redirect (a reload) finishes the job.
    env_file.unlink()
    assert page.callback(code, state).status_code == 200
    assert "GITHUB_APP_ID" in dotenv_values(env_file)


def test_force_replaces_the_file_with_an_owner_only_one(fake: FakeGitHub, env_file: Path) -> None:
    env_file.write_text("OLD=1\n")
    env_file.chmod(0o644)
    page = SetupPage(fake, env_file, force=True)

    assert page.callback(*page.register()).status_code == 200

    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert "OLD" not in dotenv_values(env_file)
    assert os.listdir(env_file.parent) == [".env"]


def test_an_unreachable_github_keeps_the_state_for_a_retry(
    fake: FakeGitHub, env_file: Path
) -> None:
    page = SetupPage(fake, env_file, api_url=f"http://127.0.0.1:{free_port()}")
    code, state = page.register()

    first = page.callback(code, state)
    second = page.callback(code, state)

    assert (first.status_code, second.status_code) == (502, 502)
    assert "reload this page to try again" in first.text
    assert not env_file.exists()


def test_the_page_binds_its_state_to_the_browser_with_a_fresh_cookie(
    fake: FakeGitHub, env_file: Path
) -> None:
    page = SetupPage(fake, env_file)

    cookies = [page.client.get("/").headers["set-cookie"] for _ in range(2)]

    for cookie in cookies:
        name_value, *attributes = [part.strip().lower() for part in cookie.split(";")]
        assert name_value.startswith("tiebreak_setup=")
        assert len(name_value.partition("=")[2]) >= 43
        # Not readable by a script, sent with GitHub's top-level redirect back, for the whole
        # page, and over plain http (the page is on 127.0.0.1).
        assert {"httponly", "samesite=lax", "path=/"} <= set(attributes)
        assert "secure" not in attributes
    assert cookies[0].split(";")[0] != cookies[1].split(";")[0]


def test_a_state_fetched_by_another_browser_is_refused_and_nothing_is_written(
    fake: FakeGitHub, env_file: Path
) -> None:
    page = SetupPage(fake, env_file)
    page.form()  # the user opened the page
    # Someone else (another user of the machine) fetches the page too, registers an App of
    # their own with its state, and sends the user's browser their App's redirect.
    attackers_code, attackers_state = on_github(parse_form(page.browser().get("/").text))

    refused = page.callback(attackers_code, attackers_state)

    assert refused.status_code == 403
    assert "did not come back to the browser this page gave its state to" in refused.text
    assert "Registered" not in refused.text
    assert "installations/new" not in refused.text
    assert conversions(fake) == []
    (attackers_app,) = fake.registered_apps()
    assert attackers_app.conversions == 0
    assert not env_file.exists()
    assert page.stopped == 0
    (report,) = page.reports
    assert "did not come back to the browser this page gave its state to" in report
    assert "Nothing was done" in report
    # The user's own registration still goes through.
    assert page.callback(*page.register()).status_code == 200


def test_a_redirect_without_the_pages_cookie_is_refused_and_spends_nothing(
    fake: FakeGitHub, env_file: Path
) -> None:
    page = SetupPage(fake, env_file)
    code, state = page.register()

    refused = page.browser().get("/callback", params={"code": code, "state": state})

    assert refused.status_code == 403
    assert "its cookie is missing or different" in refused.text
    assert conversions(fake) == []
    assert not env_file.exists()
    assert len(page.reports) == 1
    # The browser that opened the page finishes with the same redirect.
    assert page.callback(code, state).status_code == 200


def test_a_second_cookie_set_by_another_page_on_the_loopback_is_refused(
    fake: FakeGitHub, env_file: Path
) -> None:
    # Cookies do not keep to a port: a page on another port of 127.0.0.1 can set one of this
    # name. A redirect that carries two is not trusted, whichever is the page's.
    page = SetupPage(fake, env_file)
    code, state = page.register()
    mine = page.client.cookies["tiebreak_setup"]
    intruder = page.browser()
    intruder.get("/")
    theirs = intruder.cookies["tiebreak_setup"]

    refused = [
        page.browser().get(
            "/callback",
            params={"code": code, "state": state},
            headers={"cookie": f"tiebreak_setup={first}; tiebreak_setup={second}"},
        )
        for first, second in [(theirs, mine), (mine, theirs)]
    ]

    assert [r.status_code for r in refused] == [403, 403]
    assert conversions(fake) == []
    assert not env_file.exists()


@pytest.mark.parametrize(
    "host",
    ["rebound.attacker.example:9", "rebound.attacker.example", "localhost:9", "127.0.0.1:8000"],
)
def test_a_foreign_host_gets_no_form(fake: FakeGitHub, env_file: Path, host: str) -> None:
    # DNS rebinding: a page of another site whose name now resolves to 127.0.0.1 asks for the
    # page with its own name as the Host.
    page = SetupPage(fake, env_file)

    response = page.client.get("/", headers={"host": host})

    assert response.status_code == 400
    assert "<form" not in response.text
    assert "state" not in response.text
    assert "settings/apps/new" not in response.text
    assert "set-cookie" not in response.headers
    assert not page.client.cookies
    (report,) = page.reports
    assert f"refused a request for {host!r}" in report
    assert f"answers only at {PAGE}/" in report
    assert not env_file.exists()


def test_a_foreign_host_cannot_finish_a_registration(fake: FakeGitHub, env_file: Path) -> None:
    page = SetupPage(fake, env_file)
    code, state = page.register()

    refused = page.client.get(
        "/callback",
        params={"code": code, "state": state},
        headers={"host": "rebound.attacker.example:9"},
    )

    assert refused.status_code == 400
    assert "Registered" not in refused.text
    assert conversions(fake) == []
    assert not env_file.exists()
    assert page.stopped == 0
    assert "refused a request for 'rebound.attacker.example:9'" in page.reports[0]
    # At the page's own address, the same redirect finishes.
    assert page.callback(code, state).status_code == 200
