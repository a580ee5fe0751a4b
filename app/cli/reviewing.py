"""What `tiebreak review` does once its options are read (:mod:`app.cli.review`): the trio on a
local diff or a pull request on GitHub, the outcome in the terminal or as JSON.

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
from typing import TYPE_CHECKING

import click

from agents.context.reading import Reading
from agents.coverage import estimate
from agents.debate.proofs import Proving
from agents.diff import Diff, ReviewUnit
from agents.errors import LLMFatal
from agents.intent import pull_intent
from agents.review import Review, review_units
from app.cli.checkout import checkout_sources, named_fault
from app.cli.debate_choice import DEFAULTS, debate_policy
from app.cli.diff_input import parsed_diff
from app.cli.dry_run import dry_run_plan, plan_json, plan_text
from app.cli.exits import fail as _fail
from app.cli.intent import diff_intent
from app.cli.model_choice import connect
from app.cli.pull_address import is_address
from app.cli.terminal import CallProgress, render, review_json
from app.cli.verifying import EnvironmentUnfit, VerifyRequest, proving, verify_config
from app.parsing import Parsing
from app.review.together import together
from app.source_tree import conventions_in
from policies.debate import DebatePolicy
from policies.summary import SummaryConfig
from policies.verify import VerifyConfig

if TYPE_CHECKING:
    from agents.models.claude import ClaudeLLM
    from app.cli.pull_review import AskedPull
    from app.cli.remote import RemotePull

EXIT_SETTLED, EXIT_UNRESOLVED = 0, 1
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as a shell reports a command Ctrl-C ended."""

NO_KEY = (
    "; without a model, `tiebreak review --dry-run` shows the review's plan and its cost, "
    "and `tiebreak demo` a whole review by scripted agents"
)
"""What a review stopped for want of a model's key or setting says can be done without it."""


@dataclass(frozen=True)
class ReviewOptions:
    """`tiebreak review`'s options, as click read them (:mod:`app.cli.review`)."""

    source: str
    as_json: bool
    debate: Mapping[str, object]
    """The debate's options given (:mod:`app.cli.debate_options`), by the policy's field."""
    no_arbitration: bool
    topology: str | None
    repo_dir: Path | None
    description: str | None
    tester_model: str | None
    coder_model: str | None
    arbiter_model: str | None
    verify_command: str | None
    verify_setup: str | None
    base: str | None
    no_sandbox: bool
    no_memory_limit: bool
    post: bool
    dry_run: bool

    def chosen(self) -> dict[str, object]:
        """The debate's fields the options set."""
        overrides = {
            "arbitration": False if self.no_arbitration else None,
            "topology": self.topology,
        }
        return {**self.debate, **{k: v for k, v in overrides.items() if v is not None}}


def run(options: ReviewOptions) -> None:
    """The review the options ask for, its exit status the command's."""
    chosen = options.chosen()
    debate_policy(DEFAULTS, chosen)  # a bad option stops the review before anything is read
    if options.repo_dir is not None and (fault := named_fault(options.repo_dir)):
        # A checkout named and not read would make a review without context, paid for.
        _fail(f"--repo: {fault}")
    if options.dry_run and options.post:
        _fail("--dry-run posts nothing: leave out --post")
    verifying = _verifying(options)
    subject = _subject(options, verifying)
    click.echo(f"tiebreak: {subject.reads()}", err=True)
    policy = debate_policy(subject.debate, chosen)
    if options.dry_run:
        _print_plan(subject, policy, as_json=options.as_json)
        sys.exit(EXIT_SETTLED)
    result = _reviewed(subject, policy, verifying)
    click.echo(review_json(result) if options.as_json else render(result))
    if subject.pull is not None and options.post:
        from app.cli import pull_review

        pull_review.posted(*subject.pull, result)
    sys.exit(EXIT_SETTLED if result.settled else EXIT_UNRESOLVED)


def _verifying(options: ReviewOptions) -> VerifyRequest:
    return VerifyRequest(
        options.verify_command,
        options.verify_setup,
        options.base,
        sandbox=not options.no_sandbox,
        memory_limit=not options.no_memory_limit,
    )


def _subject(options: ReviewOptions, verifying: VerifyRequest) -> "_Subject":
    """What the options say to review: a pull request by its address, or a diff."""
    models: Callable[[], ClaudeLLM] | None = functools.partial(
        connect, options.tester_model, options.coder_model, options.arbiter_model, hint=NO_KEY
    )
    if options.dry_run:
        models = None  # no model is called: no key or provider is asked for
    source = options.source
    if is_address(source) and not Path(source).exists():
        if options.description is not None:
            _fail(
                "--description is for a diff: a pull request's title and description are "
                "read from GitHub"
            )
        return _pull(source, options.repo_dir, verifying, models, post=options.post)
    if options.post:
        _fail("--post posts on a pull request: give its address, not a diff")
    return _diff(source, options.repo_dir, options.description, verifying, models)


def _print_plan(subject: "_Subject", policy: DebatePolicy, *, as_json: bool) -> None:
    """What `--dry-run` prints: the review's plan and its estimate, no model called."""
    units = asyncio.run(_units(subject))
    expected = estimate(
        units, policy, tests=subject.verify is not None, binary=subject.diff.binaries
    )
    plan = dry_run_plan(subject.diff, units, expected)
    click.echo(plan_json(plan) if as_json else plan_text(plan))


def _reviewed(subject: "_Subject", policy: DebatePolicy, verifying: VerifyRequest) -> Review:
    """The subject reviewed by its model, its findings' tests run as `verifying` asks; exit
    2 when the model or the project's environment makes a review impossible, 130 on Ctrl-C."""
    proofs = proving(verifying, subject.verify, subject.checkout, subject.diff)
    assert subject.llm is not None, "a review that is no dry run has its model"
    progress = CallProgress(subject.llm, lambda line: click.echo(line, err=True))
    try:
        return asyncio.run(_review(subject, policy, proofs, progress))
    except KeyboardInterrupt:
        # Ctrl-C: the calls made are billed all the same; the shell's status for SIGINT.
        click.echo(f"tiebreak: interrupted: {progress.spent()} spent", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except LLMFatal as exc:
        _fail(str(exc))
    except EnvironmentUnfit as exc:
        _fail(exc.said())


@dataclass(frozen=True)
class _Subject:
    """What a review reads, and with what: the diff and the code around it, the client of
    the models, the debate's policy and summary before the options, where the repository's
    other files are (`tree`, held while the review runs), and the pull request it is of."""

    diff: Diff
    reading: Reading
    said: str
    """Where the code around the changes came from, or why there is none."""
    llm: "ClaudeLLM | None"
    """None for a dry run, which calls no model."""
    debate: DebatePolicy
    summary: SummaryConfig
    tree: AbstractAsyncContextManager[Path | None]
    checkout: Path | None
    """The local checkout at the diff's new side, where findings' tests may run."""
    verify: VerifyConfig | None
    pull: "tuple[AskedPull, RemotePull] | None" = None

    def reads(self) -> str:
        """What the agents read beside the diff, as the terminal says it."""
        if self.reading.sources is None:
            return f"reviewing the diff alone, without the code around it: {self.said}"
        return self.said


def _pull(
    source: str,
    repo_dir: Path | None,
    verifying: VerifyRequest,
    models: "Callable[[], ClaudeLLM] | None",
    *,
    post: bool,
) -> _Subject:
    """A pull request given by its address, under its base's config."""
    verify = verify_config(verifying, None, "a pull request's address has no checkout")
    # GitHub's client is loaded for a pull request alone: a local diff's review starts
    # without it.
    from app.cli import pull_review

    asked = pull_review.connect(source, post=post)
    # Before anything is fetched: a missing key stops the review at once.
    llm = models() if models else None
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
    models: "Callable[[], ClaudeLLM] | None",
) -> _Subject:
    """A diff from a file or standard input, with the checkout it applies to, if any, and
    what it says it does: the description given, or its commits' messages since `--base`."""
    diff = parsed_diff(source)
    read = checkout_sources(diff, repo_dir or Path.cwd())
    verify = verify_config(verifying, read.root, read.unfit)
    intent = diff_intent(description, verifying.base, read.root)
    return _Subject(
        diff=diff,
        reading=Reading(read.sources, intent=intent),
        said=read.said,
        llm=models() if models else None,
        debate=DEFAULTS,
        summary=SummaryConfig(),
        tree=nullcontext(read.root),
        checkout=read.root,
        verify=verify,
    )


async def _units(subject: _Subject) -> list[ReviewUnit]:
    """The subject's diff as review units, its agents reading the subject's reading (its
    files parsed here) and what the work tree it holds (when there is one) tells about the
    changes in other files."""
    diff, reading, tree = subject.diff, subject.reading, subject.tree
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
    finally:
        parsing.close()
    if related is not None and related.note:
        click.echo(f"tiebreak: {related.note}", err=True)
    read = replace(reading, outlines=outlines, related=related, conventions=conventions)
    units = read.attach(diff.units())
    if subject.pull is not None and (changes := subject.pull[1].changes) is not None:
        # As the App does: evidence may be cited from files the config's paths leave out.
        units = [replace(unit, changes=changes) for unit in units]
    return units


async def _review(
    subject: _Subject,
    policy: DebatePolicy,
    proofs: AbstractAsyncContextManager[Proving | None],
    progress: CallProgress,
) -> Review:
    """The review of the subject's units (:func:`_units`) by its model, through `progress`."""
    try:
        units = await _units(subject)
        async with proofs as proving:
            expected = estimate(
                units, policy, tests=proving is not None, binary=subject.diff.binaries
            )
            click.echo(f"tiebreak: {expected.describe()}", err=True)
            progress.count([u.id for u in units])
            review = await review_units(
                units, progress, policy, proving=proving, summary=subject.summary
            )
            return review.model_copy(update={"estimate": expected})
    finally:
        if subject.llm is not None:
            await subject.llm.aclose()
