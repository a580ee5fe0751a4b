"""`tiebreak demo`: one real review, without a key or the network, of the small pull request
shipped with Tiebreak (:mod:`app.cli.demo_project`).

The engine is the one `tiebreak review` drives (:func:`agents.review.review_units`, each unit
a :class:`agents.debate.engine.Debate`); only the model is replaced, by the scripted agents of
:mod:`app.cli.demo_script`. The review is shown as `review` shows one (the terminal view, or
`--json`), and its transcript page is written to a file and opened in a browser. With
`--verify`, the tester's test runs in bubblewrap's sandbox at the base and the head, and the
coder's fix against it, as `review --verify` runs tests (:mod:`app.cli.verifying`). Everything
it prints says it is a demo.
"""

import asyncio
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
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig
from policies.verify import VerifyConfig

EXIT_SETTLED, EXIT_UNRESOLVED = 0, 1


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the review as JSON, as review does.")
@click.option(
    "--verify",
    is_flag=True,
    help="Run the tester's test in bubblewrap's sandbox at the base and the head, and the "
    "coder's fix against it, as `review --verify` does (needs bubblewrap and git).",
)
@click.option("--no-browser", is_flag=True, help="Do not open the transcript page in a browser.")
def demo(as_json: bool, verify: bool, no_browser: bool) -> None:
    """Review a small bundled pull request with scripted agents: no key, no network.

    The review is real — Tiebreak's debate engine, its rules and budgets, the terminal view,
    the transcript page and, with --verify, the findings' tests in the sandbox — but the
    tester, the coder and the arbiter answer from a script written for this pull request:
    no model is called, nothing is billed.
    """
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
