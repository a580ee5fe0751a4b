"""What `tiebreak demo` (:mod:`app.cli.demo`) does: the bundled pull request reviewed by the
engine on scripted agents, shown as `review` shows a review, its transcript page written."""

import asyncio
import shutil
import sys
import tempfile
import time
from contextlib import AbstractAsyncContextManager, nullcontext
from pathlib import Path

import click

from agents.context.reading import Reading
from agents.coverage import estimate
from agents.debate.proofs import Proving
from agents.intent import pull_intent
from agents.models.scripted import ScriptedLLM
from agents.review import Review, review_units
from app.cli.demo_project import NUMBER, REPOSITORY, DemoPull, NoWorkTree, bundled, work_tree
from app.cli.demo_script import DEMO_LABEL, TEST_COMMAND, demo_script
from app.cli.exits import fail
from app.cli.terminal import CallProgress, render, review_json
from app.cli.transcript_file import open_in_browser, write_transcript
from app.cli.verifying import EnvironmentUnfit, VerifyRequest, proving
from app.events import PullRequestRef
from app.source_tree import conventions_in
from app.store.transcripts import TranscriptRecord
from app.verification.sandbox import sandbox_problem
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig
from policies.verify import VerifyConfig

EXIT_SETTLED, EXIT_UNRESOLVED = 0, 1


def run(*, as_json: bool, verify: bool | None, no_browser: bool) -> None:
    """The demo the options ask for, its exit status the command's; `verify` None: the
    tester's test runs where the sandbox can run here."""
    if verify is None:
        verify = _sandbox_here()
    _say(DEMO_LABEL)
    pull = bundled()
    _say(f"reviewing {REPOSITORY}#{NUMBER}: {pull.title} (shipped with Tiebreak)")
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="tiebreak-demo-") as scratch:
        checkout = _checkout(pull, Path(scratch)) if verify else None
        try:
            review = asyncio.run(_review(pull, checkout))
        except EnvironmentUnfit as exc:
            fail(exc.said())
    record = _record(pull, review, started)
    # The page outlives the command, for its link to be opened later.
    page_directory = Path(tempfile.mkdtemp(prefix="tiebreak-demo-"))
    link = write_transcript(record, page_directory, DEMO_LABEL)
    if as_json:
        click.echo(review_json(review, {"demo": DEMO_LABEL, "transcript": link}))
    else:
        click.echo(render(review, notice=DEMO_LABEL))
        click.echo(f"Transcript: {link}")
    if not no_browser and open_in_browser(link):
        _say("the transcript is open in your browser")
    sys.exit(EXIT_SETTLED if review.settled else EXIT_UNRESOLVED)


def _record(pull: DemoPull, review: Review, started: float) -> TranscriptRecord:
    """The review as the App keeps a run for its transcript page."""
    owner, _, name = REPOSITORY.partition("/")
    return TranscriptRecord(
        run_id=f"demo:{REPOSITORY}#{NUMBER}",
        ref=PullRequestRef(
            installation_id=0, owner=owner, repo=name, number=NUMBER, head_sha=pull.head_sha
        ),
        title=pull.title,
        started_at=started,
        finished_at=time.time(),
        conclusion="success" if review.settled else "action_required",
        review=review,
        diff=pull.diff.text,
        spent=review.billed,
        ceiling=DebatePolicy().token_ceiling,
    )


def _say(line: str) -> None:
    """A line on standard error, as `tiebreak review` tells its progress."""
    click.echo(f"tiebreak: {line}", err=True)


def _sandbox_here() -> bool:
    """Whether the demo's test can run in the sandbox here (bubblewrap and git at hand);
    where it cannot, the review goes on without it, and says why."""
    problem = sandbox_problem()
    if problem is None and shutil.which("git") is None:
        problem = "git is not installed"
    if problem is not None:
        _say(f"the tester's test is not run (--verify needs the sandbox): {problem}")
    return problem is None


def _checkout(pull: DemoPull, scratch: Path) -> Path:
    """The project as a work tree in `scratch`, for its tests; exit 2 without git."""
    try:
        return work_tree(pull, scratch / "pagination")
    except NoWorkTree as exc:
        fail(f"--verify needs the project as a git work tree: {exc.reason}")


async def _review(pull: DemoPull, checkout: Path | None) -> Review:
    """The bundled pull request reviewed by the scripted agents, its findings' tests run on
    `checkout` (None: none run)."""
    command = TEST_COMMAND if checkout is not None else None
    reading = Reading(
        pull.files,
        intent=pull_intent(pull.title, pull.body),
        conventions=conventions_in(checkout, command, pull.diff.paths),
    )
    units = reading.attach(pull.diff.units())
    policy = DebatePolicy()
    async with _proofs(pull, checkout) as tests:
        expected = estimate(units, policy, tests=tests is not None)
        _say(expected.describe())
        agents = ScriptedLLM(demo_script(tests=tests is not None))
        progress = CallProgress(agents, _say, [u.id for u in units])
        review = await review_units(units, progress, policy, proving=tests, summary=SummaryConfig())
    return review.model_copy(update={"estimate": expected})


def _proofs(pull: DemoPull, checkout: Path | None) -> AbstractAsyncContextManager[Proving | None]:
    """Who runs the findings' tests on `checkout`, in the sandbox (None: nobody); exit 2
    where there can be no sandbox."""
    if checkout is None:
        return nullcontext()
    config = VerifyConfig(command=TEST_COMMAND)
    return proving(VerifyRequest(TEST_COMMAND), config, checkout, pull.diff)
