"""The memory in the OpenAI Agents SDK (``pip install agent-memory-client[openai-agents]``), for one conversation.

::

    from agents import Agent, Runner
    from agent_memory_client.openai_agents import memory_instructions, memory_tools

    conversation = Conversation(memory, ConversationContext(user_id="u-1", thread_id="t-9"))
    agent = Agent(
        name="assistant",
        instructions=memory_instructions(conversation, "You are a helpful assistant."),  # + the memory block
        tools=[*memory_tools(conversation), *your_tools],
    )
    Runner.run_sync(agent, "Where do I live?")

- ``memory_tools``: ``remember``, ``recall`` and ``update_memory`` as the SDK's ``FunctionTool``s, with the names,
  descriptions and JSON Schemas that ``GET /v1/tools`` serves; each call runs through
  :meth:`Conversation.handle`, so the conversation's context (never the model) says whose memory it is, and a
  refusal comes back to the model as ``{"error": {...}}`` it can correct itself from.
- ``memory_instructions``: dynamic instructions, the agent's own followed by this turn's memory block (``POST
  /v1/context``), read before each model call; the document version it shows is the one ``update_memory``
  writes on, so a concurrent edit is a conflict, not a lost write.

The blocking client's calls run on a worker thread: the agent's event loop is never blocked.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
from agents import Agent, FunctionTool, RunContextWrapper, Tool
from agents.tool_context import ToolContext

from agent_memory_client.conversation import Conversation


def memory_tools(conversation: Conversation) -> list[Tool]:
    """The three memory tools, bound to ``conversation``."""

    def invoke(name: str) -> Callable[[ToolContext[Any], str], Awaitable[str]]:
        async def on_invoke_tool(context: ToolContext[Any], arguments: str) -> str:
            answer = await anyio.to_thread.run_sync(conversation.handle, name, arguments)
            return json.dumps(answer, ensure_ascii=False)

        return on_invoke_tool

    return [
        FunctionTool(
            name=tool["name"],
            description=tool["description"],
            params_json_schema=tool["parameters"],
            on_invoke_tool=invoke(tool["name"]),
            strict_json_schema=False,  # the service's schemas as they are; it checks the arguments strictly
        )
        for tool in conversation.tool_definitions()
    ]


def memory_instructions(
    conversation: Conversation, instructions: str = ""
) -> Callable[[RunContextWrapper[Any], Agent[Any]], Awaitable[str]]:
    """``Agent(instructions=...)``: ``instructions``, then the memory block of this turn."""

    async def dynamic(context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        block = await anyio.to_thread.run_sync(conversation.system_prompt)
        return f"{instructions}\n\n{block}" if instructions else block

    return dynamic
