"""The Python client's two flavours (blocking, async) that tests/client holds to the same assertions, the fake
model's flush summary its stack answers with, and a conversation's context."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx
from agent_memory_client import (
    AsyncManagementClient,
    AsyncMemoryClient,
    AsyncPlatformOperations,
    ConversationContext,
    ManagementClient,
    MemoryClient,
    RetryPolicy,
)
from anyio.from_thread import BlockingPortal

FLUSH_SUMMARY = "Planning the billing migration; open: payments sign-off from Dana."


class Awaited:
    """An async client driven from a test's synchronous code: each method call runs on the portal's event loop
    (one loop for the client's whole life, as its connection pool wants), and ``close()`` is its ``aclose()``."""

    def __init__(self, client: Any, portal: BlockingPortal) -> None:
        self._client = client
        self._portal = portal

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if isinstance(attribute, AsyncPlatformOperations):  # ``admin``: its methods are awaited too
            return Awaited(attribute, self._portal)
        if not callable(attribute):
            return attribute
        return lambda *args, **kwargs: self._portal.call(partial(attribute, *args, **kwargs))

    def close(self) -> None:
        self._portal.call(self._client.aclose)

    def __enter__(self) -> Awaited:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


@dataclass
class Flavour:
    """Opens the blocking clients, or the async ones behind :class:`Awaited`: a test written against the
    blocking API holds both to its assertions."""

    name: str
    portal: BlockingPortal

    def mock(self, handler: Callable[[httpx.Request], httpx.Response]) -> httpx.Client | httpx.AsyncClient:
        """An httpx client of this flavour whose requests ``handler`` answers (httpx's MockTransport)."""
        http = httpx.Client if self.name == "sync" else httpx.AsyncClient
        return http(transport=httpx.MockTransport(handler))

    def retry(self, sleeps: list[float], **policy: Any) -> RetryPolicy:
        """A retry policy that records each wait instead of waiting, in this flavour's way of sleeping."""

        async def record(seconds: float) -> None:
            sleeps.append(seconds)

        return RetryPolicy(sleep=sleeps.append, async_sleep=record, **policy)

    def memory(self, endpoint: str, **options: Any) -> MemoryClient:
        if self.name == "sync":
            return MemoryClient(endpoint, **options)
        return Awaited(AsyncMemoryClient(endpoint, **options), self.portal)  # type: ignore[return-value]

    def management(self, endpoint: str, **options: Any) -> ManagementClient:
        if self.name == "sync":
            return ManagementClient(endpoint, **options)
        return Awaited(AsyncManagementClient(endpoint, **options), self.portal)  # type: ignore[return-value]


def conversation_context(user: str, thread: str = "t-1", **extra: Any) -> ConversationContext:
    return ConversationContext(user_id=user, thread_id=thread, **extra)
