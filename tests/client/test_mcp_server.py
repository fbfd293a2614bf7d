"""The MCP server, driven by the `mcp` SDK's own client over stdio and streamable HTTP, against the local stack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_memory_client import ConversationContext, MemoryClient
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.calls import free_port
from tests.support.mcp import running_http_server, server_environment
from tests.support.stack import Stack

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


async def session_scenario(client: Client, user: str) -> dict[str, Any]:
    """List, call each tool, read the resource and the prompt, and try to name another scope."""
    listed = await client.list_tools()
    remembered = await client.call_tool("remember", {"text": f"{user} prefers tea over coffee"})
    recalled = await client.call_tool("recall", {"query": "tea or coffee", "k": 3})
    updated = await client.call_tool("update_memory", {"content": "# Drinks\n- Tea, never coffee"})
    named_user = await client.call_tool("remember", {"text": "x", "user_id": "victim"})
    named_workspace = await client.call_tool("recall", {"query": "tea", "workspace_id": "w-other"})
    resources = await client.list_resources()
    resource = await client.read_resource("memory://context")
    prompts = await client.list_prompts()
    prompt = await client.get_prompt("memory")
    return {
        "tools": {tool.name: (tool.description, tool.input_schema) for tool in listed.tools},
        "remembered": remembered,
        "recalled": recalled,
        "updated": updated,
        "refused": [named_user, named_workspace],
        "resources": [str(r.uri) for r in resources.resources],
        "resource": resource.contents[0].text,  # type: ignore[union-attr]
        "prompts": [p.name for p in prompts.prompts],
        "prompt": prompt.messages[0].content.text,  # type: ignore[union-attr]
    }


def check(outcome: dict[str, Any], memory: MemoryClient, context: ConversationContext) -> None:
    served = {tool["name"]: (tool["description"], tool["parameters"]) for tool in memory.list_tools()}
    assert outcome["tools"] == served  # the schemas of GET /v1/tools, as served
    assert not outcome["remembered"].is_error
    note = outcome["remembered"].structured_content["note"]
    assert note["origin"] == {"user_id": context.user_id, "thread_id": context.thread_id}
    assert [n["id"] for n in outcome["recalled"].structured_content["notes"]] == [note["id"]]
    assert json.loads(outcome["recalled"].content[0].text) == outcome["recalled"].structured_content
    assert outcome["updated"].structured_content["document"]["version"] == 1
    for refused in outcome["refused"]:
        assert refused.is_error and refused.structured_content["error"]["code"] == "invalid_input"
    assert "user_id" in outcome["refused"][0].content[0].text
    assert "workspace_id" in outcome["refused"][1].content[0].text
    assert outcome["resources"] == ["memory://context"] and outcome["prompts"] == ["memory"]
    for block in (outcome["resource"], outcome["prompt"]):
        assert note["text"] in block and "Tea, never coffee" in block
    # Exactly one note was written: the refused calls wrote nothing, in this scope or any other.
    assert [n["id"] for n in memory.get_context(context)["recent_notes"]] == [note["id"]]
    assert memory.get_context(ConversationContext(user_id="victim", thread_id="t-1"))["recent_notes"] == []


def test_over_stdio(client_stack: Stack, memory: MemoryClient) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agent_memory_client.mcp_server", "--user", "mcp-stdio", "--thread", "t-mcp"],
        env=server_environment(client_stack),
        cwd=str(ROOT),
    )

    async def run() -> dict[str, Any]:
        async with Client(params) as client:
            return await session_scenario(client, "mcp-stdio")

    outcome = anyio.run(run)

    check(outcome, memory, ConversationContext(user_id="mcp-stdio", thread_id="t-mcp"))


@pytest.fixture
def http_server(client_stack: Stack, tmp_path: Path) -> Iterator[str]:
    env = server_environment(
        client_stack, MEMORY_USER_ID="mcp-http", MEMORY_WORKSPACE_ID="w-mcp", MEMORY_THREAD_ID="t-http"
    )
    with running_http_server(env, tmp_path / "mcp.log") as url:
        yield f"{url}/mcp"


def test_over_streamable_http_the_configured_workspace_is_the_scope(http_server: str, memory: MemoryClient) -> None:
    async def run() -> dict[str, Any]:
        async with Client(http_server) as client:
            return await session_scenario(client, "mcp-http")

    outcome = anyio.run(run)

    team = ConversationContext(user_id="mcp-http", thread_id="t-http", visibility="shared", workspace_id="w-mcp")
    check(outcome, memory, team)
    assert memory.get_context(ConversationContext(user_id="mcp-http", thread_id="t-x"))["recent_notes"] == []


def test_without_a_user_the_server_refuses_to_start() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env["PYTHONPATH"] = str(ROOT / "client")
    done = subprocess.run(
        [sys.executable, "-m", "agent_memory_client.mcp_server"], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode != 0 and "MEMORY_USER_ID" in done.stderr


def test_a_service_that_does_not_answer_is_an_error_result_not_a_crash() -> None:
    from agent_memory_client import AsyncMemoryClient, RetryPolicy
    from agent_memory_client.mcp_server import MemoryMcp

    unreachable = AsyncMemoryClient(f"http://127.0.0.1:{free_port()}", timeout_s=1, retry=RetryPolicy(max_attempts=1))
    server = MemoryMcp(unreachable, ConversationContext(user_id="u-1", thread_id="t-1"))
    server._tools = [
        {"name": "recall", "description": "d", "parameters": {"type": "object", "properties": {"query": {}}}}
    ]

    async def run() -> Any:
        async with Client(server.server) as client:  # the SDK's in-process connection
            return await client.call_tool("recall", {"query": "x"})

    result = anyio.run(run)

    assert result.is_error and result.structured_content["error"]["code"] == "unavailable"
