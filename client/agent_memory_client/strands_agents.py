"""The memory in Strands Agents (``strands-agents``), for one conversation.

::

    from strands import Agent
    from agent_memory_client.strands_agents import MemoryHooks, MemoryFlushingSummarizer

    conversation = Conversation(memory, ConversationContext(user_id="u-1", thread_id="t-9"))
    agent = Agent(
        system_prompt="You are a helpful assistant.",
        hooks=[MemoryHooks(conversation)],                       # the memory block and the three tools
        conversation_manager=MemoryFlushingSummarizer(conversation),  # the flush before each summary
    )

- :class:`MemoryHooks`: a ``HookProvider`` that registers ``remember``, ``recall`` and ``update_memory`` (the
  specs of ``GET /v1/tools``, each call through :meth:`Conversation.handle`: whose memory it is comes from the
  conversation, and a refusal is an ``error`` tool result the model reads) and, before each invocation, sets the
  agent's system prompt to its own followed by this turn's memory block (``POST /v1/context``). After each
  invocation it hands the conversation to :meth:`Conversation.observe` (facts extracted every ``extract_every``
  user turns, when the conversation was given one); Strands has no event for a session's end, so the backend
  calls :meth:`MemoryHooks.end_session` there (the facts of what was not extracted yet).
- :class:`MemoryFlushingSummarizer`: Strands' ``SummarizingConversationManager`` that first asks the service for
  a note of the conversation (``FlushFunction``; it never raises) whenever it summarizes.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from strands.agent.conversation_manager import SummarizingConversationManager
from strands.hooks import (
    AfterInvocationEvent,
    AgentInitializedEvent,
    BeforeInvocationEvent,
    HookProvider,
    HookRegistry,
)
from strands.tools.tools import PythonAgentTool

from agent_memory_client.conversation import Conversation
from agent_memory_client.types import Extracted


def memory_tools(conversation: Conversation) -> list[PythonAgentTool]:
    """The three memory tools as Strands tools, bound to ``conversation``."""

    def run(name: str) -> Any:
        def tool_func(tool_use: dict[str, Any], **_: Any) -> dict[str, Any]:
            answer = conversation.handle(name, tool_use.get("input") or {})
            status = "error" if "error" in answer else "success"
            text = json.dumps(answer, ensure_ascii=False)
            return {"toolUseId": tool_use["toolUseId"], "status": status, "content": [{"text": text}]}

        return tool_func

    return [
        PythonAgentTool(
            tool["name"],
            {"name": tool["name"], "description": tool["description"], "inputSchema": {"json": tool["parameters"]}},
            run(tool["name"]),
        )
        for tool in conversation.tool_definitions()
    ]


class MemoryHooks(HookProvider):
    """The memory tools, registered when the agent is made, the memory block before each invocation, and the
    conversation observed after each (``extractions`` keeps the extractions' answers)."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self._own_prompt: str | None = None
        self.extractions: list[Extracted] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(AgentInitializedEvent, self.add_tools)
        registry.add_callback(BeforeInvocationEvent, self.add_memory_block)
        registry.add_callback(AfterInvocationEvent, self.observe)

    def observe(self, event: AfterInvocationEvent) -> None:
        self._observed(event.agent, end=False)

    def end_session(self, agent: Any) -> Extracted | None:
        """The session's end: the facts of the messages not extracted yet (``Conversation.observe(end=True)``)."""
        return self._observed(agent, end=True)

    def _observed(self, agent: Any, *, end: bool) -> Extracted | None:
        answer = self.conversation.observe(_transcript(agent), end=end)
        if answer is not None:
            self.extractions.append(answer)
        return answer

    def add_tools(self, event: AgentInitializedEvent) -> None:
        for tool in memory_tools(self.conversation):
            event.agent.tool_registry.register_tool(tool)

    def add_memory_block(self, event: BeforeInvocationEvent) -> None:
        if self._own_prompt is None:
            self._own_prompt = event.agent.system_prompt or ""
        block = self.conversation.system_prompt()
        event.agent.system_prompt = f"{self._own_prompt}\n\n{block}" if self._own_prompt else block


def _text(message: dict[str, Any]) -> str:
    return " ".join(part["text"] for part in message.get("content", []) if isinstance(part, dict) and "text" in part)


def _transcript(agent: Any) -> list[dict[str, str]]:
    """The agent's messages with text, as ``{"role", "content"}`` (tool calls and results left out)."""
    return [{"role": message["role"], "content": text} for message in agent.messages if (text := _text(message))]


class MemoryFlushingSummarizer(SummarizingConversationManager):
    """``SummarizingConversationManager``, with the flush (a note of the conversation) before each summary."""

    def __init__(self, conversation: Conversation, **options: Any) -> None:
        super().__init__(**options)
        self.conversation = conversation
        self.flushes: list[dict[str, Any]] = []

    def reduce_context(self, agent: Any, e: Exception | None = None, **kwargs: Any) -> None:
        messages = _transcript(agent)
        if messages:
            self.flushes.append(dict(self.conversation.flush(f"strands-{uuid.uuid4().hex}", messages)))
        super().reduce_context(agent, e, **kwargs)
