"""Learnings taught on a pull request, kept for the repository's later reviews.

A finding's thread teaches Tiebreak when the tester withdraws the finding after a person's
reply, when someone who may steer Tiebreak reacts 👎 to it, or when a writer resolves the pull
request with a reason in it. Who may teach is checked where each happens (a hearing hears only
the author or a writer on a thread Tiebreak started; a 👎 or `/tiebreak resolve` counts only
from a writer); here the rule is checked (:mod:`policies.learnings`) and kept, unless the
repository's config turns learning off.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import ValidationError

from agents.diff import Diff
from app.events import PullKey
from app.github.errors import GitHubError
from app.github.protocol import InstallationClient
from app.jobs.deps import WorkerDeps
from app.jobs.posted import posted_threads
from app.publishing import learnings
from app.publishing.fingerprints import Fingerprint
from app.publishing.publication import RunRecord
from app.publishing.rereview import PostedThread
from app.store.learnings import LearningStore, Recorded
from policies.learnings import (
    SENTENCE_END,
    Learning,
    Learnings,
    LearningsConfig,
    LearningSource,
    directory_glob,
)
from policies.permissions import WRITERS

REFUSED_CLAIM_CHARS = 200
"""Characters of a finding's claim a 👎's rule quotes: within a rule's 300, with its words."""

log = logging.getLogger(__name__)


def thread_url(pull_url: str, thread: int) -> str:
    """The address of the review thread starting with comment `thread`."""
    return f"{pull_url}#discussion_r{thread}"


async def teach(
    store: LearningStore,
    config: LearningsConfig,
    pull: PullKey,
    *,
    rule: str,
    path: str,
    login: str,
    source: LearningSource,
    thread: str,
    now: datetime,
) -> Recorded | None:
    """Keep what `login` taught about the finding on `path` in the thread at `thread`, for
    the files of its directory; None when learning is off or the rule is not one."""
    if not config.enabled or not rule.strip():
        return None
    try:
        learning = Learning(
            rule=rule,
            paths=(directory_glob(path),),
            source=source,
            taught_by=login,
            taught_at=now,
            thread_url=thread,
        )
    except ValidationError as exc:
        # The rule is model text: one that breaks the bounds teaches nothing, and the
        # finding's fate does not depend on it.
        log.info("a learning on %s was not kept: %s", pull.key, exc.errors()[0]["msg"])
        return None
    recorded = await store.record(pull.full_name, learning)
    if recorded.dropped is not None:
        log.info("%s dropped learning #%d, its oldest", pull.full_name, recorded.dropped)
    return recorded


async def applied(store: LearningStore, config: LearningsConfig, repository: str) -> Learnings:
    """What a review of the repository `owner/repo` applies: the config's learnings and those
    kept, unless the config turns learning off (then the store is not read)."""
    if not config.enabled:
        return Learnings()
    return Learnings.of(config, await store.all(repository))


async def learn_from_thumbs_down(
    github: InstallationClient,
    store: LearningStore,
    config: LearningsConfig,
    earlier: RunRecord | None,
    threads: Sequence[PostedThread],
    *,
    pull_url: str,
    now: datetime,
) -> list[Recorded]:
    """What the 👎s on Tiebreak's finding threads taught, read at a review under `config`:
    the first person who may steer Tiebreak (write access, not a bot) to react 👎 to a finding
    of `earlier` teaches that it does not apply to that file's directory, once per thread.
    GitHub sends no webhook for a reaction, so a 👎 is learned when Tiebreak next reviews the
    pull request."""
    if earlier is None or not config.enabled:
        return []
    pull, diff = earlier.ref, Diff.parse(earlier.diff, allow_empty=True)
    recorded: list[Recorded] = []
    for thread in threads:
        if not thread.disliked:
            continue
        claim = _claim(earlier, diff, thread)
        try:
            teacher = await _writer_among(github, pull, thread.comment_id) if claim else None
        except GitHubError as exc:
            # The review goes on without it; the 👎 stays, to be read at the next review.
            log.warning("could not read the 👎s on thread %s: %s", thread.comment_id, exc)
            continue
        if claim is None or teacher is None:
            continue
        if not await store.first_teaching(pull.full_name, thread.comment_id):
            continue
        learned = await teach(
            store,
            config,
            pull,
            rule=refusal(claim[1]),
            path=claim[0],
            login=teacher,
            source=LearningSource.THUMBS_DOWN,
            thread=thread_url(pull_url, thread.comment_id),
            now=now,
        )
        if learned:
            recorded.append(learned)
            await _say(
                github, pull, thread.comment_id, learnings.from_thumbs_down(teacher, *learned)
            )
    return recorded


async def _say(github: InstallationClient, pull: PullKey, thread: int, body: str) -> None:
    try:
        await github.reply_in_thread(pull, thread, body)
    except GitHubError as exc:
        # Learned all the same (`/tiebreak learnings` lists it); the thread may be gone.
        log.warning("could not reply on thread %s of %s: %s", thread, pull.key, exc)


def refusal(claim: str) -> str:
    """The rule a 👎 teaches: the finding's claim (its first sentence, clipped) refused."""
    first = SENTENCE_END.split(" ".join(claim.split()), maxsplit=1)[0].rstrip(".!?")
    kept = first if len(first) <= REFUSED_CLAIM_CHARS else first[: REFUSED_CLAIM_CHARS - 1] + "…"
    return f'A writer refused this finding here, do not raise it again: "{kept}."'


def _claim(earlier: RunRecord, diff: Diff, thread: PostedThread) -> tuple[str, str] | None:
    """The path and claim of the finding of `earlier` the thread is about, if one is."""
    for unit in earlier.review.units:
        for result in unit.findings:
            if thread.fingerprint.same_finding(Fingerprint.of(result.finding, diff)):
                return result.finding.path, result.finding.claim
    return None


async def _writer_among(github: InstallationClient, pull: PullKey, comment_id: int) -> str | None:
    """The first of those who reacted 👎 to the comment who may steer Tiebreak: a person
    (never a bot) with write access."""
    for person in await github.thumbs_down(pull, comment_id):
        if person.type == "Bot" or person.login.endswith("[bot]") or not person.login:
            continue
        if await github.permission(pull, person.login) in WRITERS:
            return person.login
    return None


async def listing(store: LearningStore, config: LearningsConfig, pull: PullKey) -> str:
    """`/tiebreak learnings`: the repository's learnings, under its `config`."""
    listed = await store.all(pull.full_name)
    return learnings.listing(listed, len(config.rules), config.enabled)


async def forget(store: LearningStore, pull: PullKey, number: int) -> tuple[bool, str]:
    """`/tiebreak forget N`: whether learning `number` was forgotten, and the answer."""
    if await store.forget(pull.full_name, number):
        return True, learnings.forgotten(number)
    return False, learnings.not_kept(number)


@dataclass(frozen=True)
class Taught:
    """Who teaches in a command on a pull request (whose page is `pull_url`)."""

    deps: WorkerDeps
    github: InstallationClient
    login: str
    pull_url: str

    async def resolved(self, record: RunRecord, thread: int, reason: str) -> str:
        """What `/tiebreak resolve <reason>` in the review thread starting with comment
        `thread` taught, said in a reply; empty when the thread is not one of Tiebreak's
        findings (the reason then teaches nothing)."""
        pull = record.ref
        threads = await posted_threads(self.github, pull)
        if all(t.comment_id != thread for t in threads):
            return ""
        path, _ = await self.github.review_comment_location(pull, thread)
        recorded = await teach(
            self.deps.learnings(),
            record.config.learnings,
            pull,
            rule=reason,
            path=path,
            login=self.login,
            source=LearningSource.RESOLVED,
            thread=thread_url(self.pull_url, thread),
            now=self.deps.clock(),
        )
        if recorded is None:
            return learnings.not_learned(record.config.learnings.enabled)
        return "Resolved." + learnings.learned(*recorded)
