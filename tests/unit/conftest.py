"""The unit tier's fixtures."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.support.openai_loopback import OpenAICompatible


@pytest.fixture
def openai_server():
    """The server's base URL; its answer is a chat completion until a test sets another."""
    OpenAICompatible.reply = {"choices": [{"message": {"content": "rewritten"}, "finish_reason": "stop"}]}
    OpenAICompatible.status, OpenAICompatible.delay_s, OpenAICompatible.seen = 200, 0.0, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), OpenAICompatible)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def table() -> Iterator[tuple[Any, Stubber]]:
    """A DynamoDB client whose answers the test queues (botocore's Stubber); an unqueued request fails the test."""
    client = boto3.client("dynamodb", region_name="eu-west-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()
