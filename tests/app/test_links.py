"""Transcript links: signed for one run, expiring, and only where the server can sign."""

from urllib.parse import parse_qs, urlsplit

import pytest
from pydantic import ValidationError

from app.links import TranscriptLinks, links_for
from app.settings import Settings

KEY = b"k" * 32
DAY = 24 * 3600
WEBHOOK_SECRET = "a-webhook-secret-for-links"
RUN = "review:octo/shop#7@3f2c9a1"


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def links(clock: Clock | None = None, *, key: bytes = KEY, ttl: int = 14 * DAY) -> TranscriptLinks:
    return TranscriptLinks(key, "https://tiebreak.example.com/", ttl, clock=clock or Clock())


def token_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["token"][0]


def test_a_link_names_the_run_and_carries_a_token_that_opens_it() -> None:
    url = links().url(RUN)

    assert url is not None
    assert url.startswith("https://tiebreak.example.com/runs/review%3Aocto%2Fshop%237%403f2c9a1?")
    assert links().valid(RUN, token_of(url))


def _later_timestamp(token: str) -> str:
    """The token's signature under the timestamp of a token made a day later."""
    later = links(Clock(Clock().now + DAY)).token(RUN)
    return later.split(".")[0] + "." + token.split(".")[1]


@pytest.mark.parametrize(
    "change",
    [
        lambda token: token[:-1] + ("A" if token[-1] != "A" else "B"),  # another signature
        lambda token: _later_timestamp(token),
        lambda token: "",
        lambda token: "garbage",
        lambda token: token + "." + token,
    ],
    ids=["signature", "timestamp", "empty", "garbage", "doubled"],
)
def test_an_altered_token_opens_nothing(change: object) -> None:
    token = links().token(RUN)

    assert callable(change)
    assert not links().valid(RUN, change(token))


def test_a_token_opens_only_its_own_run() -> None:
    token = links().token(RUN)

    assert not links().valid("review:octo/shop#8@3f2c9a1", token)


def test_a_token_of_another_key_opens_nothing() -> None:
    assert not links().valid(RUN, links(key=b"another key").token(RUN))


def test_a_link_expires_after_its_time_to_live() -> None:
    clock = Clock()
    token = links(clock, ttl=DAY).token(RUN)

    clock.now += DAY
    assert links(clock, ttl=DAY).valid(RUN, token)
    clock.now += 1
    assert not links(clock, ttl=DAY).valid(RUN, token)


def test_a_token_from_the_future_opens_nothing() -> None:
    clock = Clock()
    token = links(Clock(clock.now + 3600)).token(RUN)

    assert not links(clock).valid(RUN, token)


def test_a_link_needs_a_key() -> None:
    with pytest.raises(ValueError, match="key"):
        TranscriptLinks(b"", "https://tiebreak.example.com", DAY)


def test_the_key_derives_from_the_webhook_secret_unless_a_link_secret_is_set() -> None:
    derived = links_for(
        Settings(github_webhook_secret=WEBHOOK_SECRET, public_url="https://tiebreak.example.com")
    )
    chosen = links_for(
        Settings(
            github_webhook_secret=WEBHOOK_SECRET,
            tiebreak_link_secret="a-key-for-links-only",
            public_url="https://tiebreak.example.com",
        )
    )

    assert derived is not None
    assert chosen is not None
    token = derived.token(RUN)
    assert derived.valid(RUN, token)
    assert not chosen.valid(RUN, token)
    # The derived key is not the webhook secret itself.
    assert not TranscriptLinks(WEBHOOK_SECRET.encode(), "https://x", DAY).valid(RUN, token)


def test_no_links_without_a_key_or_when_no_transcript_is_kept() -> None:
    assert links_for(Settings(public_url="https://tiebreak.example.com")) is None
    assert (
        links_for(
            Settings(
                github_webhook_secret=WEBHOOK_SECRET,
                public_url="https://tiebreak.example.com",
                tiebreak_transcript_retention=0,
            )
        )
        is None
    )


def test_a_server_without_a_public_url_checks_links_but_makes_none() -> None:
    made = links_for(Settings(github_webhook_secret=WEBHOOK_SECRET, public_url="https://x.example"))
    checking = links_for(Settings(github_webhook_secret=WEBHOOK_SECRET))

    assert made is not None
    assert checking is not None
    assert checking.url(RUN) is None
    assert checking.valid(RUN, made.token(RUN))


def test_links_live_as_long_as_transcripts_are_kept() -> None:
    made = links_for(
        Settings(github_webhook_secret=WEBHOOK_SECRET, tiebreak_transcript_retention=3)
    )

    assert made is not None
    assert made.ttl == 3 * DAY


@pytest.mark.parametrize("days", [-1, 366])
def test_a_retention_out_of_range_is_refused(days: int) -> None:
    with pytest.raises(ValidationError, match="tiebreak_transcript_retention"):
        Settings(tiebreak_transcript_retention=days)


def test_a_blank_link_secret_is_refused() -> None:
    with pytest.raises(ValidationError, match="empty"):
        Settings(tiebreak_link_secret="  ")
