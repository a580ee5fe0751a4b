"""Changed files parsed in worker processes, each within a budget of time and of memory.

A pull request's files are untrusted, and so is what they do to a parser: tree-sitter's C
and Java grammars take time and memory cubic in the length of `x=>x=>…1` (30 KB of it: minutes
and tens of gigabytes), and a parse holds the interpreter's lock the whole time, so a thread
would not keep the event loop going either. Each file is therefore outlined
(:func:`agents.scopes.outline`) in a child process of a pool (pebble's, which kills a worker
whose task runs past its timeout and starts another), under a cap on its address space. A
file whose parse runs out of time or memory gets an outline that says so: its changes are
shown by the lines around them, and the review goes on.

The children fork from a forkserver that has imported the parsers once, so starting one
after a kill costs milliseconds, and they share nothing with the event loop's process
(no lock held by a thread of it at the fork).
"""

import asyncio
import logging
import multiprocessing
import resource
import signal
from collections.abc import Mapping
from concurrent.futures import Future, TimeoutError
from dataclasses import dataclass, field

from pebble import ProcessExpired, ProcessPool

from agents.context import MAX_SOURCE_CHARS
from agents.scopes import Outline, outline, parsable, unparsed

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

log = logging.getLogger(__name__)

_PRELOADED = ["agents.scopes"]


@dataclass
class Parsing:
    """Outlines of files, each parsed in a worker process within its budgets. Made once per
    process (the pool starts on first use); :meth:`close` stops its processes."""

    file_seconds: float = FILE_SECONDS
    review_seconds: float = REVIEW_SECONDS
    memory_mb: int = MEMORY_MB
    processes: int = PROCESSES
    _pool: ProcessPool | None = field(default=None, init=False, repr=False)

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
                path: asyncio.wrap_future(self._schedule(path, text))
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

    def _schedule(self, path: str, text: str) -> "Future[Outline]":
        try:
            return self._started().schedule(outline, (path, text), timeout=self.file_seconds)
        except RuntimeError:  # the pool broke (its processes kept dying as they started)
            self.close()
            return self._started().schedule(outline, (path, text), timeout=self.file_seconds)

    def _started(self) -> ProcessPool:
        if self._pool is None:
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
