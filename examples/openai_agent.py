"""The memory in an OpenAI Agents SDK agent: the three tools as function tools, the memory block as dynamic
instructions, both bound to one conversation; the SDK's own ``Runner`` runs each turn.

The backend keeps the history between turns (``result.to_input_list()``) and, before it replaces the history with
a summary (the compaction), asks the service for a note of the conversation (the flush): the next turn's memory
block shows that note. When the session ends (the SDK has no event for it: the backend's loop does), the backend
hands the conversation to the memory (``Conversation.observe(..., end=True)``), which keeps its durable facts.

::

    make run                                                     # the local stack, in another terminal
    PYTHONPATH=client python -m examples.openai_agent            # offline: a scripted model plays the conversation
    make demo EXAMPLE=openai_agent                               # the same, on a local stack it starts and stops
    PYTHONPATH=client python -m examples.openai_agent --model gpt-4.1-mini   # an OpenAI model (OPENAI_API_KEY)
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_memory_client import Conversation
from agent_memory_client.openai_agents import memory_instructions, memory_tools
from agents import Agent, Model, RunConfig, Runner
from agents.items import MessageOutputItem, ModelResponse, ToolCallItem, ToolCallOutputItem
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from examples.cli import extracted, open_memory, parser, short
from examples.scripted_model import DEMO_SCRIPT, DEMO_SUMMARY, Results, ScriptedTurn, turn_for

INSTRUCTIONS = "You are a helpful assistant. Use your memory tools to keep durable facts about the user."
OFFLINE = RunConfig(tracing_disabled=True)  # no trace is exported: nothing leaves the machine


def _text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


class ScriptedAgentsModel(Model):
    """A scripted model behind the SDK's ``Model`` interface: for the input's last user line it makes the script's
    tool calls, then answers from the tool outputs the runner gave back and from the instructions (the memory
    block), so a broken service shows in the transcript. No network."""

    def __init__(self, script: list[ScriptedTurn] = DEMO_SCRIPT) -> None:
        self.script = script

    async def get_response(self, system_instructions: str | None, input: Any, *args: Any, **kwargs: Any) -> Any:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else [dict(i) for i in input]
        start = max(n for n, item in enumerate(items) if item.get("role") == "user")
        rounds: list[Results] = []
        for previous, item in zip([{}, *items[start + 1 :]], items[start + 1 :], strict=False):
            if item.get("type") == "function_call_output":
                if previous.get("type") != "function_call_output":
                    rounds.append([])
                rounds[-1].append(json.loads(item["output"]))
        move = turn_for(self.script, _text(items[start])).step(system_instructions or "", rounds)
        output: list[Any]
        if isinstance(move, str):
            text = ResponseOutputText(type="output_text", text=move, annotations=[])
            output = [
                ResponseOutputMessage(id="msg", type="message", role="assistant", status="completed", content=[text])
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    id=f"fc_{n}",
                    call_id=f"call_{len(items)}_{n}",
                    name=name,
                    arguments=json.dumps(arguments),
                )
                for n, (name, arguments) in enumerate(move)
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model answers Runner.run, not Runner.run_streamed")


def play(agent: Agent[Any], conversation: Conversation, users: list[str], out: Callable[[str], None]) -> list[Any]:
    """The user lines as one conversation, flushed and compacted before the last one; the history at the end."""
    history: list[Any] = []
    for number, user in enumerate(users, 1):
        if number == len(users):
            history = compact(conversation, history, out)
        out(f"── turn {number} ──\nuser> {user}")
        result = Runner.run_sync(agent, [*history, {"role": "user", "content": user}], run_config=OFFLINE)
        for item in result.new_items:
            if isinstance(item, ToolCallItem) and isinstance(item.raw_item, ResponseFunctionToolCall):
                out(f"model → {item.raw_item.name} {item.raw_item.arguments}")
            elif isinstance(item, ToolCallOutputItem):
                out(f"tool ← {short(item.output, 200)}")
            elif isinstance(item, MessageOutputItem):
                out(f"assistant> {result.final_output}")
        history = result.to_input_list()
    return history


def _transcript(history: list[Any]) -> list[dict[str, str]]:
    """The history's user and assistant messages with text, as ``{"role", "content"}``."""
    return [
        {"role": item["role"], "content": text}
        for item in history
        if item.get("role") in ("user", "assistant") and (text := _text(item))
    ]


def compact(conversation: Conversation, history: list[Any], out: Callable[[str], None]) -> list[Any]:
    """Flush first (a note of what the conversation was about), then replace the history by a summary."""
    transcript = _transcript(history)
    outcome = conversation.flush(f"{conversation.context.thread_id}-compaction-1", transcript)
    note = outcome.get("note")
    out(f"── compaction ──\nflush: {outcome['status']}" + (f" — note {note['id']}: {note['text']}" if note else ""))
    return [{"role": "user", "content": DEMO_SUMMARY}, {"role": "assistant", "content": "Understood."}]


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    p = parser("python -m examples.openai_agent", __doc__.split("\n\n")[0])
    p.add_argument("--model", default=None, help="an OpenAI model name (OPENAI_API_KEY), else the scripted model")
    args = p.parse_args(argv)
    memory, context = open_memory(args)
    with memory:
        conversation = Conversation(memory, context)
        agent = Agent(
            name="assistant",
            instructions=memory_instructions(conversation, INSTRUCTIONS),
            tools=memory_tools(conversation),
            model=args.model or ScriptedAgentsModel(),
        )
        history = play(agent, conversation, [turn.user for turn in DEMO_SCRIPT], out)
        out(extracted(conversation.observe(_transcript(history), end=True)))  # the session's end
    return 0


if __name__ == "__main__":
    sys.exit(main())
