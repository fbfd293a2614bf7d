"""The memory in a Strands agent: ``MemoryHooks`` puts this turn's memory block in the system prompt before each
invocation and registers the three tools for the conversation; ``MemoryFlushingSummarizer`` is Strands'
summarizing conversation manager with the flush (a note of the conversation) before each summary.

::

    make run                                                     # the local stack, in another terminal
    PYTHONPATH=client python -m examples.strands_agent           # offline: a scripted model plays the conversation
    make demo EXAMPLE=strands_agent                              # the same, on a local stack it starts and stops

``strands-agents`` requires ``mcp<2.2`` and the MCP server ``mcp>=2.3``: install it in an environment of its own
(``pip install ./client[strands]``, without the ``[mcp]`` extra).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_memory_client import Conversation
from agent_memory_client.strands_agents import MemoryFlushingSummarizer, MemoryHooks
from strands import Agent
from strands.models import Model

from examples.cli import extracted, open_memory, parser, short
from examples.scripted_model import DEMO_SCRIPT, DEMO_SUMMARY, Results, ScriptedTurn, turn_for

INSTRUCTIONS = "You are a helpful assistant. Use your memory tools to keep durable facts about the user."
# How Strands' summarizing conversation manager asks the agent's model for a summary.
SCRIPT = [
    *DEMO_SCRIPT,
    ScriptedTurn("Please summarize this conversation.", answer=lambda system, results: DEMO_SUMMARY),
]


class ScriptedStrandsModel(Model):
    """A scripted model behind Strands' ``Model`` interface: for the last user line it streams the script's tool
    calls, then an answer built from the tool results and the system prompt (the memory block), so a broken
    service shows in the transcript. No network."""

    def __init__(self, script: list[ScriptedTurn] = SCRIPT, out: Callable[[str], None] = print) -> None:
        self.script = script
        self.out = out

    def update_config(self, **config: Any) -> None:
        """Nothing to configure: the script is the model."""

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model plays tool calls and text only")

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **_: Any
    ) -> AsyncIterator[Any]:
        start = max(n for n, m in enumerate(messages) if m["role"] == "user" and _user_text(m) is not None)
        rounds: list[Results] = [
            [json.loads(block["toolResult"]["content"][0]["text"]) for block in m["content"] if "toolResult" in block]
            for m in messages[start + 1 :]
            if m["role"] == "user"
        ]
        for result in rounds[-1] if rounds and messages[-1]["role"] == "user" else []:
            self.out(f"tool ← {short(result, 200)}")
        move = turn_for(self.script, _user_text(messages[start]) or "").step(system_prompt or "", rounds)
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(move, str):
            self.out(f"assistant> {move}")
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": move}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        for number, (name, arguments) in enumerate(move):
            self.out(f"model → {name} {json.dumps(arguments, ensure_ascii=False)}")
            yield {
                "contentBlockStart": {
                    "start": {"toolUse": {"toolUseId": f"tool-{len(messages)}-{number}", "name": name}}
                }
            }
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def _user_text(message: dict[str, Any]) -> str | None:
    """The text a user typed, or None for a message of tool results."""
    if any("toolResult" in block for block in message["content"]):
        return None
    return "".join(block.get("text", "") for block in message["content"])


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    args = parser("python -m examples.strands_agent", __doc__.split("\n\n")[0]).parse_args(argv)
    memory, context = open_memory(args)
    with memory:
        conversation = Conversation(memory, context)
        summarizer = MemoryFlushingSummarizer(conversation, preserve_recent_messages=2, summary_ratio=0.5)
        hooks = MemoryHooks(conversation)
        agent = Agent(
            model=ScriptedStrandsModel(out=out),
            system_prompt=INSTRUCTIONS,
            hooks=[hooks],
            conversation_manager=summarizer,
            callback_handler=None,
        )
        users = [turn.user for turn in DEMO_SCRIPT]
        for number, user in enumerate(users, 1):
            if number == len(users):  # the compaction: Strands summarizes, the flush writes its note first
                out("── compaction ──")
                summarizer.reduce_context(agent)
                flush = summarizer.flushes[-1]
                note = flush.get("note")
                out(f"flush: {flush['status']}" + (f" — note {note['id']}: {note['text']}" if note else ""))
            out(f"── turn {number} ──\nuser> {user}")
            agent(user)
        out(extracted(hooks.end_session(agent)))  # the session's end: facts from what was said
    return 0


if __name__ == "__main__":
    sys.exit(main())
