"""The clients: the chat backend's (tools, context, flush) and the dashboard's, each blocking or async.

::

    memory = MemoryClient("https://abc123.execute-api.eu-west-1.amazonaws.com",   # SigV4, standard chain
                          flush_function="agent-memory-FlushFunction-XYZ")
    local = MemoryClient("http://127.0.0.1:3000", lambda_endpoint="http://127.0.0.1:3001")   # make run: unsigned
    ctx = ConversationContext(user_id="u-1", thread_id="t-1")
    local.remember(ctx, "Prefers metric units")

    async with AsyncMemoryClient("http://127.0.0.1:3000") as memory:   # the same methods, awaited
        await memory.recall(ctx, "units")

    memory.admin.erase(user="u-1")           # the backend's own data flows (export, erase, usage), by id

    admin = ManagementClient("http://127.0.0.1:3000", token=jwt)   # the dashboard's routes, bearer JWT
    admin.get_document()                     # personal memory of the token subject
    admin.get_document(workspace="w-3")      # a workspace's team memory

A blocking client and its async twin share every method (``routes.py``, and the flush here) and
everything about a request but its send (``exchange.py``); each one only opens its pool with the
``auth=`` its endpoint calls for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Unpack

import httpx
from botocore.credentials import Credentials

from agent_memory_client.auth import BearerAuth, Signing, Token, memory_auth, region_of
from agent_memory_client.exchange import Blocking
from agent_memory_client.flush import FLUSH_TIMEOUT_S, flush_before_compaction, flush_lambda_client
from agent_memory_client.routes import ManagementRoutes, MemoryRoutes, PlatformRoutes, route
from agent_memory_client.transport import AsyncBase, AsyncTransport, PoolOptions, SyncBase, Transport, reject_unknown
from agent_memory_client.types import ConversationContext, FlushResult


class MemoryOptions(PoolOptions, total=False):
    """How a memory client reaches the API and the flush, each optional: ``signing`` "auto" (SigV4 for an
    AWS hostname, none for anything else), "sigv4" or "none"; ``region`` (else the hostname's, else the
    default chain's); ``credentials`` (botocore's, e.g. ``boto3.Session().get_credentials()``; else the
    standard chain); ``flush_function`` FlushFunction's name; ``lambda_endpoint`` another Lambda API (the
    local stack's); ``lambda_client`` a botocore Lambda client to use instead."""

    signing: Signing
    region: str | None
    credentials: Credentials | None
    flush_function: str
    lambda_endpoint: str | None
    lambda_client: Any


class _Memory(MemoryRoutes):
    """What the two memory clients share beyond the HTTP routes: their authentication, and the flush over
    Lambda Invoke (§4)."""

    def __init__(self, endpoint: str, options: MemoryOptions) -> None:
        reject_unknown(options, MemoryOptions)
        self.flush_function = options.get("flush_function", "FlushFunction")
        self._lambda_endpoint = options.get("lambda_endpoint")
        self._lambda_client = options.get("lambda_client")
        self._region = options.get("region") or region_of(endpoint)  # the flush runs in the API's region
        self._auth = memory_auth(endpoint, options.get("signing", "auto"), self._region, options.get("credentials"))

    @route
    def flush(
        self,
        context: ConversationContext,
        compaction_id: str,
        messages: Sequence[Mapping[str, str]],
        *,
        timeout_s: float = FLUSH_TIMEOUT_S,
    ) -> Blocking[FlushResult]:
        """Invoke ``FlushFunction`` before a summary, within ``timeout_s``; never raises (every problem is
        ``failed``)."""
        return Blocking(partial(self._flush, context.as_json(), compaction_id, [dict(m) for m in messages], timeout_s))

    def _flush(
        self, context: dict[str, Any], compaction_id: str, messages: list[dict[str, str]], timeout_s: float
    ) -> Any:
        if self._lambda_client is None:
            kwargs = {"region_name": self._region} if self._region else {}
            try:
                self._lambda_client = flush_lambda_client(
                    timeout_s=timeout_s, endpoint_url=self._lambda_endpoint, **kwargs
                )
            except Exception as error:  # noqa: BLE001 - no region, a broken profile: the flush never raises
                return {"status": "failed", "note": None, "reason": f"no Lambda client: {type(error).__name__}"}
        return flush_before_compaction(
            self._lambda_client,
            self.flush_function,
            context=context,
            compaction_id=compaction_id,
            messages=messages,
            timeout_s=timeout_s,
        )


class _OnTheClientsPool:
    """An object sending on a client's transport: the pool is the client's, closed with the client only."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport

    def close(self) -> None:
        """Nothing: the pool is the client's."""

    async def aclose(self) -> None:
        """Nothing: the pool is the client's."""


class PlatformOperations(_OnTheClientsPool, PlatformRoutes, SyncBase):
    """``MemoryClient.admin``: export, erase and usage of a user's or a workspace's memory by id (§8), sent with
    the client's signature on its pool."""


class AsyncPlatformOperations(_OnTheClientsPool, PlatformRoutes, AsyncBase):
    """``AsyncMemoryClient.admin``: :class:`PlatformOperations`' methods, awaited."""


class MemoryClient(_Memory, SyncBase):
    """The chat backend's client for the tools, the context and the flush (SigV4 in AWS, nothing locally), and in
    ``admin`` the backend's own data flows (export, erase, usage by id). ``http``: the ``httpx.Client`` to send
    on (by default one of its own, closed by :meth:`close`)."""

    def __init__(self, endpoint: str, *, http: httpx.Client | None = None, **options: Unpack[MemoryOptions]) -> None:
        super().__init__(endpoint, options)
        self._transport = Transport.open(endpoint, self._auth, options, http)
        self.admin = PlatformOperations(self._transport)


class AsyncMemoryClient(_Memory, AsyncBase):
    """:class:`MemoryClient`'s methods, awaited, on an ``httpx.AsyncClient`` (asyncio)."""

    def __init__(
        self, endpoint: str, *, http: httpx.AsyncClient | None = None, **options: Unpack[MemoryOptions]
    ) -> None:
        super().__init__(endpoint, options)
        self._transport = AsyncTransport.open(endpoint, self._auth, options, http)
        self.admin = AsyncPlatformOperations(self._transport)


class ManagementClient(ManagementRoutes, SyncBase):
    """The dashboard's routes (§5) with a bearer JWT; ``workspace=None`` means the token subject's personal memory.
    ``token``: the JWT, or a callable called for each request (a token refreshed elsewhere)."""

    def __init__(
        self, endpoint: str, *, token: Token, http: httpx.Client | None = None, **options: Unpack[PoolOptions]
    ) -> None:
        reject_unknown(options, PoolOptions)
        self._transport = Transport.open(endpoint, BearerAuth(token), options, http)


class AsyncManagementClient(ManagementRoutes, AsyncBase):
    """:class:`ManagementClient`'s methods, awaited, on an ``httpx.AsyncClient`` (asyncio)."""

    def __init__(
        self, endpoint: str, *, token: Token, http: httpx.AsyncClient | None = None, **options: Unpack[PoolOptions]
    ) -> None:
        reject_unknown(options, PoolOptions)
        self._transport = AsyncTransport.open(endpoint, BearerAuth(token), options, http)
