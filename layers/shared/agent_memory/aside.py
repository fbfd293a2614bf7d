"""One read started aside while the caller makes another: ``/v1/context`` reads the document and the recent
notes at once (two DynamoDB round trips in the time of the slower one). A few threads per process, kept
for the sandbox's life; a boto3 client is safe to share between threads."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="aside")


def start_aside(read: Callable[[], T]) -> Future[T]:
    """``read`` on a pool thread, started now; its ``result()`` gives its answer or raises its error."""
    return _POOL.submit(read)
