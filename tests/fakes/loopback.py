"""The HTTP plumbing the fakes share: a real server on 127.0.0.1, run on a background thread.

A fake subclasses :class:`LoopbackFake` and keeps only what is specific to the API it fakes:
it turns one request (method, target, lower-cased headers, raw body) into a
:class:`Response`. The server listens on an ephemeral port, speaks HTTP/1.1 keep-alive as the
clients' connection pools expect, and on `stop()` ends the connections they keep alive, so no
server or handler thread outlives the `with` block, and stops at once: socketserver's own loop
notices a stop only at its next look (tests stop a fake by the thousand).
"""

import contextlib
import selectors
import socket
import socketserver
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self


@dataclass(frozen=True, slots=True)
class Response:
    """One answer as it goes on the wire."""

    status: int
    content_type: str
    payload: bytes
    headers: Sequence[tuple[str, str]] = ()
    """Sent after `content-type` and `content-length`, in this order."""


def free_port() -> int:
    """A port nothing listens on at this moment on 127.0.0.1, for a server to be started there
    (another process may take it first)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


Respond = Callable[[str, str, Mapping[str, str], bytes], Response]
"""Answers one request, given its method, target (path and query), lower-cased headers and body.
The server's threads call it, several at a time."""


class LoopbackServer(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1 that can end its keep-alive connections when it stops.

    It serves the given methods (any other is answered 501) by calling `respond`.
    """

    # Handler threads are joined on close (no daemon threads left behind after a test).
    daemon_threads = False
    block_on_close = True
    # socketserver listens with a backlog of 5: a burst of concurrent clients (concurrent
    # reviews; githubkit allows 100 connections) would overflow it and see connections reset.
    request_queue_size = 128

    def __init__(self, respond: Respond, methods: Iterable[str]) -> None:
        self.respond = respond
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self.accepted = 0
        """Connections accepted so far: what a client's connection pool saves shows here."""
        # BaseHTTPRequestHandler answers a method it has no `do_<METHOD>` for with 501.
        handler = type(
            "LoopbackHandler",
            (_Handler,),
            {f"do_{method}": _Handler.serve for method in methods},
        )
        super().__init__(("127.0.0.1", 0), handler)
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        # Written to by `shutdown`, read by the loop's selector: a stop wakes the loop.
        self._woken, self._wake = socket.socketpair()

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """socketserver's loop (accept, hand each connection to its thread), woken at once by
        :meth:`shutdown`."""
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self, selectors.EVENT_READ)
                selector.register(self._woken, selectors.EVENT_READ)
                while not self._stopping.is_set():
                    ready = selector.select(poll_interval)
                    if self._stopping.is_set():
                        break
                    if any(key.fileobj is self for key, _ in ready):
                        self._accept()
                    self.service_actions()
        finally:
            self._stopped.set()

    def _accept(self) -> None:
        """One connection accepted and handed to its thread, as socketserver does it."""
        try:
            request, client_address = self.get_request()
        except OSError:
            return
        try:
            self.process_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
            self.shutdown_request(request)
        except BaseException:
            self.shutdown_request(request)
            raise

    def shutdown(self) -> None:
        """Stop the loop and wait until it has stopped (as socketserver's does)."""
        self._stopping.set()
        self._wake.send(b"\0")
        self._stopped.wait()

    def server_close(self) -> None:
        super().server_close()
        self._woken.close()
        self._wake.close()

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host name up (socket.getfqdn), which can stall on a
        # machine without DNS; the fake needs no name.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
            self.accepted += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # the client closed it already
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the clients' connection pools expect
    # Headers and body go out in separate writes; with Nagle's algorithm the body would wait
    # for the client's delayed ACK (~40 ms a call).
    disable_nagle_algorithm = True
    server: LoopbackServer

    def serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        response = self.server.respond(self.command, self.path, headers, raw)
        try:
            self.send_response(response.status)
            self.send_header("content-type", response.content_type)
            self.send_header("content-length", str(len(response.payload)))
            for name, value in response.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(response.payload)
        except (BrokenPipeError, ConnectionResetError):
            # The client went away while its request was answered (a killed process): what
            # it asked is recorded; there is no one left to answer.
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: a test's output is its own."""


class LoopbackFake:
    """The lifecycle of a fake served by a :class:`LoopbackServer`.

    Use it as a context manager; `base_url` is valid inside. A subclass names itself
    (`description`, `thread_name`), lists the `methods` it serves, answers in `_respond`, and
    says in `_problems_error` what leaving the `with` block raises when `strict` and
    `problems` were noted.
    """

    description: ClassVar[str]
    """What the fake is, for errors: "the fake … API"."""
    thread_name: ClassVar[str]
    methods: ClassVar[tuple[str, ...]]

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict
        self.problems: list[str] = []
        self._server: LoopbackServer | None = None
        self._thread: threading.Thread | None = None

    def _respond(
        self, method: str, target: str, headers: Mapping[str, str], raw: bytes
    ) -> Response:
        raise NotImplementedError

    def _problems_error(self) -> Exception:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`, without a trailing slash."""
        if self._server is None:
            raise RuntimeError(f"{self.description} is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def connections(self) -> int:
        """How many connections clients have opened to the fake."""
        if self._server is None:
            raise RuntimeError(f"{self.description} is not running")
        return self._server.accepted

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError(f"{self.description} is already running")
        self._server = LoopbackServer(self._respond, self.methods)
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.thread_name)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.shutdown()
        thread.join()
        # Clients keep connections alive; end them so the handler threads can be joined.
        server.drop_connections()
        server.server_close()
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
        if self.strict and self.problems and exc_type is None:
            raise self._problems_error()
