"""HTTP plumbing shared by the stack's two servers: read a whole request, answer it, log one line, reply."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from local.environment import HOST, log, utc_stamp
from local.functions import Functions


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)


def _loopback(host: str) -> bool:
    """``127.x.y.z``, ``localhost`` or ``[::1]``, with or without a port."""
    name = host.strip().lower()
    name = name[1 : name.index("]")] if name.startswith("[") and "]" in name else name.rsplit(":", 1)[0]
    return name in {"localhost", "::1"} or (name.startswith("127.") and name.replace(".", "").isdigit())


def cross_site_refusal(headers: Any) -> Reply | None:
    """A refusal for a request that a web page on another site, or a DNS name rebound to this machine, sent:
    a ``Host`` or an ``Origin`` that is not loopback (a browser always sends both on a cross-site POST). The
    stack may write to a real table; no page a developer opens may reach it."""
    host, origin = headers.get("Host"), headers.get("Origin")
    if host is not None and not _loopback(host):
        return json_reply(
            403, {"error": {"code": "forbidden", "message": "the local stack answers only to a loopback Host"}}
        )
    if origin is not None:
        parts = urlsplit(origin)
        if parts.scheme not in {"http", "https"} or not _loopback(parts.netloc):
            message = "the local stack answers only to pages of its own origin (a loopback Origin)"
            return json_reply(403, {"error": {"code": "forbidden", "message": message}})
    return None


def json_reply(status: int, body: Any, headers: Iterable[tuple[str, str]] = ()) -> Reply:
    """A JSON reply, compact like the handlers' own."""
    body_bytes = json.dumps(body, separators=(",", ":")).encode()
    return Reply(status, body_bytes, [("Content-Type", "application/json"), *headers])


@dataclass(frozen=True)
class Answer:
    """A reply and what the request's log line says about it: ``<what> -> <status> <who>``."""

    reply: Reply
    what: str
    who: str = ""


class LocalServer(ThreadingHTTPServer):
    """A thread per request; daemon threads, so that shutdown never waits on a slow function."""

    daemon_threads = True
    request_queue_size = 1024  # listen backlog: 200 concurrent clients must never see a reset (socketserver's is 5)

    def __init__(self, port: int, handler: type[RequestHandler], functions: Functions) -> None:
        super().__init__((HOST, port), handler)
        self.functions = functions

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-answer is not worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class RequestHandler(BaseHTTPRequestHandler):
    """Reads a whole request, lets ``answer`` decide, logs one line, writes the whole reply.

    http.server's own per-request log is silenced; every method goes through ``answer``.
    """

    protocol_version = "HTTP/1.1"  # keep-alive: boto3 and curl reuse connections
    server_version = "agent-memory-local"
    server: LocalServer

    def answer(self, body: bytes) -> Answer:
        """What each server does with a request whose body has been read."""
        raise NotImplementedError

    def handle_request(self) -> None:
        """Every HTTP method lands here: read, answer, one log line, reply; the connection stays open."""
        started = time.perf_counter()
        try:
            body = self.read_body()
        except ValueError:
            self.close_connection = True  # the stream is out of step with the framing; start afresh
            unreadable = json_reply(400, {"error": {"code": "bad_request", "message": "unreadable body"}})
            answer = Answer(unreadable, f"{self.command} {urlsplit(self.path).path}")
        else:
            refused = cross_site_refusal(self.headers)
            answer = (
                self.answer(body) if refused is None else Answer(refused, f"{self.command} {urlsplit(self.path).path}")
            )
        elapsed = (time.perf_counter() - started) * 1000
        who = f" {answer.who}" if answer.who else ""
        log(f"{utc_stamp()} {answer.what} -> {answer.reply.status}{who} {elapsed:.1f}ms")
        self.send(answer.reply)  # after the log line: a client that sees the reply finds its line written

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_request

    def __getattr__(self, name: str) -> Any:
        """Any other method (TRACE, QUERY...) is routed too: API Gateway answers it, never http.server's HTML 501."""
        if name.startswith("do_"):
            return self.handle_request
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        """Silenced: ``handle_request`` writes one line per request instead."""

    def read_body(self) -> bytes:
        """The request body, by ``Content-Length`` or chunked transfer encoding (curl -T, streaming clients)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers, up to the blank line
                pass
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)


def serve(handler: type[RequestHandler], port: int, functions: Functions) -> LocalServer:
    """Bind now (so a taken port fails at startup) and serve on a daemon thread."""
    try:
        server = LocalServer(port, handler, functions)
    except OSError as error:
        raise SystemExit(f"cannot listen on {HOST}:{port}: {error.strerror}") from error
    serve_forever = partial(server.serve_forever, poll_interval=0.1)  # Ctrl-C answered within 0.1 s
    threading.Thread(target=serve_forever, name=f"{handler.__name__}:{port}", daemon=True).start()
    return server
