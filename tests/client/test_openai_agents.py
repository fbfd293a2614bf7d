"""The memory in the OpenAI Agents SDK (docs/client.md "Agent SDKs"): the SDK's own ``Runner`` drives an ``Agent``
whose model is the example's scripted model (scripted tool calls, no network) against the local stack."""

from __future__ import annotations

import json
from typing import Any

import pytest

agents = pytest.importorskip("agents")  # the [openai-agents] extra; requirements-dev.txt pins it

from agent_memory_client import Conversation, ConversationContext, MemoryClient  # noqa: E402
from agent_memory_client.openai_agents import memory_instructions, memory_tools  # noqa: E402
from agents import Agent, ModelSettings, RunConfig, Runner  # noqa: E402

from examples.openai_agent import ScriptedAgentsModel  # noqa: E402
from examples.scripted_model import ScriptedTurn  # noqa: E402
from tests.support.clients import conversation_context  # noqa: E402

pytestmark = pytest.mark.slow
OFFLINE = RunConfig(tracing_disabled=True)  # no trace export: nothing leaves the machine


class FakeModel(ScriptedAgentsModel):
    """The example's scripted model with one turn: the calls, one per model call, then ``Done.``; it keeps what it
    was given."""

    def __init__(self, user: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
        rounds = [[call] for call in calls]
        done = ScriptedTurn(user, *rounds[:1], answer=lambda system, results: "Done.", then=rounds[1:])
        super().__init__([done])
        self.instructions: list[str | None] = []
        self.tools: list[Any] = []
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        self.instructions.append(system_instructions)
        self.tools = args[2] if len(args) > 2 else kwargs.get("tools", [])
        self.inputs.append(input)
        return await super().get_response(system_instructions, input, *args, **kwargs)


def outputs(model: FakeModel) -> list[dict[str, Any]]:
    """The tool outputs the model was sent back, in order."""
    last = model.inputs[-1]
    return [
        json.loads(item["output"])
        for item in last
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def test_an_agent_remembers_recalls_and_updates_through_the_runner(memory: MemoryClient) -> None:
    context = conversation_context("oa-agent-user")
    memory.remember(context, "Lives in Lisbon")
    conversation = Conversation(memory, context)
    model = FakeModel(
        "Book me a flight",
        [
            ("remember", {"text": "Prefers window seats"}),
            ("recall", {"query": "seats"}),
            ("update_memory", {"content": "# About\n- Lives in Lisbon"}),
            ("remember", {"text": "x", "user_id": "someone-else"}),
        ],
    )
    agent = Agent(
        name="assistant",
        instructions=memory_instructions(conversation, "You are helpful."),
        tools=memory_tools(conversation),
        model=model,
        model_settings=ModelSettings(),
    )

    result = Runner.run_sync(agent, "Book me a flight", run_config=OFFLINE)

    assert result.final_output == "Done."
    assert {tool.name for tool in model.tools} == {"remember", "recall", "update_memory"}
    first = model.instructions[0] or ""
    assert first.startswith("You are helpful.\n\n") and "Lives in Lisbon" in first
    remembered, recalled, updated, named = outputs(model)
    assert remembered["note"]["text"] == "Prefers window seats"
    assert [n["text"] for n in recalled["notes"]] == ["Prefers window seats"]
    assert updated["document"]["version"] == 1
    assert named["error"]["code"] == "invalid_input"
    assert memory.get_context(context)["document"]["content"] == "# About\n- Lives in Lisbon"
    other = memory.recall(ConversationContext(user_id="someone-else", thread_id="t"), "x")
    assert other["notes"] == []


def test_a_concurrent_edit_is_a_conflict_the_agent_reads(memory: MemoryClient) -> None:
    context = conversation_context("oa-conflict-user")
    memory.update_memory(context, "# v1")
    conversation = Conversation(memory, context)
    model = FakeModel("Update my memory", [("update_memory", {"content": "# mine"})])

    async def edit_meanwhile(run: Any, agent: Any) -> str:
        block = await memory_instructions(conversation)(run, agent)
        memory.update_memory(context, "# someone else's")  # after the turn's block was read
        return block

    agent = Agent(name="a", instructions=edit_meanwhile, tools=memory_tools(conversation), model=model)

    Runner.run_sync(agent, "Update my memory", run_config=OFFLINE)

    (conflict,) = outputs(model)
    assert conflict["error"]["code"] == "version_conflict"
    assert memory.get_context(context)["document"]["content"] == "# someone else's"
