"""The transcript page of a real review: linked from the check run, private, escaped, kept
for the retention period only."""

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from fastapi.testclient import TestClient
from redis.asyncio import Redis as AsyncRedis

from agents.models.scripted import ScriptedLLM, by_role
from agents.protocol import Reproduction
from agents.review import Review
from agents.verification import Run, Verification
from app.events import CommentRef, HearingRequest
from app.links import TranscriptLinks, links_for
from app.settings import Settings
from app.store.keys import DAY
from app.store.transcripts import TranscriptRecord, TranscriptStore
from app.web.server import create_app
from tests.fakes.github_api import AppKey, FakeGitHub
from tests.kits.review import STUBBORN, agreed, asked, run_review, run_worker, summary
from tests.kits.store import Store
from tests.kits.transcript import PWNED, hostile_record, panel_record, sample_record
from tests.scenarios.debates import (
    LOG_FIX,
    LOG_LINE,
    PAYMENTS,
    evaluations,
    force_fix,
    reject,
    rulings,
)
from tests.scenarios.panels import CORRECTNESS, KEPT, PERFORMANCE, REPEATED, SECURITY, TIE_FIXED
from tests.scenarios.reviews import NUMBER, REF, REPO
from tests.scenarios.webhooks import SECRET

PUBLIC_URL = "https://tiebreak.example.com"
SETTINGS = Settings(github_webhook_secret=SECRET, public_url=PUBLIC_URL)


def linking(settings: Settings = SETTINGS) -> dict[str, Any]:
    """The worker's dependencies that make transcripts and their links."""
    return {"settings": settings, "links": links_for(settings)}


@pytest.fixture
def web(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(SETTINGS, redis_url)) as client:
        yield client


def details_url(github: FakeGitHub) -> str:
    (check,) = github.check_runs(REPO)
    assert check.details_url is not None
    return check.details_url


def local(url: str) -> str:
    """The path and query of a link to the public server, to ask the test server for."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def escaped(line: str) -> str:
    return line.replace("'", "&#39;")


def text(html: str) -> str:
    """The page's text, roughly as a reader sees it (markup dropped, entities kept)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


async def page_of(record: TranscriptRecord, redis_url: str, web: TestClient) -> str:
    """The transcript page of `record`, kept in the store and opened with a valid link."""
    redis = AsyncRedis.from_url(redis_url)
    try:
        await TranscriptStore(redis, 1).save(record)
    finally:
        await redis.aclose()
    links = links_for(SETTINGS)
    assert links is not None
    url = links.url(record.run_id)
    assert url is not None
    page = web.get(local(url))
    assert page.status_code == 200
    return page.text


async def test_a_finished_review_links_its_transcript_from_the_check_run_and_the_summary(
    github: FakeGitHub, key: AppKey, redis_url: str, web: TestClient
) -> None:
    await run_review(github, key, redis_url, agreed(), **linking())

    url = details_url(github)
    assert url.startswith(f"{PUBLIC_URL}/runs/")
    assert f"[The debate, message by message]({url})" in summary(github)

    page = web.get(local(url))

    assert page.status_code == 200
    shown = text(page.text)
    assert f"{REPO}#{NUMBER}" in shown
    assert "`log` is not defined anywhere: every refund raises NameError." in shown
    assert "unanimous" in shown
    assert "fixed" in shown
    # The coder's patch, as a diff against the line it replaces.
    assert '<span class="del">-    log(payment.id, amount)</span>' in page.text
    assert f'<span class="add">+{escaped(LOG_LINE)}</span>' in page.text
    # The budget of the edge the debate used, charted; the arbiter's, never called, listed.
    assert page.text.count("<polyline") == 2 * 1
    assert "<strong>coder↔tester</strong>:" in page.text
    assert "Not used: arbiter↔coder, arbiter↔tester." in shown
    # Its spend is the check run's.
    (check,) = github.check_runs(REPO)
    spend = re.search(
        r"\*\*Spend\*\*: ([\d,]+) billed tokens of this review's ([\d,]+) ceiling",
        check.output["summary"],
    )
    assert spend is not None
    assert f"{spend.group(1)} of {spend.group(2)} billed tokens" in shown


async def test_the_page_opens_only_with_a_valid_link(
    github: FakeGitHub, key: AppKey, redis_url: str, web: TestClient
) -> None:
    await run_review(github, key, redis_url, agreed(), **linking())
    url = details_url(github)
    path, token = local(url).split("?token=")
    links = links_for(SETTINGS)
    assert links is not None
    expired = TranscriptLinks(
        SETTINGS.link_key() or b"", PUBLIC_URL, links.ttl, clock=lambda: 1_000_000_000.0
    )
    other = TranscriptLinks(b"another server's key", PUBLIC_URL, links.ttl)
    run_id = unquote(path.removeprefix("/runs/"))
    assert links.valid(run_id, token)  # the forgeries below differ from it in one way each

    refused = [
        web.get(path),
        web.get(f"{path}?token="),
        web.get(f"{path}?token={token[:-2]}"),
        web.get(f"{path}?token={other.token(run_id)}"),
        web.get(f"{path}?token={expired.token(run_id)}"),
        web.get(f"/runs/another-run?token={token}"),
        web.get(f"/runs/another-run?token={links.token('another-run')}"),  # valid, no transcript
    ]

    assert [r.status_code for r in refused] == [404] * len(refused)
    assert len({r.text for r in refused}) == 1, "a refusal must not say why"
    assert "Not found" in refused[0].text
    assert web.get(f"{path}?token={token}").status_code == 200


async def test_the_page_is_private_and_runs_no_script(
    github: FakeGitHub, key: AppKey, redis_url: str, web: TestClient
) -> None:
    await run_review(github, key, redis_url, agreed(), **linking())

    page = web.get(local(details_url(github)))

    headers = page.headers
    assert "default-src 'none'" in headers["content-security-policy"]
    assert "script-src" not in headers["content-security-policy"]  # falls back to 'none'
    assert headers["referrer-policy"] == "no-referrer"  # the token must not leak onward
    assert headers["cache-control"] == "private, no-store"
    assert headers["x-robots-tag"] == "noindex, nofollow"
    assert headers["x-frame-options"] == "DENY"
    assert "<script" not in page.text


async def test_a_transcript_is_kept_for_the_retention_period(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    settings = Settings(
        github_webhook_secret=SECRET, public_url=PUBLIC_URL, tiebreak_transcript_retention=3
    )
    await run_review(github, key, redis_url, agreed(), **linking(settings))

    store = Store(redis_url)
    try:
        (key_name,) = store.keys("tiebreak:transcript:*")
        assert 3 * DAY - 60 <= store.ttl(key_name) <= 3 * DAY
    finally:
        store.close()


async def test_with_no_retention_nothing_is_kept_and_nothing_links_to_it(
    github: FakeGitHub, key: AppKey, redis_url: str
) -> None:
    settings = Settings(
        github_webhook_secret=SECRET, public_url=PUBLIC_URL, tiebreak_transcript_retention=0
    )
    await run_review(github, key, redis_url, agreed(), **linking(settings))

    (check,) = github.check_runs(REPO)
    assert check.details_url is None
    (review,) = github.reviews(REPO, NUMBER)
    assert "/runs/" not in review.body
    store = Store(redis_url)
    try:
        assert store.keys("tiebreak:transcript:*") == []
    finally:
        store.close()


async def test_a_ruling_asked_for_later_joins_the_transcript(
    github: FakeGitHub, key: AppKey, redis_url: str, web: TestClient
) -> None:
    github.set_file(REPO, "b" * 40, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)), **linking())
    url = details_url(github)
    before = text(web.get(local(url)).text)
    assert "unresolved" in before
    assert "arbiter ruling" not in before

    arbiter = ScriptedLLM(by_role(arbiter=[rulings(force_fix("F1", LOG_FIX))]))
    comment = asked(github, ("arbitrate", None), association="OWNER")
    await run_worker(github, key, redis_url, arbiter, comment.enqueue, **linking())

    assert details_url(github) == url
    page_after = web.get(local(url)).text
    after = text(page_after)
    assert "arbiter ruling" in after
    assert "Final ruling on F1: the coder must adopt the arbiter&#39;s patch." in after
    assert f'<span class="add">+{escaped(LOG_LINE)}</span>' in page_after


async def test_a_hostile_pull_request_is_shown_as_text(redis_url: str, web: TestClient) -> None:
    page = await page_of(await hostile_record(), redis_url, web)

    assert "<script" not in page
    assert "<img" not in page
    assert "onerror=" not in page.replace("onerror=&#34;", "")
    shown = text(page)
    assert f"&lt;script&gt;{PWNED} = 1&lt;/script&gt;" in shown
    assert "&lt;/title&gt;" in shown
    assert "A" * 100_000 in page  # the wide line, whole, for the reader to scroll


async def test_a_panel_s_votes_testers_and_edges_are_shown(redis_url: str, web: TestClient) -> None:
    record = await panel_record(KEPT, "review:octo/shop#7@panel", max_exchanges_per_finding=2)

    page = await page_of(record, redis_url, web)

    shown = text(page)
    panel = f"{CORRECTNESS} , {SECURITY} , {PERFORMANCE}"
    assert f"A panel of 3 testers: {panel}" in shown
    assert f"{CORRECTNESS}: `log` is not defined anywhere" in shown  # who raised it
    assert (
        f"The panel's vote: kept by {CORRECTNESS} , {SECURITY} · accepted by {PERFORMANCE}"
    ) in shown
    assert '<span class="badge open">stands</span>' in page
    assert "its debate ended: too many exchanges on this finding" in shown
    assert "Stands: a majority of the testers keeps it against the coder" in shown
    assert "Unresolved:" not in shown
    assert "sent to the arbiter" not in shown
    # Every tester speaks under its own name, and each coder-tester edge of the panel has its
    # chart; the arbiter's edges, never called on, are listed in one line.
    for tester, kind in ((CORRECTNESS, "reject"), (SECURITY, "reject"), (PERFORMANCE, "accept")):
        assert f'<span class="who">{tester}</span> <span class="muted">{kind}' in page
    edges = [f"coder↔{t}" for t in (CORRECTNESS, SECURITY, PERFORMANCE)]
    for edge in edges:
        assert f"<strong>{edge}</strong>:" in page
    assert page.count("<polyline") == 2 * len(edges)
    idle = ", ".join(f"arbiter↔{t}" for t in ("coder", CORRECTNESS, SECURITY, PERFORMANCE))
    assert f"Not used: {idle}." in shown


async def test_a_tie_and_testers_leaving_are_shown(redis_url: str, web: TestClient) -> None:
    tie = await panel_record(TIE_FIXED, "review:octo/shop#7@tie", testers=2)
    spent = await panel_record(REPEATED, "review:octo/shop#7@spent")

    tied = text(await page_of(tie, redis_url, web))
    left = text(await page_of(spent, redis_url, web))

    assert f"The panel's vote: kept by {CORRECTNESS} · accepted by {SECURITY}" in tied
    assert "sent to the arbiter: the testers split evenly" in tied
    assert "A panel of 2 testers" in tied
    for tester in (CORRECTNESS, SECURITY, PERFORMANCE):
        assert f"{tester} leaves the debate: its budget with the coder is spent" in left
    assert "its debate ended: the debate&#39;s token budget ran out" in left


async def test_a_persons_reply_joins_the_findings_thread_marked_as_a_persons(
    github: FakeGitHub, key: AppKey, redis_url: str, web: TestClient
) -> None:
    github.set_file(REPO, "b" * 40, ".github/tiebreak.yml", "debate:\n  arbitration: false\n")
    await run_review(github, key, redis_url, ScriptedLLM(by_role(**STUBBORN)), **linking())
    url = details_url(github)
    (tiebreaks,) = github.reviews(REPO, NUMBER)[0].comments
    argument = "The caller defines log before <b>refund</b> runs."
    reply = github.add_review_comment(
        REPO, NUMBER, PAYMENTS, 16, argument, in_reply_to=tiebreaks.id
    )
    request = HearingRequest(
        pull=REF,
        login="octocat",
        comment=CommentRef(id=reply, kind="review", thread_id=tiebreaks.id),
        text=argument,
    )
    tester = ScriptedLLM(by_role(tester=[evaluations(reject("F1", "Nothing defines log."))]))

    await run_worker(
        github, key, redis_url, tester, lambda q: q.enqueue_hearing(request), **linking()
    )

    page = web.get(local(url)).text
    assert (
        '<span class="who">@octocat</span> <span class="muted">a person&#39;s reply on the '
        "pull request</span>"
    ) in page
    assert "The caller defines log before &lt;b&gt;refund&lt;/b&gt; runs." in page


async def test_each_findings_test_run_is_shown_escaped(redis_url: str, web: TestClient) -> None:
    record = await sample_record("review:octo/shop#7@tested")
    unit = record.review.units[0]
    first = unit.findings[0]
    test = Reproduction(path="tests/test_split.py", content="assert '<script>' == 1\n")
    head = Run(exit_code=1, output_tail="E   AssertionError: <img src=x onerror=alert(1)>")
    tested = first.model_copy(
        update={
            "finding": first.finding.model_copy(update={"reproduction": test}),
            "verification": Verification.of(test.path, "pytest {test}", head, Run(exit_code=0)),
            "fix_verified": True,
        }
    )
    review = Review(units=[unit.model_copy(update={"findings": [tested, *unit.findings[1:]]})])

    page = await page_of(record.model_copy(update={"review": review}), redis_url, web)

    shown = text(page)
    assert "Test tests/test_split.py : reproduced, fix verified" in shown
    assert "it fails at the head and passes at the base" in shown
    assert "assert &#39;&lt;script&gt;&#39; == 1" in shown
    assert "AssertionError: &lt;img src=x onerror=alert(1)&gt;" in shown
    assert "<script" not in page
    assert "<img" not in page
