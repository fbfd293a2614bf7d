"""Calling the handlers as Lambda does: the answer's shape, the route table of the events, a free port."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from local.lambda_context import LambdaContext
from local.template import load_handler
from tests.support.events import load_event

NOW = "2026-12-03T10:15:00Z"


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


Call = Callable[..., Answer]


ROUTE_FUNCTIONS = {
    "remember": "ToolsFunction",
    "update_memory": "ToolsFunction",
    "list_tools": "ToolsFunction",
    "health": "ToolsFunction",
    "recall": "ToolsFunction",
    "extract": "ToolsFunction",
    "context": "ContextFunction",
    "flush": "FlushFunction",
}


def make_caller(handler_for: Callable[[str], Callable[..., Any]], lambda_context: LambdaContext) -> Call:
    def _call(name: str, body: Any = ..., *, raw_body: str | None = None) -> Answer:
        event = load_event(name, raw_body=raw_body) if body is ... else load_event(name, body, raw_body=raw_body)
        result = handler_for(ROUTE_FUNCTIONS[name])(event, lambda_context)
        if "statusCode" not in result:  # a directly invoked function answers with the payload itself
            return Answer(200, result, {})
        payload = json.loads(result["body"]) if result.get("body") else None
        return Answer(result["statusCode"], payload, result.get("headers", {}))

    return _call


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free now: each socket is held until all are bound, so that the system cannot hand
    the same port out twice (two ``free_port()`` calls in a row once gave a local stack one port for both of its
    servers, and it could not listen)."""
    with contextlib.ExitStack() as held:
        socks = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]


def free_port() -> int:
    return free_ports(1)[0]


@pytest.fixture
def keyed(aws, lambda_context):
    """Call a tool route with an ``Idempotency-Key`` header."""

    def _call(name, body, key):
        def handler_for(function):
            def _with_key(event, context):
                event["headers"]["Idempotency-Key"] = key
                return load_handler(function)(event, context)

            return _with_key

        assert ROUTE_FUNCTIONS[name] == "ToolsFunction"
        return make_caller(handler_for, lambda_context)(name, body)

    return _call
