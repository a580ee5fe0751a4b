"""What the check run's title says of the proven findings followed across pushes."""

import pytest

from agents.outcome import Resolution
from agents.verification import Retest
from app.publishing.follow_text import headline
from app.publishing.publication import FollowedThread, FollowUp
from tests.kits.plan import result


def followed(retest: Retest, *, ended: bool = False) -> FollowedThread:
    follow = FollowUp(
        key="u1/F1",
        result=result(resolution=Resolution.OPEN),
        test="test_refund.py",
        retest=retest,
        reason="",
    )
    return FollowedThread(follow=follow, thread=1, ended=ended)


FAILS, PASSES, NOT_RUN = Retest.FAILS, Retest.PASSES, Retest.NOT_RUN


@pytest.mark.parametrize(
    ("shown", "parts"),
    [
        ([], []),
        ([FAILS], ["1 proven finding still fails"]),
        ([FAILS, FAILS, PASSES], ["2 proven findings still fail", "1 fixed and verified"]),
        ([PASSES, PASSES], ["2 fixed and verified"]),
        ([NOT_RUN], []),
    ],
)
def test_the_title_counts_the_proven_findings_still_failing_and_fixed(
    shown: list[Retest], parts: list[str]
) -> None:
    assert headline([followed(r) for r in shown]) == parts


def test_the_title_leaves_out_a_finding_a_person_ended() -> None:
    assert headline([followed(FAILS, ended=True), followed(FAILS)]) == [
        "1 proven finding still fails"
    ]
