"""The send, the one thing the blocking and the async clients do differently: ``httpx.Client`` or
``httpx.AsyncClient``, ``time.sleep`` or ``asyncio.sleep`` between tries. Building each try's request,
deciding whether to try again and reading the answer are ``exchange.py``'s, shared by both.

httpx carries the requests: pooled connections, a timeout on every phase, the ``auth=`` a client picked
(``auth.py``), and a transport a test can swap (``http=httpx.Client(transport=httpx.MockTransport(...))``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Generic, Self, TypedDict, TypeVar

import httpx

from agent_memory_client.exchange import Blocking, Call, Exchange, RetryPolicy

T = TypeVar("T")
H = TypeVar("H", httpx.Client, httpx.AsyncClient)
USER_AGENT = "agent-memory-client/0.1"


class PoolOptions(TypedDict, total=False):
    """``timeout_s``: 10 s on each phase of a request (connect, read, write, pool); ``retry``: a
    :class:`RetryPolicy` (three tries by default)."""

    timeout_s: float
    retry: RetryPolicy | None


def reject_unknown(options: Mapping[str, object], declared: Any) -> None:
    """Keyword arguments gathered in ``**options`` that ``declared`` (a TypedDict) does not name are a
    TypeError, as unknown keywords are for any function (a misspelt ``regoin=`` must not pass unseen)."""
    if unknown := sorted(set(options) - declared.__required_keys__ - declared.__optional_keys__):
        raise TypeError(f"unexpected keyword arguments: {', '.join(unknown)}")


def _pool(options: PoolOptions) -> dict[str, Any]:
    """The pool a client opens when it is given none: no proxy or ``.netrc`` from the environment either (a
    signed request goes where it was signed for)."""
    return {"timeout": options.get("timeout_s", 10.0), "headers": {"user-agent": USER_AGENT}, "trust_env": False}


class _Sends(Generic[H]):
    def __init__(self, endpoint: str, auth: httpx.Auth | None, retry: RetryPolicy | None, http: H) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.auth = auth
        self.retry = retry or RetryPolicy()
        self._http: H = http


class Transport(_Sends[httpx.Client]):
    """Blocking sends on one ``httpx.Client`` pool."""

    @classmethod
    def open(cls, endpoint: str, auth: httpx.Auth | None, options: PoolOptions, http: httpx.Client | None) -> Self:
        return cls(endpoint, auth, options.get("retry"), http or httpx.Client(**_pool(options)))

    def send(self, call: Call[T] | Blocking[T]) -> T:
        if isinstance(call, Blocking):
            return call.run()
        exchange = Exchange(self.endpoint, call, self.retry)
        while (wait := exchange.settle(self._try(exchange.request(self._http)))) is not None:
            self.retry.sleep(wait)
        return exchange.answer

    def _try(self, request: httpx.Request) -> httpx.Response | httpx.TransportError:
        try:
            return self._http.send(request, auth=self.auth)
        except httpx.TransportError as error:
            return error

    def close(self) -> None:
        self._http.close()


class AsyncTransport(_Sends[httpx.AsyncClient]):
    """The same sends, awaited, on one ``httpx.AsyncClient`` pool."""

    @classmethod
    def open(cls, endpoint: str, auth: httpx.Auth | None, options: PoolOptions, http: httpx.AsyncClient | None) -> Self:
        return cls(endpoint, auth, options.get("retry"), http or httpx.AsyncClient(**_pool(options)))

    async def send(self, call: Call[T] | Blocking[T]) -> T:
        if isinstance(call, Blocking):
            return await asyncio.to_thread(call.run)
        exchange = Exchange(self.endpoint, call, self.retry)
        while (wait := exchange.settle(await self._try(exchange.request(self._http)))) is not None:
            await self.retry.async_sleep(wait)
        return exchange.answer

    async def _try(self, request: httpx.Request) -> httpx.Response | httpx.TransportError:
        try:
            return await self._http.send(request, auth=self.auth)
        except httpx.TransportError as error:
            return error

    async def aclose(self) -> None:
        await self._http.aclose()


class SyncBase:
    """The blocking half of a client: its transport, and ``close()`` (or a ``with`` block) for its pool."""

    _transport: Transport

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncBase:
    """The async half of a client: its transport, and ``await aclose()`` (or ``async with``) for its pool."""

    _transport: AsyncTransport

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
