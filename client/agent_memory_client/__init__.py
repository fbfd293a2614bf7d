"""A Python client for the agent memory service (docs/client.md).

- :class:`MemoryClient`, :class:`AsyncMemoryClient`: the chat backend's tools, context and flush (SigV4 in
  AWS, unsigned locally), blocking on ``httpx.Client`` or awaited on ``httpx.AsyncClient``;
- ``MemoryClient.admin`` (:class:`PlatformOperations`): the backend's own export, erase and usage by id;
- :class:`ManagementClient`, :class:`AsyncManagementClient`: the dashboard's routes with a bearer JWT;
- :class:`SigV4Auth`, :class:`BearerAuth`: their authentication, as ``httpx.Auth`` objects;
- :class:`Conversation`: the one object a backend holds per conversation (prompt, tools, tool calls, flush);
- ``python -m agent_memory_client.mcp_server``: an MCP server (``pip install agent-memory-client[mcp]``).

Every method returns the service's JSON, typed by :mod:`agent_memory_client.types`.
"""

from agent_memory_client.auth import BearerAuth, SigV4Auth
from agent_memory_client.client import (
    AsyncManagementClient,
    AsyncMemoryClient,
    AsyncPlatformOperations,
    ManagementClient,
    MemoryClient,
    PlatformOperations,
)
from agent_memory_client.conversation import Conversation
from agent_memory_client.errors import (
    BadRequest,
    Forbidden,
    InvalidInput,
    MemoryApiError,
    MemoryClientError,
    MemoryTransportError,
    NotFound,
    RateLimited,
    ServiceUnavailable,
    Unauthorized,
    VersionConflict,
)
from agent_memory_client.exchange import RetryPolicy
from agent_memory_client.flush import FLUSH_TIMEOUT_S, flush_before_compaction, flush_lambda_client
from agent_memory_client.types import ConversationContext

__all__ = [
    "FLUSH_TIMEOUT_S",
    "AsyncManagementClient",
    "AsyncMemoryClient",
    "AsyncPlatformOperations",
    "BadRequest",
    "BearerAuth",
    "Conversation",
    "ConversationContext",
    "Forbidden",
    "InvalidInput",
    "ManagementClient",
    "MemoryApiError",
    "MemoryClient",
    "MemoryClientError",
    "MemoryTransportError",
    "NotFound",
    "PlatformOperations",
    "RateLimited",
    "RetryPolicy",
    "ServiceUnavailable",
    "SigV4Auth",
    "Unauthorized",
    "VersionConflict",
    "flush_before_compaction",
    "flush_lambda_client",
]
