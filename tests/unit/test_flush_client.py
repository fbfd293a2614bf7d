"""The chat backend's flush helper: a 5-second client-side bound, and never an exception."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from agent_memory_client import FLUSH_TIMEOUT_S, flush_before_compaction, flush_lambda_client

CONTEXT = {"user_id": "u-1", "thread_id": "t-1", "visibility": "private"}
MESSAGES = [{"role": "user", "content": "hello"}]


class _FakeLambda(BaseHTTPRequestHandler):
    """Answers the Lambda Invoke API the way each test sets: slowly, with an error, or with a payload."""

    delay_s = 0.0
    status = 200
    headers_out: ClassVar[dict] = {}
    body: ClassVar[object] = {"status": "written", "note": None}
    seen: ClassVar[list] = []

    def do_POST(self):
        type(self).seen.append((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
        time.sleep(self.delay_s)
        payload = json.dumps(self.body).encode()
        try:
            self.send_response(self.status)
            for key, value in self.headers_out.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def _client_of_the_fake():
    """One fake endpoint and one client for the file: each client built loads botocore's Lambda model again
    (0.15 to 0.4 s a test on a busy machine). Each test sets the fake's answer afresh (``lambda_client``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeLambda)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield flush_lambda_client(
        endpoint_url=f"http://127.0.0.1:{server.server_address[1]}",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    server.shutdown()
    server.server_close()


@pytest.fixture
def lambda_client(_client_of_the_fake):
    _FakeLambda.delay_s, _FakeLambda.status, _FakeLambda.headers_out = 0.0, 200, {}
    _FakeLambda.body, _FakeLambda.seen = {"status": "written", "note": None}, []
    return _client_of_the_fake


def _flush(client, **kwargs):
    return flush_before_compaction(
        client, "FlushFunction", context=CONTEXT, compaction_id="cmp-1", messages=MESSAGES, **kwargs
    )


def test_the_default_timeout_is_5_seconds():
    assert FLUSH_TIMEOUT_S == 5.0


def test_it_invokes_the_function_with_the_contract_payload(lambda_client):
    assert _flush(lambda_client) == {"status": "written", "note": None}

    path, payload = _FakeLambda.seen[0]
    assert path == "/2015-03-31/functions/FlushFunction/invocations"
    assert payload == {"context": CONTEXT, "compaction_id": "cmp-1", "messages": MESSAGES}


def test_a_slow_function_gives_failed_at_the_timeout(lambda_client):
    _flush(lambda_client)  # the client's first call loads botocore's models: not part of what is timed
    _FakeLambda.delay_s = 10
    started = time.monotonic()

    answer = _flush(lambda_client, timeout_s=0.5)

    assert time.monotonic() - started < 5  # well before the answer: a loaded machine must not fail it
    assert answer == {"status": "failed", "note": None, "reason": "no answer within 0.5 s"}


@pytest.mark.parametrize(
    ("status", "headers", "body", "reason"),
    [
        (200, {"X-Amz-Function-Error": "Unhandled"}, {"errorMessage": "boom"}, "the flush function failed"),
        (
            404,
            {"x-amzn-ErrorType": "ResourceNotFoundException"},
            {"Message": "Function not found"},
            "ResourceNotFoundException",
        ),
        (
            429,
            {"x-amzn-ErrorType": "TooManyRequestsException"},
            {"message": "Rate exceeded"},
            "TooManyRequestsException",
        ),
        (200, {}, {"status": "maybe"}, "unknown shape"),
        (200, {}, ["not", "an", "object"], "unknown shape"),
    ],
)
def test_every_problem_is_failed_never_an_exception(lambda_client, status, headers, body, reason):
    _FakeLambda.status, _FakeLambda.headers_out, _FakeLambda.body = status, headers, body

    answer = _flush(lambda_client)

    assert answer["status"] == "failed"
    assert reason in answer["reason"]


def test_an_unserialisable_message_is_failed(lambda_client):
    answer = flush_before_compaction(
        lambda_client, "FlushFunction", context=CONTEXT, compaction_id="c", messages=[{"x": object()}]
    )

    assert answer["status"] == "failed"
