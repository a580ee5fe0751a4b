"""Router: who speaks next, decided by the engine and never by a model."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policies.errors import PolicyError
from policies.routing import Router

PANEL = ("coder", "tester", "arbiter")

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
panels = st.lists(names, min_size=3, max_size=8, unique=True)


@pytest.mark.parametrize(
    "speakers",
    [[], ["coder", "coder"], ["coder", "tester", "coder"]],
    ids=["empty", "duplicate-pair", "duplicate-in-three"],
)
def test_router_needs_distinct_speakers(speakers: list[str]) -> None:
    with pytest.raises(PolicyError, match="distinct"):
        Router(speakers)


@pytest.mark.parametrize(
    ("previous", "expected"),
    [
        (None, "coder"),  # nobody has spoken: the first in order
        ("coder", "tester"),
        ("tester", "arbiter"),
        ("arbiter", "coder"),  # wraps around
        ("stranger", "coder"),  # an unknown previous speaker starts from the top
    ],
)
def test_round_robin_order(previous: str | None, expected: str) -> None:
    assert Router(PANEL).next_speaker(previous) == expected


@pytest.mark.parametrize(
    ("previous", "preferred", "expected"),
    [
        ("coder", "arbiter", "arbiter"),  # an eligible preference is honoured
        ("coder", "coder", "tester"),  # the previous speaker is never preferred back
        ("tester", "tester", "arbiter"),
        ("coder", "nobody", "tester"),  # an unknown name falls back to the order
        ("coder", None, "tester"),
        (None, "arbiter", "arbiter"),
    ],
)
def test_preferred_speaker_only_when_eligible(
    previous: str | None, preferred: str | None, expected: str
) -> None:
    assert Router(PANEL).next_speaker(previous, preferred) == expected


def test_allow_repeat_lets_the_previous_speaker_go_again() -> None:
    router = Router(PANEL, allow_repeat=True)

    assert router.next_speaker("coder", "coder") == "coder"
    assert router.next_speaker("coder") == "tester"
    assert router.eligible("coder") == PANEL


def test_eligible_excludes_only_the_previous_speaker() -> None:
    router = Router(PANEL)

    assert router.eligible("tester") == ("coder", "arbiter")
    assert router.eligible(None) == PANEL
    assert router.eligible("stranger") == PANEL


@pytest.mark.parametrize("allow_repeat", [False, True])
@pytest.mark.parametrize("previous", [None, "solo", "stranger"])
@pytest.mark.parametrize("preferred", [None, "solo", "stranger"])
def test_one_speaker_router_always_returns_that_speaker(
    allow_repeat: bool, previous: str | None, preferred: str | None
) -> None:
    router = Router(["solo"], allow_repeat=allow_repeat)

    assert router.next_speaker(previous, preferred) == "solo"


def test_two_speakers_alternate() -> None:
    router = Router(["coder", "tester"])
    previous: str | None = "tester"
    spoken = []
    for _ in range(6):
        previous = router.next_speaker(previous)
        spoken.append(previous)

    assert spoken == ["coder", "tester"] * 3


@given(data=st.data(), speakers=panels)
def test_no_selector_livelock_autogen_7471_previous_speaker_never_chosen(
    data: st.DataObject, speakers: list[str]
) -> None:
    """AutoGen's SelectorGroupChat (issue 7471) kept re-picking the excluded previous speaker.

    Whatever the preference (the previous speaker, a stranger, or nobody), a router without
    repeats never names the previous speaker and always names a panel member.
    """
    router = Router(speakers)
    previous = data.draw(st.sampled_from(speakers), label="previous")
    preferred = data.draw(
        st.one_of(st.none(), st.just(previous), st.sampled_from(speakers), names),
        label="preferred",
    )

    chosen = router.next_speaker(previous, preferred)

    assert chosen != previous
    assert chosen in speakers
    if preferred in speakers and preferred != previous:
        assert chosen == preferred


@given(data=st.data(), speakers=panels)
def test_no_selector_livelock_autogen_7471_every_speaker_within_one_lap(
    data: st.DataObject, speakers: list[str]
) -> None:
    """No starvation: from any start, len(speakers) calls visit every speaker.

    This holds both with no preference and when the preference always names the previous
    speaker — the livelock pattern of AutoGen issue 7471.
    """
    router = Router(speakers)
    start = data.draw(st.one_of(st.none(), st.sampled_from(speakers), names), label="start")
    insist_on_previous = data.draw(st.booleans(), label="insist_on_previous")

    previous: str | None = start
    visited = []
    for _ in range(len(speakers)):
        preferred = previous if insist_on_previous else None
        chosen = router.next_speaker(previous, preferred)
        assert chosen != previous
        visited.append(chosen)
        previous = chosen

    assert sorted(visited) == sorted(speakers)
