"""A review run's id, which its check run carries as its `external_id`, names the pull request
head it reviews: read back whole, or not at all."""

import pytest

from app.store.keys import resume_job_id, review_job_id, reviewed_head, run_of
from tests.scenarios.reviews import INSTALLATION, REF

NAMED = REF.model_copy(update={"repository_id": None})
"""The head as a run's id names it: by the repository's name (the delivery says its id)."""


@pytest.mark.parametrize(
    "rerun", [None, "asked-button", "asked-1234", "9f5c2a3e-7f4b-11ef-8e3a-0242ac120002"]
)
def test_a_review_run_s_id_names_the_head_it_reviews(rerun: str | None) -> None:
    assert reviewed_head(review_job_id(REF, rerun), INSTALLATION) == NAMED


def test_the_id_of_a_run_in_another_installation_names_it_there() -> None:
    named = reviewed_head(review_job_id(REF), 77)

    assert named == NAMED.model_copy(update={"installation_id": 77})


@pytest.mark.parametrize(
    "external_id",
    [
        "",
        "build-1234",
        f"review:{REF.key}",
        f"review:{REF.key}@{'A' * 40}",
        f"review:{REF.key}@{'a' * 39}",
        f"review:Codertocat/Hello-World#two@{'a' * 40}",
        f"review:Codertocat/Hello World#2@{'a' * 40}",
        f"unit:{review_job_id(REF)}:1:1",
        f"{review_job_id(REF)}\n",
        f"review:{REF.key}@{'a' * 40}x",
    ],
)
def test_an_id_of_any_other_shape_names_nothing(external_id: str) -> None:
    assert reviewed_head(external_id, INSTALLATION) is None


@pytest.mark.parametrize("rerun", [None, "asked-1234", "ready"])
def test_a_review_job_runs_its_own_run_or_the_one_it_picked_up(rerun: str | None) -> None:
    run = review_job_id(REF, rerun)

    assert run_of(run) == run
    assert run_of(resume_job_id(run, 1)) == run
    assert run_of(resume_job_id(run, 12)) == run
