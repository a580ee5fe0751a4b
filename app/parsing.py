"""Changed files parsed in worker processes, each within a budget of time and of memory.

A pull request's files are untrusted, and so is what they do to a parser: tree-sitter's C
and Java grammars take time and memory cubic in the length of `x=>x=>…1` (30 KB of it: minutes
and tens of gigabytes), and a parse holds the interpreter's lock the whole time, so a thread
would not keep the event loop going either. Each file is therefore outlined
(:func:`agents.context.scopes.outline`) in a child process of a pool (pebble's, which kills a worker
whose task runs past its timeout and starts another), under a cap on its address space. A
file whose parse runs out of time or memory gets an outline that says so: its changes are
shown by the lines around them, and the review goes on.

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
from agents.context.scopes import Outline, outline, parsable, unparsed
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
        whose parse did not end within the budgets gets one that says why."""
        wanted = {
            path: text
            for path, text in sources.items()
            if parsable(path) and len(text) <= MAX_SOURCE_CHARS
        }
        if not wanted:
            return {}
        try:
            parses = {
                path: asyncio.wrap_future(self._schedule(outline, (path, text), self.file_seconds))
                for path, text in wanted.items()
            }
        except RuntimeError as exc:  # pebble's: no process could be started, twice
            log.error("files could not be parsed: %s", exc)
            return {
                path: unparsed(text, "no parser could be started") for path, text in wanted.items()
            }
        try:
            await asyncio.wait(parses.values(), timeout=self.review_seconds)
        finally:
            for parse in parses.values():
                parse.cancel()  # stops a parse still running: its process is replaced
        return {path: self._outcome(parse, wanted[path]) for path, parse in parses.items()}

    def _outcome(self, parse: "asyncio.Future[Outline]", text: str) -> Outline:
        if parse.cancelled():
            return unparsed(text, f"all files took longer than {self.review_seconds:g} s")
        error = parse.exception()
        if error is None:
            return parse.result()
        if isinstance(error, TimeoutError):
            return unparsed(text, f"its parse took longer than {self.file_seconds:g} s")
        if isinstance(error, ProcessExpired | MemoryError):
            return unparsed(text, f"its parse needed more than {self.memory_mb:,} MB")
        # A parser's own failure costs the file its scopes, never the review.
        log.warning("a parse failed: %s", error, exc_info=error)
        return unparsed(text, f"its parser failed ({type(error).__name__})")

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


def _as_parser(limit: int) -> None:
    """In a parsing process, as it starts: allocations past `limit` bytes fail (tree-sitter
    then aborts the process, Python's parser raises MemoryError), and SIGTERM ends the
    process at once. pebble's own handler of it is Python code, which cannot run until a
    parse in C returns: the pool would wait 3 s before it sent SIGKILL. The pool terminates a
    worker only while the worker runs a task (a parse past its time) or as the pool stops,
    never while it holds the pool's channel."""
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
