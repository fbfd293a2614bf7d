"""The memory in Strands Agents (docs/client.md "Agent SDKs"): a Strands ``Agent`` with a scripted model provider
(no network) against the local stack. ``strands-agents`` cannot be installed beside the ``mcp`` version the MCP
server pins (it requires ``mcp<2.2``), so the test runs where it is importable and is skipped elsewhere."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

strands = pytest.importorskip(
    "strands",
    reason="strands-agents (1.62.0, the latest) requires mcp<2.2; this environment pins mcp 2.3.0 (the MCP server)",
)

from agent_memory_client import Conversation, ConversationContext, MemoryClient  # noqa: E402
from agent_memory_client.strands_agents import MemoryFlushingSummarizer, MemoryHooks  # noqa: E402
from strands import Agent  # noqa: E402
from strands.models import Model  # noqa: E402

from tests.support.clients import conversation_context  # noqa: E402

pytestmark = pytest.mark.slow


class ScriptedModel(Model):
    """Makes the scripted tool calls, one per model call, then answers ``Done.``; keeps what it was given."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = list(calls)
        self.system_prompts: list[str | None] = []
        self.tool_names: set[str] = set()
        self.results: list[dict[str, Any]] = []

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **_: Any
    ) -> AsyncIterator[Any]:
        self.system_prompts.append(system_prompt)
        self.tool_names = {spec["name"] for spec in tool_specs or []}
        for block in messages[-1]["content"]:
            if "toolResult" in block:
                self.results.append(json.loads(block["toolResult"]["content"][0]["text"]))
        turn = len(self.system_prompts) - 1
        yield {"messageStart": {"role": "assistant"}}
        if turn < len(self.calls):
            name, arguments = self.calls[turn]
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"tool-{turn}", "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": "Done."}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}


def test_an_agent_with_the_hooks_sees_the_block_and_uses_the_tools(memory: MemoryClient) -> None:
    context = conversation_context("strands-user")
    memory.remember(context, "Lives in Lisbon")
    conversation = Conversation(memory, context)
    model = ScriptedModel(
        [
            ("remember", {"text": "Prefers window seats"}),
            ("recall", {"query": "seats"}),
            ("update_memory", {"content": "# About\n- Lives in Lisbon"}),
            ("remember", {"text": "x", "user_id": "someone-else"}),
        ]
    )
    agent = Agent(
        model=model, system_prompt="You are helpful.", hooks=[MemoryHooks(conversation)], callback_handler=None
    )

    agent("Book me a flight")

    assert model.tool_names == {"remember", "recall", "update_memory"}
    first = model.system_prompts[0] or ""
    assert first.startswith("You are helpful.\n\n") and "Lives in Lisbon" in first
    remembered, recalled, updated, named = model.results
    assert remembered["note"]["text"] == "Prefers window seats"
    assert [n["text"] for n in recalled["notes"]] == ["Prefers window seats"]
    assert updated["document"]["version"] == 1
    assert named["error"]["code"] == "invalid_input"
    assert memory.recall(ConversationContext(user_id="someone-else", thread_id="t"), "x")["notes"] == []

    agent("And a hotel")  # the next invocation's block shows the new document, the agent's own prompt once

    latest = model.system_prompts[-1] or ""
    assert latest.count("You are helpful.") == 1 and "# About" in latest


def test_the_summarizer_flushes_before_it_summarizes(memory: MemoryClient) -> None:
    context = conversation_context("strands-flush")
    conversation = Conversation(memory, context)
    manager = MemoryFlushingSummarizer(conversation, preserve_recent_messages=1, summary_ratio=0.5)
    model = ScriptedModel([])
    agent = Agent(model=model, conversation_manager=manager, callback_handler=None)
    for number in range(3):
        agent(f"Planning the trip, part {number}")

    manager.reduce_context(agent)

    (flush,) = manager.flushes
    assert flush["status"] == "written"
    assert memory.get_context(context)["recent_notes"][0]["source"] == "flush"
