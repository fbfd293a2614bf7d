"""One read started aside while the caller makes another: ``/v1/context`` reads the document and the recent
notes at once (two DynamoDB round trips in the time of the slower one). A few threads per process, kept
for the sandbox's life; a boto3 client is safe to share between threads. A forked child (the local stack's
sandboxes, the tests') gets a pool of its own: the parent's threads do not exist there."""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

_pool: ThreadPoolExecutor | None = None


def _forget_pool() -> None:
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


def start_aside(read: Callable[[], T]) -> Future[T]:
    """``read`` on a pool thread, started now, in a copy of the caller's context (its context variables, as
    asyncio gives a task); its ``result()`` gives its answer or raises its error."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="aside")
    return _pool.submit(contextvars.copy_context().run, read)
