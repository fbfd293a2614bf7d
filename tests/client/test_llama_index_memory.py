"""The memory service as a LlamaIndex memory block (docs/client.md "LlamaIndex"), offline: recall of the last user
message on ``aget``, the flush of the messages LlamaIndex's ``Memory`` drops on ``aput``, and the memory tools.
The example plays it against the local stack (tests/client/test_examples.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agent_memory_client import Conversation, ConversationContext, InvalidInput
from agent_memory_client.llama_index_memory import PREAMBLE, AgentMemoryBlock, memory_tools
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory

from agent_memory.edges.tool_catalog import tool_definitions
from tests.support.fake_hostile_memory import DAY, FakeHostileMemory, note

CONTEXT = ConversationContext(user_id="u-1", thread_id="t-1")


class RecordingMemory(FakeHostileMemory):
    """The fake service: plain notes for recall (the fence has its own test), each call recorded."""

    def __init__(self, refuse: bool = False) -> None:
        super().__init__(tool_definitions())
        self.refuse = refuse
        self.calls: list[tuple[str, Any]] = []

    def call_tool(self, context: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((name, arguments))
        if self.refuse:
            raise InvalidInput(422, "validation_error", "the service refused the call")
        return {"notes": [{**note("Cutover the week of January 12"), "score": 2.0}], "mode": "keyword"}

    def flush(self, context: Any, compaction_id: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        self.calls.append(("flush", (context, compaction_id, messages)))
        return {"status": "written", "note": note("Planning the billing migration")}


def block(memory: RecordingMemory) -> AgentMemoryBlock:
    return AgentMemoryBlock(conversation=Conversation(memory, CONTEXT), k=3)  # type: ignore[arg-type]


def test_aget_recalls_the_last_user_message_under_a_line_saying_notes_are_data() -> None:
    memory = RecordingMemory()
    messages = [ChatMessage(role="user", content="first"), ChatMessage(role="assistant", content="ok")]
    messages.append(ChatMessage(role="user", content="When is the cutover?"))

    shown = asyncio.run(block(memory).aget(messages))

    assert memory.calls == [("recall", {"query": "When is the cutover?", "k": 3})]
    assert shown == f"{PREAMBLE}\n- [{DAY} #1] Cutover the week of January 12"


@pytest.mark.parametrize(
    "messages", [[], [ChatMessage(role="assistant", content="hello")], [ChatMessage(role="user", content="  ")]]
)
def test_aget_without_a_user_line_recalls_nothing(messages: list[ChatMessage]) -> None:
    memory = RecordingMemory()

    assert asyncio.run(block(memory).aget(messages)) == ""
    assert memory.calls == []


def test_a_refused_recall_adds_nothing_and_a_long_message_is_cut_to_recalls_bound() -> None:
    memory = RecordingMemory(refuse=True)

    assert asyncio.run(block(memory).aget([ChatMessage(role="user", content="x" * 5_000)])) == ""
    assert memory.calls == [("recall", {"query": "x" * 2_000, "k": 3})]


def test_aput_flushes_the_dropped_messages_once_and_keeps_the_outcome() -> None:
    memory = RecordingMemory()
    memory_block = block(memory)
    dropped = [ChatMessage(role="user", content="Cutover on the 12th"), ChatMessage(role="assistant", content="")]

    asyncio.run(memory_block.aput(dropped))
    asyncio.run(memory_block.aput([ChatMessage(role="assistant", content="")]))  # nothing said: no flush

    [(name, (context, compaction_id, messages))] = memory.calls
    assert (name, context, messages) == ("flush", CONTEXT, [{"role": "user", "content": "Cutover on the 12th"}])
    assert compaction_id.startswith("llamaindex-")
    assert [flush["status"] for flush in memory_block.flushes] == ["written"]


def test_llama_index_memory_flushes_what_leaves_its_window_and_shows_the_block_in_the_system_message() -> None:
    memory = RecordingMemory()
    chat = Memory.from_defaults(session_id="t-1", token_limit=20, memory_blocks=[block(memory)], tokenizer_fn=str.split)

    for number in range(4):
        chat.put(ChatMessage(role="user", content=f"message {number} with some words in it"))
    messages = chat.get()

    flushed = [arguments[2] for name, arguments in memory.calls if name == "flush"]
    assert flushed and flushed[0][0] == {"role": "user", "content": "message 0 with some words in it"}
    assert messages[0].role.value == "system" and "Cutover the week of January 12" in (messages[0].content or "")


def test_memory_tools_hand_the_model_the_services_schemas_and_call_through_the_conversation() -> None:
    memory = RecordingMemory()
    tools = {tool.metadata.get_name(): tool for tool in memory_tools(Conversation(memory, CONTEXT))}  # type: ignore[arg-type]

    assert {name: tool.metadata.to_openai_tool()["function"]["parameters"] for name, tool in tools.items()} == {
        tool["name"]: tool["parameters"] for tool in tool_definitions()
    }
    shown = tools["recall"].call(query="cutover", k=2)
    awaited = asyncio.run(tools["recall"].acall(query="cutover"))

    assert json.loads(shown.content)["notes"][0]["text"] == "Cutover the week of January 12"
    assert json.loads(awaited.content) == json.loads(shown.content)
    assert memory.calls == [("recall", {"query": "cutover", "k": 2}), ("recall", {"query": "cutover"})]
