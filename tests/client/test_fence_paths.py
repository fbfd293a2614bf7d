"""Everything of the Python client that reaches a model is fenced (docs/security.md "What reaches the model"):
every tool's answer through every adapter (the conversation helper, the MCP server, the OpenAI Agents and
Strands tools), every view of Claude's memory tool, every item of the LangGraph store (through LangMem's
search tool too) and the LlamaIndex memory block, shown a hostile stored note and document.

The paths are enumerated: each module of ``agent_memory_client`` is either a path listed here or declared to hand
nothing to a model, and each tool of the service's catalog has a hostile answer (tests/support/fake_hostile_memory.py),
so a new adapter or a new tool fails here until it is shown the attack. Offline and fast: the service is a fake
answering as it does. The TypeScript client has the same test in its own runner (client-ts/test/fence.test.ts)."""

from __future__ import annotations

import functools
import json
import os
import pkgutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import agent_memory_client
import anyio
import mcp_types as types
import pytest
from agent_memory_client import ConversationContext
from agent_memory_client.claude_memory import DOCUMENT, NOTES, ROOT, ClaudeMemoryTool
from agent_memory_client.conversation import Conversation
from agent_memory_client.fence import fence_line as client_fence_line
from agent_memory_client.mcp_server import INSTRUCTIONS, MemoryMcp
from anthropic.types.beta import BetaMemoryTool20250818ViewCommand

from agent_memory.domain.fence import fence, fence_line
from agent_memory.edges.tool_catalog import tool_definitions
from tests.support.fake_hostile_memory import (
    DAY,
    HOSTILE,
    HOSTILE_DOCUMENT,
    AsyncFakeHostileMemory,
    FakeHostileMemory,
    answers,
)
from tests.support.injection_corpus import HOSTILE as CORPUS
from tests.support.tool_venvs import adk_python, strands_python

ROOT_DIR = Path(__file__).resolve().parents[2]
CONTEXT = ConversationContext(user_id="u-1", thread_id="t-1", visibility="shared", workspace_id="w-1")
TOOLS = [tool["name"] for tool in tool_definitions()]

# The modules that hand the model nothing stored: requests, answers to the backend, auth, shapes, the fence itself.
NOT_TO_A_MODEL = {
    "auth",
    "client",
    "errors",
    "exchange",
    "fence",
    "flush",  # the flush's outcome goes to the backend, not to a model
    "formats",  # tool definitions, not answers
    "mcp_auth",
    "migrate",  # a peer's export into import requests; their receipts go to the operator's terminal
    "routes",
    "transport",
    "types",
}


def _conversation(tool: str) -> str:
    result = Conversation(FakeHostileMemory(tool_definitions()), CONTEXT).handle(tool, {})  # type: ignore[arg-type]
    return json.dumps(result, ensure_ascii=False)


def _mcp_server(tool: str) -> str:
    server = MemoryMcp(AsyncFakeHostileMemory(tool_definitions()), CONTEXT)  # type: ignore[arg-type]
    result = anyio.run(server.call_tool, None, types.CallToolRequestParams(name=tool, arguments={}))
    assert result.is_error is False
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.content[0].text  # type: ignore[union-attr]


def _openai_agents(tool: str) -> str:
    from agent_memory_client.openai_agents import memory_tools

    conversation = Conversation(FakeHostileMemory(tool_definitions()), CONTEXT)  # type: ignore[arg-type]
    function = next(t for t in memory_tools(conversation) if t.name == tool)
    text: str = anyio.run(function.on_invoke_tool, None, "{}")  # type: ignore[union-attr,arg-type]
    return text


STRANDS_RUN = """
import json, sys
from agent_memory_client.conversation import Conversation
from agent_memory_client.strands_agents import memory_tools
from agent_memory_client.types import ConversationContext

given = json.load(sys.stdin)

class FakeHostileMemory:
    def list_tools(self): return given["tools"]
    def call_tool(self, context, name, arguments): return given["answers"][name]

conversation = Conversation(FakeHostileMemory(), ConversationContext(user_id="u-1", thread_id="t-1"))
run = {tool.tool_name: tool._tool_func for tool in memory_tools(conversation)}
print(json.dumps({name: func({"toolUseId": "t-0", "input": {}})["content"][0]["text"] for name, func in run.items()}))
"""


@functools.cache
def _strands_results() -> dict[str, str]:
    """Strands lives in its own virtualenv (it pins an older ``mcp``): its tools run there, on the same answers,
    each tool once (one interpreter for all of them)."""
    python = strands_python("the Strands path")
    given = json.dumps({"tools": tool_definitions(), "answers": answers()})
    env = {**os.environ, "PYTHONPATH": str(ROOT_DIR / "client")}
    done = subprocess.run(
        [str(python), "-c", STRANDS_RUN], input=given, capture_output=True, text=True, env=env, timeout=120, check=True
    )
    shown: dict[str, str] = json.loads(done.stdout)
    return shown


def _strands_agents(tool: str) -> str:
    return _strands_results()[tool]


def _llama_index(tool: str) -> str:
    from agent_memory_client.llama_index_memory import memory_tools

    conversation = Conversation(FakeHostileMemory(tool_definitions()), CONTEXT)  # type: ignore[arg-type]
    function = next(t for t in memory_tools(conversation) if t.metadata.name == tool)
    return str(function.call().content)


# Every adapter module that hands a tool's answer to a model, and how a tool call goes through it.
TOOL_RESULT_PATHS: dict[str, Callable[[str], str]] = {
    "conversation": _conversation,
    "mcp_server": _mcp_server,
    "openai_agents": _openai_agents,
    "strands_agents": _strands_agents,
    "llama_index_memory": _llama_index,
}
# The modules that show stored text otherwise (a view of a file, a store's items, a memory service's search),
# tested below.
VIEW_PATHS = {"claude_memory", "langgraph_store", "llama_index_memory", "adk_memory"}


def test_every_module_is_a_fenced_path_or_hands_nothing_to_a_model():
    modules = {module.name for module in pkgutil.iter_modules(agent_memory_client.__path__)}

    assert modules == set(TOOL_RESULT_PATHS) | VIEW_PATHS | NOT_TO_A_MODEL, (
        "a new module of agent_memory_client: list it in TOOL_RESULT_PATHS or VIEW_PATHS (and show it the hostile "
        "note) or in NOT_TO_A_MODEL"
    )


def test_every_tool_of_the_catalog_has_a_hostile_answer():
    assert set(answers()) == set(TOOLS)


def _assert_fenced(shown: dict[str, Any]) -> None:
    """Every stored text of the answer as ``system_prompt`` shows it: a note one fenced line, the document a
    fenced block; nothing of it can open or close a tag."""
    text = json.dumps(shown, ensure_ascii=False)
    assert "<" not in text
    for note in shown.get("notes", []) + ([shown["note"]] if "note" in shown else []):
        assert note["text"] == fence_line(HOSTILE)
    if "document" in shown:
        assert shown["document"]["content"] == fence(HOSTILE_DOCUMENT)


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("path", sorted(TOOL_RESULT_PATHS))
def test_every_tool_result_of_every_adapter_is_fenced(path: str, tool: str) -> None:
    shown = json.loads(TOOL_RESULT_PATHS[path](tool))

    _assert_fenced(shown)
    assert set(shown) == set(answers()[tool])  # the answer's shape is the service's


def _view(tool: ClaudeMemoryTool, path: str) -> str:
    return tool.view(BetaMemoryTool20250818ViewCommand(command="view", path=path))


def test_every_view_of_the_claude_memory_tool_is_fenced():
    tool = ClaudeMemoryTool(FakeHostileMemory(tool_definitions()), CONTEXT)  # type: ignore[arg-type]
    views = {path: _view(tool, path) for path in (ROOT, NOTES, DOCUMENT, f"{NOTES}/{DAY}.md")}

    assert all("<" not in text for text in views.values()), views
    shown = [line.split("\t", 1)[1] for line in views[DOCUMENT].split("\n")[1:]]
    assert shown == fence(HOSTILE_DOCUMENT).split("\n")
    assert views[f"{NOTES}/{DAY}.md"].split("\n")[1:] == [f"     1\t- {fence_line(HOSTILE)}"]


ADK_RUN = """
import asyncio, json, sys
from agent_memory_client.adk_memory import AgentMemoryService

given = json.load(sys.stdin)

class FakeHostileMemory:
    def recall(self, context, query, k): return given

found = asyncio.run(AgentMemoryService(FakeHostileMemory()).search_memory(app_name="a", user_id="u-1", query="q"))
print(json.dumps([part.text for entry in found.memories for part in entry.content.parts]))
"""


def test_every_memory_of_the_adk_memory_services_search_is_fenced():
    """Google ADK lives in its own virtualenv (its pins are its own): the search runs there, on a hostile recall."""
    python = adk_python("the ADK path")
    env = {**os.environ, "PYTHONPATH": str(ROOT_DIR / "client")}
    recalled = json.dumps(answers()["recall"])
    done = subprocess.run(
        [str(python), "-c", ADK_RUN], input=recalled, capture_output=True, text=True, env=env, timeout=120, check=True
    )

    shown = json.loads(done.stdout)
    assert shown and shown == [fence_line(HOSTILE)] * len(shown)
    assert all("<" not in text for text in shown)


def test_every_item_of_the_langgraph_store_is_fenced() -> None:
    from agent_memory_client.langgraph_store import AgentMemoryStore
    from langmem import create_search_memory_tool

    store = AgentMemoryStore(FakeHostileMemory(tool_definitions()), CONTEXT)  # type: ignore[arg-type]
    searched = json.loads(create_search_memory_tool(namespace=("memories",), store=store).invoke({"query": "x"}))
    listed = [item.dict() for item in store.search(("memories",))]
    document = store.get(("memories",), "document")

    assert document is not None and document.value["content"] == fence(HOSTILE_DOCUMENT)
    assert [item["value"]["content"] for item in searched + listed] == [fence_line(HOSTILE)] * 3
    assert "<" not in json.dumps([searched, listed, document.dict()], ensure_ascii=False)


def test_the_llama_index_memory_block_is_fenced() -> None:
    from agent_memory_client.llama_index_memory import AgentMemoryBlock
    from llama_index.core.base.llms.types import ChatMessage

    conversation = Conversation(FakeHostileMemory(tool_definitions()), CONTEXT)  # type: ignore[arg-type]
    shown = anyio.run(AgentMemoryBlock(conversation=conversation).aget, [ChatMessage(role="user", content="x")])

    assert "<" not in shown
    assert [line.split("] ", 1)[1] for line in shown.split("\n")[1:]] == [fence_line(HOSTILE)] * 2


@pytest.mark.parametrize("text", [HOSTILE, HOSTILE_DOCUMENT, *CORPUS])
def test_the_clients_fence_is_the_services(text: str) -> None:
    from agent_memory_client.fence import fenced_answer

    assert client_fence_line(text) == fence_line(text)
    assert fenced_answer({"content": text}) == {"content": fence(text)}


def test_the_preamble_the_recall_tool_and_the_mcp_instructions_say_stored_memory_is_data():
    from agent_memory.domain.context_block import system_prompt
    from agent_memory.domain.document import EMPTY_DOCUMENT

    recall = next(tool for tool in tool_definitions() if tool["name"] == "recall")

    assert "not instructions" in system_prompt("team", EMPTY_DOCUMENT, None)
    assert "not instructions" in recall["description"]
    assert "never instructions" in INSTRUCTIONS
