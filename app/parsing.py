"""Changed files parsed in worker processes, each within a budget of time and of memory.

A pull request's files are untrusted, and so is what they do to a parser: tree-sitter's C
and Java grammars take time and memory cubic in the length of `x=>x=>…1` (30 KB of it: minutes
and tens of gigabytes), and a parse holds the interpreter's lock the whole time, so a thread
would not keep the event loop going either. Files are therefore outlined
(:func:`agents.context.scopes.outline`) in the child processes of a pool (pebble's, which kills
a worker whose task runs past its timeout and starts another), under a cap on their address
space, a few small files to a task, and a file whose batch failed alone. A file whose parse
runs out of time or memory gets an outline that says so: its changes are shown by the lines
around them, and the review goes on.

The search across a repository's files for what they tell about a diff
(:func:`agents.context.related.related`: definitions, callers, tests) runs there too, over the
directory of the repository at the diff's head, within :data:`RELATED_BOUNDS` (seconds, files
listed and read, bytes) and, should a parse inside it hang, stopped :data:`RELATED_GRACE`
seconds past its time: the agents then read the changed files' code alone, and are told so
once.

The children fork from a forkserver that has imported the parsers and pebble's worker once,
so starting one after a kill costs milliseconds (a new pool answers its first parse in 13
ms; 35 ms when each child imported pebble's worker itself), and they share nothing with the
event loop's process (no lock held by a thread of it at the fork).
"""

import asyncio
import logging
import multiprocessing
import resource
import signal
from collections.abc import Callable, Mapping
from concurrent.futures import Future, TimeoutError
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pebble import CONSTS, ProcessExpired, ProcessPool

from agents.context.reading import MAX_SOURCE_CHARS
from agents.context.related import FALLBACK, Bounds, Related
from agents.context.scopes import Outline, outline_each, parsable, unparsed
from agents.diff import Diff
from app.source_tree import related_in

FILE_SECONDS = 5.0
"""Seconds of parsing one file may take. An ordinary file takes milliseconds (a 1 MB Python
module about half a second); past this, the parse is stopped."""
REVIEW_SECONDS = 30.0
"""Seconds of parsing all of a review's files may take; the files not parsed by then are
shown by lines."""
MEMORY_MB = 1_024
"""Megabytes of address space a parsing process may use: the parsers and a 1 MB file fit
many times over; a parse that runs past it is stopped."""
PROCESSES = 2
BATCH_CHARS = 64_000
"""Characters of source one parsing task takes at most: an ordinary file parses in a
millisecond or two, less than a task's round trip to a parsing process, so a review's files
go in a few batches rather than a task each (a warm review of 20 small files: 7.7 ms of
outlines before its first model call in tasks of one, ~1 ms in two batches)."""
RELATED_BOUNDS = Bounds()
"""What one search across a repository's files may spend (`agents.context.related.Bounds`)."""
RELATED_GRACE = 2.0
"""Seconds past its own time after which a search is stopped from outside."""
POOL_TICK = 0.02
"""Seconds between the pool's looks at its tasks and processes (pebble's `sleep_unit`, 0.1 by
default): a parse past its time or cancelled is stopped within it, and stopping the pool
waits for it (a worker's shutdown blocked its event loop ~60 ms at pebble's default, ~15 ms
at this)."""

log = logging.getLogger(__name__)

_PRELOADED = ["agents.context.scopes", "app.source_tree", "pebble.pool.process"]


@dataclass
class Parsing:
    """Outlines of files, each parsed in a worker process within its budgets. Made once per
    process (the pool starts on first use); :meth:`close` stops its processes."""

    file_seconds: float = FILE_SECONDS
    review_seconds: float = REVIEW_SECONDS
    memory_mb: int = MEMORY_MB
    processes: int = PROCESSES
    related_bounds: Bounds = RELATED_BOUNDS
    _pool: ProcessPool | None = field(default=None, init=False, repr=False)

    async def related(self, root: Path, diff: Diff) -> Related:
        """What the repository at `root` (a directory at the diff's new side) tells about
        the changes of `diff`, found in a parsing process within :attr:`related_bounds`; a
        search that could not run or end says why, for the agents to be told."""
        bounds = self.related_bounds
        try:
            search = self._schedule(
                related_in, (str(root), diff, bounds), bounds.seconds + RELATED_GRACE
            )
        except RuntimeError as exc:  # pebble's: no process could be started, twice
            log.error("the repository could not be searched: %s", exc)
            return Related(note=f"{FALLBACK}: no process could be started")
        found = asyncio.wrap_future(search)
        try:
            await asyncio.wait([found])
        finally:
            found.cancel()  # stops a search still running, should the review be cancelled
        error = found.exception()
        if error is None:
            result: Related = found.result()
            return result
        if isinstance(error, TimeoutError):
            return Related(note=f"{FALLBACK}: the search took longer than {bounds.seconds:g} s")
        if isinstance(error, ProcessExpired | MemoryError):
            return Related(note=f"{FALLBACK}: the search needed more than {self.memory_mb:,} MB")
        # The search's own failure costs the review its other files, never the review.
        log.warning("the repository's search failed: %s", error, exc_info=error)
        return Related(note=f"{FALLBACK}: the search failed ({type(error).__name__})")

    async def outlines(self, sources: Mapping[str, str]) -> dict[str, Outline]:
        """The outline of each file of `sources` (text by path) that a parser knows; a file
        whose parse did not end within the budgets gets one that says why.

        The files are parsed in a few batches (:data:`BATCH_CHARS`), each within
        :attr:`file_seconds`; a batch that fails (out of time or memory, or a parser's own
        failure) is parsed again file by file, so that only the file at fault loses its
        scopes, and its review waits up to twice :attr:`file_seconds` for it."""
        wanted = {
            path: text
            for path, text in sources.items()
            if parsable(path) and len(text) <= MAX_SOURCE_CHARS
        }
        if not wanted:
            return {}
        deadline = asyncio.get_running_loop().time() + self.review_seconds
        outlines, again = await self._parse(self._batches(wanted), wanted, deadline)
        if again:
            alone, _ = await self._parse([[path] for path in again], wanted, deadline)
            outlines |= alone
        return {path: outlines[path] for path in wanted}

    def _batches(self, wanted: Mapping[str, str]) -> list[list[str]]:
        """The files of `wanted` in batches of at most :data:`BATCH_CHARS` characters, as
        many as there are processes to share them (a larger file alone)."""
        small = [path for path, text in wanted.items() if len(text) <= BATCH_CHARS]
        batches = [[path] for path in wanted if len(wanted[path]) > BATCH_CHARS]
        each = -(-len(small) // self.processes)
        batch: list[str] = []
        size = 0
        for path in small:
            if batch and (len(batch) == each or size + len(wanted[path]) > BATCH_CHARS):
                batches.append(batch)
                batch, size = [], 0
            batch.append(path)
            size += len(wanted[path])
        return [*batches, batch] if batch else batches

    async def _parse(
        self, batches: list[list[str]], wanted: Mapping[str, str], deadline: float
    ) -> tuple[dict[str, Outline], list[str]]:
        """Each batch parsed in a task of its own by `deadline`; the outlines, and the files
        of each batch of several that failed, to be parsed again one by one."""
        try:
            parses = [
                asyncio.wrap_future(
                    self._schedule(
                        outline_each, ([(p, wanted[p]) for p in batch],), self.file_seconds
                    )
                )
                for batch in batches
            ]
        except RuntimeError as exc:  # pebble's: no process could be started, twice
            log.error("files could not be parsed: %s", exc)
            why = "no parser could be started"
            return {p: unparsed(wanted[p], why) for batch in batches for p in batch}, []
        try:
            remaining = deadline - asyncio.get_running_loop().time()
            await asyncio.wait(parses, timeout=max(remaining, 0.0))
        finally:
            for parse in parses:
                parse.cancel()  # stops a parse still running: its process is replaced
        outlines: dict[str, Outline] = {}
        again: list[str] = []
        for batch, parse in zip(batches, parses, strict=True):
            answers = _answers(parse, len(batch))
            if len(batch) > 1 and isinstance(answers[0], BaseException):
                again += batch
                continue
            for path, answer in zip(batch, answers, strict=True):
                outlines[path] = self._outcome(answer, wanted[path])
        return outlines, again

    def _outcome(self, answer: Outline | BaseException | None, text: str) -> Outline:
        """A file's outline from what its parse answered (None: it was stopped, the review's
        time for parsing spent)."""
        if answer is None:
            return unparsed(text, f"all files took longer than {self.review_seconds:g} s")
        if isinstance(answer, Outline):
            return answer
        if isinstance(answer, TimeoutError):
            return unparsed(text, f"its parse took longer than {self.file_seconds:g} s")
        if isinstance(answer, ProcessExpired | MemoryError):
            return unparsed(text, f"its parse needed more than {self.memory_mb:,} MB")
        # A parser's own failure costs the file its scopes, never the review.
        log.warning("a parse failed: %s", answer, exc_info=answer)
        return unparsed(text, f"its parser failed ({type(answer).__name__})")

    def _schedule(
        self, task: Callable[..., Any], args: tuple[Any, ...], seconds: float
    ) -> "Future[Any]":
        try:
            return self._started().schedule(task, args, timeout=seconds)
        except RuntimeError:  # the pool broke (its processes kept dying as they started)
            self.close()
            return self._started().schedule(task, args, timeout=seconds)

    def _started(self) -> ProcessPool:
        if self._pool is None:
            CONSTS.sleep_unit = POOL_TICK  # pebble's, for every pool of the process
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_PRELOADED)
            self._pool = ProcessPool(
                max_workers=self.processes,
                initializer=_as_parser,
                initargs=(self.memory_mb * 2**20,),
                context=context,
            )
        return self._pool

    def close(self) -> None:
        """Stop the worker processes, any parse still running with them."""
        if self._pool is not None:
            self._pool.stop()  # type: ignore[no-untyped-call]  # pebble leaves it untyped
            self._pool.join()
            self._pool = None


def _answers(
    parse: "asyncio.Future[list[Outline]]", files: int
) -> list[Outline | BaseException | None]:
    """What a batch's parse answered for each of its `files`: their outlines, or for all of
    them what stopped the batch (None: the review's time ran out)."""
    if parse.cancelled():
        return [None] * files
    error = parse.exception()
    if error is not None:
        return [error] * files
    return list(parse.result())


def _as_parser(limit: int) -> None:
    """In a parsing process, as it starts: allocations past `limit` bytes fail (tree-sitter
    then aborts the process, Python's parser raises MemoryError), and SIGTERM ends the
    process at once. pebble's own handler of it is Python code, which cannot run until a
    parse in C returns: the pool would wait 3 s before it sent SIGKILL. The pool terminates a
    worker only while the worker runs a task (a parse past its time) or as the pool stops,
    never while it holds the pool's channel."""
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
