"""The HTTP transport of every GitHub request of a process: one TLS context, one pool.

githubkit opens an httpx client for each request it sends, and a client made without a
transport builds its own: a TLS context (loading the CA store, tens of milliseconds of CPU)
and a fresh connection, for every call. Given this transport instead, githubkit's clients are
thin wrappers round it: the TLS context is made once per process.

Between :meth:`ConnectionPool.open` (a worker's start) and :meth:`ConnectionPool.close` (its
shutdown), connections to GitHub stay open from one request to the next, in one pool. Outside
those, each request asks for its connection to be closed once it is answered, so that a
process that never closes the pool (a test, a one-off command) leaves nothing open.
"""

import asyncio
import functools
import ssl

import httpx


class ConnectionPool(httpx.AsyncBaseTransport):
    """The HTTP transport shared by every client githubkit makes for one App."""

    def __init__(self) -> None:
        self._pool: httpx.AsyncHTTPTransport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def open(self) -> None:
        """Keep connections open between the requests made on the running event loop (a
        connection belongs to the loop that opened it), until :meth:`close`."""
        loop = asyncio.get_running_loop()
        if self._pool is None or self._loop is not loop:
            self._pool, self._loop = httpx.AsyncHTTPTransport(verify=tls_context()), loop

    async def close(self) -> None:
        """Close the open connections; from now on each request closes its own."""
        pool, self._pool, self._loop = self._pool, None, None
        if pool is not None:
            await pool.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._pool is not None and self._loop is asyncio.get_running_loop():
            return await self._pool.handle_async_request(request)
        request.headers["Connection"] = "close"
        transport = httpx.AsyncHTTPTransport(verify=tls_context())
        return await transport.handle_async_request(request)

    async def aclose(self) -> None:
        """Called by each of githubkit's per-request clients as it closes: the pool stays
        open (see :meth:`close`)."""


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's TLS context for GitHub, made on first use (a process that never calls
    GitHub never loads the CA store) and shared by every App client the process makes."""
    return httpx.create_ssl_context()
