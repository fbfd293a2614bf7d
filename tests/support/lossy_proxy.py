"""A TCP proxy between the service and a DynamoDB endpoint that loses writes' answers on a seeded schedule.

Each write request (``PutItem``, ``UpdateItem``, ``DeleteItem``, ``TransactWriteItems``, ``BatchWriteItem``)
draws its fate from one seeded generator: most are forwarded and answered; a ``rate`` of them meet a fault:
- ``lost``: forwarded and applied, then the client's connection is closed before the answer;
- ``held``: forwarded and applied, the answer held past the client's read timeout, then the connection closed;
- ``cut``: the connection closed before the request is forwarded (nothing applied).
botocore then sends the request again on a new connection, as it does after a timeout or a reset: the retry
meets the first attempt's success (``lost``, ``held``) or nothing (``cut``). Reads pass untouched.

HTTP/1.1 framing only as far as botocore and moto's server use it: a request and its answer each carry
``Content-Length`` (an answer without one is read until the server closes); one upstream connection per request.
Requests reach the server one at a time, each answered before the next is forwarded, as DynamoDB applies
the writes to an item in order: plain moto is not thread-safe (a retry that overlapped its first attempt there
was cancelled and restored its copy of the table over that attempt's note, a fault DynamoDB does not have).
"""

from __future__ import annotations

import random
import socket
import socketserver
import threading
import time
from collections import Counter
from typing import BinaryIO

WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})
FAULTS = ("lost", "lost", "held", "cut")  # held costs the client its read timeout: drawn a quarter of the time


def _read_message(stream: BinaryIO, *, to_close: bool) -> bytes | None:
    """One HTTP message's bytes, None at the end of the stream; ``to_close``: without a length, read to the end."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = stream.readline()
        if not line:
            return None
        head += line
    length = None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None:
        return head + (stream.read() if to_close else b"")
    return head + stream.read(length)


def _operation(request: bytes) -> str:
    for line in request.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"x-amz-target":
            return value.strip().decode().rpartition(".")[2]
    return ""


class LossyProxy:
    """``with LossyProxy(upstream, seed=7) as endpoint:`` the proxy's address while it runs. ``faults`` counts
    the faults by (operation, kind), ``writes`` the write requests seen by operation."""

    def __init__(self, upstream: str, *, seed: int, rate: float = 0.25, hold_s: float = 2.5) -> None:
        host, _, port = upstream.removeprefix("http://").partition(":")
        self._upstream = (host, int(port))
        self._random = random.Random(seed)
        self._rate = rate
        self._hold_s = hold_s
        self._lock = threading.Lock()
        self._serial = threading.Lock()  # one request in the server at a time
        self.faults: Counter[tuple[str, str]] = Counter()
        self.writes: Counter[str] = Counter()
        self.enabled = True
        proxy = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                while (request := _read_message(self.rfile, to_close=False)) is not None:
                    fault = proxy._fate(_operation(request))
                    if fault == "cut":
                        return  # the connection closes before anything is forwarded
                    answer = proxy._forward(request)
                    if fault == "held":
                        time.sleep(proxy._hold_s)
                    if fault:
                        return  # applied; its answer never arrives
                    self.wfile.write(answer)
                    self.wfile.flush()

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True

    def __enter__(self) -> str:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _fate(self, operation: str) -> str | None:
        if operation not in WRITES or not self.enabled:
            return None
        with self._lock:
            self.writes[operation] += 1
            if self._random.random() >= self._rate:
                return None
            fault = self._random.choice(FAULTS)
            self.faults[operation, fault] += 1
            return fault

    def _forward(self, request: bytes) -> bytes:
        with self._serial, socket.create_connection(self._upstream, timeout=60) as upstream:
            upstream.sendall(request)
            with upstream.makefile("rb") as stream:
                answer = _read_message(stream, to_close=True)
        if answer is None:
            raise ConnectionError("the upstream closed without an answer")
        return answer
