"""A call bounded by a deadline of its own, whatever the bounds of the client inside it.

A provider's timeouts bound one request; a slow stream, a stuck connection or a chain of retries can
still outlast the time a caller has. ``within`` runs the call on its own daemon thread and waits at most
``timeout_s``: a call that overruns is abandoned (its result is never used), and since every call has
its own thread, an abandoned one never delays the next.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """The call did not finish within its time; it goes on, abandoned, on its own thread."""


def within(timeout_s: float, call: Callable[[], T], *, name: str) -> T:
    """``call()``'s result or its exception, or DeadlineExceeded after ``timeout_s`` seconds. The call runs in a
    copy of the caller's context (its context variables), as it would on the caller's thread."""
    outcome: dict[str, Any] = {}

    def _run() -> None:
        try:
            outcome["value"] = call()
        except Exception as error:  # noqa: BLE001 - raised again in the caller's thread below
            outcome["error"] = error

    worker = threading.Thread(target=contextvars.copy_context().run, args=(_run,), name=name, daemon=True)
    worker.start()
    worker.join(max(timeout_s, 0.0))
    if worker.is_alive():
        raise DeadlineExceeded(f"{name} did not finish within {timeout_s:.1f} s")
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value
