"""The MCP server for many users (docs/client.md "MCP for many users"): over streamable HTTP with ``--auth jwt``
each session's identity is its bearer token's, verified as the dashboard's; driven by the ``mcp`` SDK's own
client against the local stack."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jwt
import pytest
from agent_memory_client import ConversationContext, MemoryClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from local.token import mint
from tests.support.calls import free_port
from tests.support.mcp import running_http_server, server_environment
from tests.support.stack import Stack

pytestmark = pytest.mark.slow

SECRET = "mcp-test-secret"


def token(user: str, workspaces: list[str] | None = None, *, secret: str = SECRET, **overrides: Any) -> str:
    claims = {
        "iss": "memory-local",
        "aud": "memory-dashboard",
        "sub": user,
        "exp": int(time.time()) + 3600,
        "workspaces": workspaces or [],
        **overrides,
    }
    return jwt.encode(claims, secret, algorithm="HS256")


@pytest.fixture
def server(client_stack: Stack, tmp_path: Path) -> Iterator[str]:
    env = server_environment(client_stack, MEMORY_MCP_AUTH="jwt", MEMORY_MCP_JWT_SECRET=SECRET)
    with running_http_server(env, tmp_path / "mcp.log") as url:
        yield url
    assert "Traceback" not in (tmp_path / "mcp.log").read_text()


def session(url: str, bearer: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=http))


def test_two_users_at_once_each_see_only_their_own_memory(server: str, memory: MemoryClient) -> None:
    async def user_session(user: str, fact: str, out: dict[str, Any]) -> None:
        async with session(f"{server}/mcp", token(user)) as client:
            written = await client.call_tool("remember", {"text": fact})
            found = await client.call_tool("recall", {"query": "flies"})
            named = await client.call_tool("remember", {"text": "x", "user_id": "someone-else"})
            out[user] = (written, found, named)

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with anyio.create_task_group() as group:
            group.start_soon(user_session, "mcp-alice", "Alice flies to Oslo", out)
            group.start_soon(user_session, "mcp-bob", "Bob flies to Rome", out)
        return out

    out = anyio.run(run)

    for user, fact in (("mcp-alice", "Alice flies to Oslo"), ("mcp-bob", "Bob flies to Rome")):
        written, found, named = out[user]
        assert not written.is_error and not found.is_error
        assert [n["text"] for n in found.structured_content["notes"]] == [fact]
        assert named.is_error and "user_id" in named.structured_content["error"]["message"]
        notes = memory.recall(ConversationContext(user_id=user, thread_id="t"), "flies")["notes"]
        assert [n["text"] for n in notes] == [fact]


def test_a_session_chooses_a_workspace_its_token_lists_and_no_other(server: str, memory: MemoryClient) -> None:
    async def run() -> tuple[Any, Any]:
        async with session(f"{server}/mcp?workspace=w-mcp-team", token("mcp-carol", ["w-mcp-team"])) as client:
            member = await client.call_tool("remember", {"text": "The team ships on Thursdays"})
        async with session(f"{server}/mcp?workspace=w-mcp-team", token("mcp-dave", ["w-other"])) as client:
            outsider = await client.call_tool("recall", {"query": "ships"})
        return member, outsider

    member, outsider = anyio.run(run)

    team = ConversationContext(user_id="mcp-carol", thread_id="t", visibility="shared", workspace_id="w-mcp-team")
    assert not member.is_error and memory.recall(team, "ships")["notes"]
    assert outsider.is_error and outsider.structured_content["error"]["code"] == "forbidden"


@pytest.mark.parametrize(
    "bearer",
    [
        token("mcp-eve", exp=int(time.time()) - 3600),  # expired
        token("mcp-eve", secret="not-the-secret"),  # forged
        token("mcp-eve", aud="another-audience"),
        token("mcp-eve", iss="another-issuer"),
        token("not an id"),
        mint("mcp-eve", []),  # the local stack's dashboard token: signed with another secret than this server's
        "not-a-jwt",
        "",
    ],
    ids=["expired", "forged", "audience", "issuer", "subject", "other-secret", "garbage", "none"],
)
def test_a_bad_token_is_refused_with_the_resource_metadata(server: str, bearer: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    if bearer:  # "": no Authorization header at all
        headers["Authorization"] = f"Bearer {bearer}"
    answer = httpx.post(f"{server}/mcp", json=body, headers=headers)

    assert answer.status_code == 401
    assert "resource_metadata=" in answer.headers["www-authenticate"]


def test_the_protected_resource_metadata_names_the_endpoint_and_its_authorization_server(server: str) -> None:
    metadata = httpx.get(f"{server}/.well-known/oauth-protected-resource/mcp").json()

    assert metadata["resource"] == f"{server}/mcp"
    assert metadata["authorization_servers"]


def test_a_request_from_another_origin_is_refused(server: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    headers = {
        "Authorization": f"Bearer {token('mcp-frank')}",
        "Accept": "application/json, text/event-stream",
        "Origin": "https://evil.example",
    }
    answer = httpx.post(f"{server}/mcp", json=body, headers=headers)

    assert answer.status_code == 403
    assert json.dumps(answer.text)  # a short refusal, no traceback


def test_a_service_down_before_the_tool_list_is_read_is_an_error_result() -> None:
    """The tool list comes from the service: when it cannot be read, the call is an error result, not MCPError."""
    from agent_memory_client import AsyncMemoryClient, RetryPolicy
    from agent_memory_client.mcp_server import MemoryMcp

    down = AsyncMemoryClient(f"http://127.0.0.1:{free_port()}", timeout_s=1, retry=RetryPolicy(max_attempts=1))
    server = MemoryMcp(down, ConversationContext(user_id="u-1", thread_id="t-1"))

    async def run() -> Any:
        async with Client(server.server) as client:
            return await client.call_tool("recall", {"query": "x"})

    result = anyio.run(run)

    assert result.is_error and result.structured_content["error"]["code"] == "unavailable"
