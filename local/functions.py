"""The template's functions run in this process, one event at a time, as a Lambda sandbox runs them."""

from __future__ import annotations

import os
import threading
import time
import uuid
from typing import Any

from local.environment import ACCOUNT_ID, drop_unpublished_metrics
from local.lambda_context import LambdaContext
from local.template import function_names, load_handler, load_template


def function_setting(function: str, name: str, default: int) -> int:
    """A function property (``Timeout``, ``MemorySize``), else the template's Globals, else SAM's default."""
    template = load_template()
    props = template["Resources"][function]["Properties"]
    globals_ = template.get("Globals", {}).get("Function", {})
    return int(props.get(name, globals_.get(name, default)))


def lambda_context(function: str, request_id: str) -> LambdaContext:
    region = os.environ["AWS_DEFAULT_REGION"]
    return LambdaContext(
        function_name=function,
        memory_limit_in_mb=function_setting(function, "MemorySize", 128),
        aws_request_id=request_id,
        deadline=time.monotonic() + function_setting(function, "Timeout", 3),
        region=region,
        account_id=ACCOUNT_ID,
    )


class _FairLock:
    """A lock taken in the order it was asked for: an event source that invokes back to back (the queue's
    poller) never starves an HTTP request waiting for its turn, as a plain Lock, which is not fair, can."""

    def __init__(self) -> None:
        self._turns = threading.Condition()
        self._next_ticket = 0
        self._serving = 0

    def __enter__(self) -> None:
        with self._turns:
            ticket = self._next_ticket
            self._next_ticket += 1
            self._turns.wait_for(lambda: self._serving == ticket)

    def __exit__(self, *_: object) -> None:
        with self._turns:
            self._serving += 1
            self._turns.notify_all()


class Functions:
    """The template's functions, run in this process one event at a time, as one Lambda sandbox runs them.

    One at a time across all functions, not just per function: Powertools' resolver keeps the current
    event on a class attribute (``BaseRouter.current_event``) that every imported handler shares, so two
    events at once could read each other's body; the Logger's keys and the metric set are process-wide too.
    A slow event (a compression rewrite) therefore makes the others wait, which is fine on a laptop.
    """

    def __init__(self) -> None:
        self.names = frozenset(function_names())
        self._one_at_a_time = _FairLock()

    def warm(self) -> None:
        """Import every handler before listening: the first request is fast and import errors show now."""
        for name in self.names:
            load_handler(name)

    def invoke(self, function: str, event: Any, request_id: str | None = None) -> Any:
        """Run one event through the function's handler; its exceptions propagate, as Lambda reports them."""
        with self._one_at_a_time:
            context = lambda_context(function, request_id or str(uuid.uuid4()))  # the timeout starts now
            try:
                return load_handler(function)(event, context)
            finally:
                drop_unpublished_metrics()
