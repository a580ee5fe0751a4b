"""What Tiebreak expects of arq, checked against the installed arq: Tiebreak queues and claims
jobs by scripts of its own, so an arq that moved a key would leave its jobs unseen."""

import pytest
from arq import constants

from app.store import keys

JOB = "review:octo/app#7@abc"


@pytest.mark.parametrize(
    ("ours", "arqs"),
    [
        (keys.REVIEW_QUEUE, constants.default_queue_name),
        (keys.job(JOB), constants.job_key_prefix + JOB),
        (keys.result(JOB), constants.result_key_prefix + JOB),
        (keys.in_progress(JOB), constants.in_progress_key_prefix + JOB),
        (keys.ABORTED, constants.abort_jobs_ss),
    ],
)
def test_the_arq_keys_tiebreak_writes_are_the_installed_arqs(ours: str, arqs: str) -> None:
    assert ours == arqs
