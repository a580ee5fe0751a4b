"""`tiebreak review`: the trio on a local diff or a pull request on GitHub, the outcome in the
terminal or as JSON.

The code around the changes is read from a checkout at the diff's new side
(:mod:`app.cli.checkout`), or fetched with a pull request given by its address
(:mod:`app.cli.pull_review`), whose repository at the head is then searched, as the App
searches it, unless `--repo` names a checkout to search instead; with `--verify`, the
findings' tests run on the checkout (:mod:`app.cli.verifying`). What the change says it does
is a pull request's title and description, or a diff's `--description` or commits' messages
(:mod:`app.cli.intent`).
"""

import asyncio
import functools
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import click
from pydantic import ValidationError

from agents.context.reading import Reading
from agents.coverage import estimate
from agents.debate.proofs import Proving
from agents.diff import Diff
from agents.errors import DiffError, LLMFatal
from agents.intent import pull_intent
from agents.models.claude import ClaudeLLM
from agents.review import Review, review_units
from app.cli import pull_review
from app.cli.checkout import checkout_sources
from app.cli.exits import fail as _fail
from app.cli.intent import diff_intent
from app.cli.model_choice import connect, model_options
from app.cli.pull_address import is_address
from app.cli.remote import RemotePull
from app.cli.terminal import CallProgress, render, review_json
from app.cli.verifying import (
    EnvironmentUnfit,
    VerifyRequest,
    proving,
    verify_config,
    verify_options,
)
from app.parsing import Parsing
from app.review.together import together
from app.source_tree import conventions_in
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig
from policies.verify import VerifyConfig

EXIT_SETTLED, EXIT_UNRESOLVED = 0, 1

DEFAULTS = DebatePolicy()
"""The debate's defaults, shown in the options' help."""

MERGE_HINT = (
    "; a merge commit's `git show` shows no diff: use `git show --first-parent` (the changes "
    "the merge brought in) or `git show -m` (a diff per parent)"
)

EPILOG = """\b
The model's key: ANTHROPIC_API_KEY. On Amazon Bedrock (TIEBREAK_PROVIDER=bedrock), AWS's
credentials and AWS_REGION; on Google Vertex AI (TIEBREAK_PROVIDER=vertex), Google's
application-default credentials, CLOUD_ML_REGION and ANTHROPIC_VERTEX_PROJECT_ID.
A pull request is read with GITHUB_TOKEN (else `gh auth token`); without a token, only a
public repository's.
"""


@click.command(epilog=EPILOG)
@click.argument("source", metavar="DIFF|PULL")
@click.option("--json", "as_json", is_flag=True, help="Print the review as JSON.")
@click.option(
    "--max-rounds",
    type=int,
    help=f"Rounds before open findings go to the arbiter (default {DEFAULTS.max_rounds}).",
)
@click.option(
    "--budget",
    type=int,
    help=f"Starting token budget of the coder-tester edge (default {DEFAULTS.initial_budget:,}).",
)
@click.option(
    "--ceiling",
    type=int,
    help=f"Hard token ceiling of the whole review (default {DEFAULTS.token_ceiling:,}).",
)
@click.option("--no-arbitration", is_flag=True, help="Leave deadlocks unresolved.")
@click.option("--testers", type=int, help="Testers on the panel, 1 to 5 (default 1).")
@click.option(
    "--focus",
    multiple=True,
    metavar="FOCUS",
    help="A tester's focus, once per tester in order (correctness, security, performance, …).",
)
@click.option(
    "--topology",
    type=click.Choice(["ring", "full"]),
    help="Whom each panel tester hears: its two neighbours, or everyone (default ring).",
)
@click.option(
    "--repo",
    "repo_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="A checkout at the diff's new side, to read the code around each change from "
    "(default: the current directory, when it is one); with a PULL, a checkout at its head "
    "to search instead of downloading the repository.",
)
@click.option(
    "--description",
    metavar="TEXT|@FILE",
    help="What the change says it does, for the agents to read as its author's claim (with "
    "a DIFF; @FILE reads it from FILE). Default: with --base, the commits' messages between "
    "--base and the checkout's head. A PULL's own title and description are read from GitHub.",
)
@click.option(
    "--post",
    is_flag=True,
    help="Post the review on the pull request, as the token's user (with a PULL only).",
)
@model_options
@verify_options
def review(
    source: str,
    as_json: bool,
    max_rounds: int | None,
    budget: int | None,
    ceiling: int | None,
    no_arbitration: bool,
    testers: int | None,
    focus: tuple[str, ...],
    topology: str | None,
    repo_dir: Path | None,
    description: str | None,
    tester_model: str | None,
    coder_model: str | None,
    arbiter_model: str | None,
    verify_command: str | None,
    verify_setup: str | None,
    base: str | None,
    no_sandbox: bool,
    no_memory_limit: bool,
    post: bool,
) -> None:
    """Review a unified diff (a file, or - for standard input) or a pull request on GitHub
    (https://github.com/OWNER/REPO/pull/N, or OWNER/REPO#N) with the three agents.

    A pull request's debate follows its repository's .github/tiebreak.yml at the base, which
    the options override.

    Exit status: 0 when no finding is left open, 1 when findings stay unresolved or a part
    of the diff could not be reviewed, 2 for a usage or input error, or when, with --verify,
    the project's environment cannot run a trivial test (checked before any model call).
    """
    overrides = {
        "max_rounds": max_rounds,
        "initial_budget": budget,
        "token_ceiling": ceiling,
        "arbitration": False if no_arbitration else None,
        "testers": testers,
        "focus": focus or None,
        "topology": topology,
    }
    chosen = {k: v for k, v in overrides.items() if v is not None}
    _policy(DEFAULTS, chosen)  # a bad option stops the review before anything is read
    verifying = VerifyRequest(
        verify_command,
        verify_setup,
        base,
        sandbox=not no_sandbox,
        memory_limit=not no_memory_limit,
    )
    models = functools.partial(connect, tester_model, coder_model, arbiter_model)
    if is_address(source) and not Path(source).exists():
        if description is not None:
            _fail(
                "--description is for a diff: a pull request's title and description are "
                "read from GitHub"
            )
        subject = _pull(source, repo_dir, verifying, models, post=post)
    else:
        if post:
            _fail("--post posts on a pull request: give its address, not a diff")
        subject = _diff(source, repo_dir, description, verifying, models)
    click.echo(f"tiebreak: {subject.reads()}", err=True)
    policy = _policy(subject.debate, chosen)
    proofs = proving(verifying, subject.verify, subject.checkout, subject.diff)
    try:
        result = asyncio.run(_review(subject, policy, proofs))
    except LLMFatal as exc:
        _fail(str(exc))
    except EnvironmentUnfit as exc:
        _fail(exc.said())
    click.echo(review_json(result) if as_json else render(result))
    if subject.pull is not None and post:
        pull_review.posted(*subject.pull, result)
    sys.exit(EXIT_SETTLED if result.settled else EXIT_UNRESOLVED)


@dataclass(frozen=True)
class _Subject:
    """What a review reads, and with what: the diff and the code around it, the client of
    the models, the debate's policy and summary before the options, where the repository's
    other files are (`tree`, held while the review runs), and the pull request it is of."""

    diff: Diff
    reading: Reading
    said: str
    """Where the code around the changes came from, or why there is none."""
    llm: ClaudeLLM
    debate: DebatePolicy
    summary: SummaryConfig
    tree: AbstractAsyncContextManager[Path | None]
    checkout: Path | None
    """The local checkout at the diff's new side, where findings' tests may run."""
    verify: VerifyConfig | None
    pull: tuple[pull_review.AskedPull, RemotePull] | None = None

    def reads(self) -> str:
        """What the agents read beside the diff, as the terminal says it."""
        if self.reading.sources is None:
            return f"reviewing the diff alone, without the code around it: {self.said}"
        return self.said


def _pull(
    source: str,
    repo_dir: Path | None,
    verifying: VerifyRequest,
    models: Callable[[], ClaudeLLM],
    *,
    post: bool,
) -> _Subject:
    """A pull request given by its address, under its base's config."""
    verify = verify_config(verifying, None, "a pull request's address has no checkout")
    asked = pull_review.connect(source, post=post)
    llm = models()  # before anything is fetched: a missing key stops the review at once
    remote = pull_review.fetched(asked)
    config = remote.config
    pull = remote.pull
    return _Subject(
        diff=remote.diff,
        reading=Reading(
            remote.sources,
            config.context.max_tokens,
            remote.guidance,
            intent=pull_intent(pull.title, pull.body),
        ),
        said=remote.read,
        llm=llm,
        debate=config.debate,
        summary=config.summary,
        tree=pull_review.head_tree(asked, remote, repo_dir),
        checkout=None,
        verify=verify,
        pull=(asked, remote),
    )


def _diff(
    source: str,
    repo_dir: Path | None,
    description: str | None,
    verifying: VerifyRequest,
    models: Callable[[], ClaudeLLM],
) -> _Subject:
    """A diff from a file or standard input, with the checkout it applies to, if any, and
    what it says it does: the description given, or its commits' messages since `--base`."""
    diff = _parsed(source)
    read = checkout_sources(diff, repo_dir or Path.cwd())
    verify = verify_config(verifying, read.root, read.unfit)
    intent = diff_intent(description, verifying.base, read.root)
    return _Subject(
        diff=diff,
        reading=Reading(read.sources, intent=intent),
        said=read.said,
        llm=models(),
        debate=DEFAULTS,
        summary=SummaryConfig(),
        tree=nullcontext(read.root),
        checkout=read.root,
        verify=verify,
    )


def _policy(base: DebatePolicy, chosen: Mapping[str, object]) -> DebatePolicy:
    """`base` with the options given; exit 2 when they make no policy."""
    try:
        return DebatePolicy.model_validate({**base.model_dump(), **chosen})
    except ValidationError as exc:
        _fail(f"invalid option: {_first_error(exc)}")


def _parsed(source: str) -> Diff:
    """The diff in the file `source`, or on standard input for `-`; exit 2 when it is none."""
    if source == "-" and sys.stdin.isatty():
        # Nothing piped in: a person may be waiting on a command that waits on them.
        click.echo("tiebreak: reading a diff from standard input (Ctrl-D ends it)", err=True)
    try:
        with click.open_file(source, encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError as exc:
        _fail(f"cannot read {source}: {exc.strerror or exc}")
    try:
        return Diff.parse(text)
    except DiffError as exc:
        _fail(str(exc) + (MERGE_HINT if _merge_commit(text) else ""))


def _merge_commit(text: str) -> bool:
    """Whether `text` is `git show`'s (or `git log -p`'s) header of a merge commit."""
    header = text.split("\ndiff ", 1)[0]
    return header.startswith("commit ") and any(
        line.startswith("Merge: ") for line in header.splitlines()
    )


async def _review(
    subject: _Subject, policy: DebatePolicy, proofs: AbstractAsyncContextManager[Proving | None]
) -> Review:
    """The review of the subject's diff, its agents reading the subject's reading (its files
    parsed here) and what the work tree it holds (when there is one) tells about the changes
    in other files."""
    diff, reading, tree, llm = subject.diff, subject.reading, subject.tree, subject.llm
    parsing = Parsing()
    try:
        sources = reading.sources or {}
        async with AsyncExitStack() as held:
            # The repository is had (downloaded, maybe) while the changed files are parsed,
            # and held until its other files are searched.
            root, outlines = await together(
                held.enter_async_context(tree), parsing.outlines(sources)
            )
            related = await parsing.related(root, diff) if sources and root else None
            command = subject.verify.command if subject.verify else None
            conventions = await asyncio.to_thread(conventions_in, root, command, diff.paths)
        if related is not None and related.note:
            click.echo(f"tiebreak: {related.note}", err=True)
        read = replace(reading, outlines=outlines, related=related, conventions=conventions)
        units = read.attach(diff.units())
        if subject.pull is not None and (changes := subject.pull[1].changes) is not None:
            # As the App does: evidence may be cited from files the config's paths leave out.
            units = [replace(unit, changes=changes) for unit in units]
        async with proofs as proving:
            expected = estimate(units, policy, tests=proving is not None)
            click.echo(f"tiebreak: {expected.describe()}", err=True)
            progress = CallProgress(
                llm, lambda line: click.echo(line, err=True), [u.id for u in units]
            )
            review = await review_units(
                units, progress, policy, proving=proving, summary=subject.summary
            )
            return review.model_copy(update={"estimate": expected})
    finally:
        parsing.close()
        await llm.aclose()


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
