"""Learnings taught on a pull request, kept for the repository's later reviews.

A finding's thread teaches Tiebreak when the tester withdraws the finding after a person's
reply, when a writer reacts 👎 to it, or when a writer resolves the pull request with a reason
in it. Only people who may write to the repository teach it: a reply by anyone else that
withdraws a finding (the author of a pull request from a fork) teaches that pull request
alone. Who may teach is checked where each happens (a hearing hears only the author or a
writer, and asks which; a 👎 counts only from a writer, :mod:`app.review.thumbs_down`; `/tiebreak
resolve` runs only for a writer); here the rule is checked (:mod:`policies.learnings`) and
kept, unless the repository's config turns learning off.

Learnings are kept by GitHub's id for the repository (the request's), never by its name. Those
an older Tiebreak kept under the repository's name are moved under its id the first time a job
of the repository finds them (:func:`repository_of`), if GitHub shows one of their threads in
this repository: a repository deleted and created again under the same name has none of them.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import ValidationError

from agents.diff import Diff
from app.events import PullKey
from app.github.errors import GitHubError
from app.github.installation_client import InstallationClient
from app.publishing import learnings_text
from app.publishing.fingerprints import Fingerprint
from app.publishing.publication import RunRecord
from app.publishing.rereview import PostedThread
from app.review.dependencies import ReviewDeps
from app.review.posted import posted_threads
from app.store.learnings import LearningStore, Recorded, Repository
from policies.learnings import (
    SENTENCE_END,
    Learning,
    Learnings,
    LearningsConfig,
    LearningSource,
    directory_glob,
)

REFUSED_CLAIM_CHARS = 200
"""Characters of a finding's claim a 👎's rule quotes: within a rule's 300, with its words."""

log = logging.getLogger(__name__)


def thread_url(pull_url: str, thread: int) -> str:
    """The address of the review thread starting with comment `thread`."""
    return f"{pull_url}#discussion_r{thread}"


async def repository_of(
    github: InstallationClient, store: LearningStore, pull: PullKey
) -> Repository | None:
    """The repository whose learnings `pull` reads and teaches, once the learnings an older
    Tiebreak kept under its name are its own if GitHub shows them to be; None when the request
    did not carry the repository's id (one queued by an older Tiebreak), which then neither
    reads nor keeps any."""
    if pull.repository_id is None:
        log.info("%s was queued without its repository's id: no learning read or kept", pull.key)
        return None
    repository = Repository(pull.repository_id, pull.full_name)
    for thread in await store.unadopted_threads(repository):
        try:
            await github.review_comment_location(pull, thread)
        except GitHubError as exc:
            if exc.status == 404:
                continue  # not a comment of this repository (or deleted since): no evidence
            log.warning("could not ask whether %s taught its older learnings: %s", pull.key, exc)
            return repository
        if await store.adopt(repository):
            log.info("the learnings kept under %s are now those of its id", pull.full_name)
        return repository
    return repository


async def teach(
    store: LearningStore,
    config: LearningsConfig,
    repository: Repository,
    *,
    rule: str,
    path: str,
    login: str,
    source: LearningSource,
    thread: str,
    now: datetime,
    pull: int | None = None,
) -> Recorded | None:
    """Keep what `login` taught about the finding on `path` in the thread at `thread`, for
    the files of its directory: in the repository, or in its pull request `pull` alone (who
    taught it may not write to the repository); None when learning is off or the rule is
    not one."""
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
            pull=pull,
        )
    except ValidationError as exc:
        # The rule is model text: one that breaks the bounds teaches nothing, and the
        # finding's fate does not depend on it.
        log.info("a learning on %s was not kept: %s", thread, exc.errors()[0]["msg"])
        return None
    recorded = await store.record(repository, learning)
    if recorded.dropped is not None:
        log.info("%s dropped learning #%d, its oldest", repository.full_name, recorded.dropped)
    return recorded


async def applied(
    store: LearningStore, config: LearningsConfig, repository: Repository | None, pull: int
) -> Learnings:
    """What a review of pull request `pull` applies: the config's learnings, the repository's
    kept ones and those kept for that pull request alone, unless the config turns learning
    off (then the store is not read)."""
    if not config.enabled or repository is None:
        return Learnings.of(config, ())
    own = await store.of_pull(repository.id, pull)
    return Learnings.of(config, [*await store.all(repository.id), *own])


async def learn_from_thumbs_down(
    github: InstallationClient,
    store: LearningStore,
    config: LearningsConfig,
    pull: PullKey,
    earlier: RunRecord | None,
    threads: Sequence[PostedThread],
    *,
    pull_url: str,
    now: datetime,
) -> list[Recorded]:
    """What the writers' 👎s on Tiebreak's finding threads taught, read at a review of `pull`
    under `config`: the first writer to react 👎 to a finding of `earlier` (as
    :func:`app.review.thumbs_down.refused` marked `threads`) teaches that it does not apply to that
    file's directory, once per thread. GitHub sends no webhook for a reaction, so a 👎 is
    learned when Tiebreak next reviews the pull request."""
    if earlier is None or not config.enabled:
        return []
    refused = [t for t in threads if t.refused_by]
    repository = await repository_of(github, store, pull) if refused else None
    if repository is None:
        return []
    diff = Diff.parse(earlier.diff, allow_empty=True)
    recorded: list[Recorded] = []
    for thread in refused:
        claim = _claim(earlier, diff, thread)
        if claim is None or not await store.first_teaching(repository, thread.comment_id):
            continue
        learned = await teach(
            store,
            config,
            repository,
            rule=refusal(claim[1]),
            path=claim[0],
            login=thread.refused_by,
            source=LearningSource.THUMBS_DOWN,
            thread=thread_url(pull_url, thread.comment_id),
            now=now,
        )
        if learned:
            recorded.append(learned)
            said = learnings_text.from_thumbs_down(thread.refused_by, *learned)
            await _say(github, pull, thread.comment_id, said)
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


async def listing(
    github: InstallationClient, store: LearningStore, config: LearningsConfig, pull: PullKey
) -> str:
    """`/tiebreak learnings` on `pull`: the repository's learnings and the pull request's own,
    under its `config`."""
    repository = await repository_of(github, store, pull)
    if repository is None:
        return learnings_text.listing([], [], len(config.rules), config.enabled)
    listed = await store.all(repository.id)
    own = await store.of_pull(repository.id, pull.number)
    return learnings_text.listing(listed, own, len(config.rules), config.enabled)


async def forget(
    github: InstallationClient, store: LearningStore, pull: PullKey, number: int
) -> tuple[bool, str]:
    """`/tiebreak forget N` on `pull`: whether learning `number` (the repository's, or the
    pull request's own) was forgotten, and the answer."""
    repository = await repository_of(github, store, pull)
    if repository is not None and await store.forget(repository.id, number, pull.number):
        return True, learnings_text.forgotten(number)
    return False, learnings_text.not_kept(number)


@dataclass(frozen=True)
class Taught:
    """Who teaches in a command on a pull request (whose page is `pull_url`)."""

    deps: ReviewDeps
    github: InstallationClient
    pull: PullKey
    login: str
    pull_url: str

    async def resolved(self, record: RunRecord, thread: int, reason: str) -> str:
        """What `/tiebreak resolve <reason>` in the review thread starting with comment
        `thread` taught, said in a reply; empty when the thread is not one of Tiebreak's
        findings (the reason then teaches nothing). Only a writer runs a command: the reason
        is kept for the repository."""
        threads = await posted_threads(self.github, self.pull)
        if all(t.comment_id != thread for t in threads):
            return ""
        path, _ = await self.github.review_comment_location(self.pull, thread)
        store = self.deps.learnings()
        repository = await repository_of(self.github, store, self.pull)
        recorded = None
        if repository is not None:
            recorded = await teach(
                store,
                record.config.learnings,
                repository,
                rule=reason,
                path=path,
                login=self.login,
                source=LearningSource.RESOLVED,
                thread=thread_url(self.pull_url, thread),
                now=self.deps.clock(),
            )
        if recorded is None:
            return learnings_text.not_learned(record.config.learnings.enabled)
        return "Resolved." + learnings_text.learned(*recorded)
