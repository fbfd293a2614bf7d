"""The memory in a LlamaIndex agent: ``AgentMemoryBlock`` is a block of LlamaIndex's ``Memory`` and
``memory_tools`` gives the agent ``remember``, ``recall`` and ``update_memory``. The model remembers a fact when it
hears one; when the chat history passes the memory's token limit, the oldest messages leave it and the block asks
the service for a note of them (the flush); each turn the block recalls the notes that match the user's message into
the system message, so the model still knows what was said after the messages are gone.

::

    make run                                                     # the local stack, in another terminal
    PYTHONPATH=client python -m examples.llama_index_chat        # offline: a scripted model plays the conversation
    make demo EXAMPLE=llama_index_chat                           # the same, on a local stack it starts and stops
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from agent_memory_client import Conversation
from agent_memory_client.llama_index_memory import PREAMBLE, AgentMemoryBlock, memory_tools
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory

from examples.cli import open_memory, parser, short

TOKEN_LIMIT = 120  # words (the tokenizer below): small, so that the first turns leave the window
FACT = "Ana lives in Lisbon and wants metric units"


def _recalled(system: str) -> str:
    """The memory block's note lines the model 'read' in its system message."""
    lines = system.split(PREAMBLE, 1)[1].strip().splitlines() if PREAMBLE in system else []
    return " | ".join(line.split("] ", 1)[1] for line in lines if line.startswith("- [")) or "nothing"


def _noted(results: list[dict[str, Any]]) -> str:
    note = results[-1].get("note")
    return f"Noted (note {note['id']})." if note else f"I could not note it: {results[-1]}"


# Each turn: the user's line, the tool call the model makes first (or None), and its answer from the tool results
# and the system message (where the memory block is).
Turn = tuple[str, dict[str, Any] | None, Callable[[list[dict[str, Any]], str], str]]
SCRIPT: list[Turn] = [
    (
        "Hi! I'm Ana. I live in Lisbon and I always want metric units.",
        {"name": "remember", "args": {"text": FACT}},
        lambda results, system: f"Nice to meet you, Ana. {_noted(results)}",
    ),
    (
        "Let's plan the billing migration: cutover the week of January 12, Dana signs off payments.",
        None,
        lambda results, system: "Planned: cutover the week of January 12; open: Dana's payments sign-off.",
    ),
    (
        "Also, move the team standup to 9:30 from next Monday on, please note it in the invite.",
        None,
        lambda results, system: "Done: the standup is at 9:30 from next Monday.",
    ),
    (
        "Which room do we use for the retro on Friday afternoon, the big one or the small one?",
        None,
        lambda results, system: "The big one: the whole team comes.",
    ),
    (
        "What did we decide about the billing migration?",
        None,
        lambda results, system: f"From memory: {_recalled(system)}",
    ),
    (
        "Which units do I want for the weekend run distances?",
        None,
        lambda results, system: f"From memory: {_recalled(system)}",
    ),
]


def scripted_model(out: Callable[[str], None]) -> MockFunctionCallingLLM:
    """LlamaIndex's own mock function-calling LLM, answering from the script: for the last user line it makes the
    turn's tool call, then answers from the tool results and the system message (the memory block), so a broken
    service shows in the transcript. No network."""

    def reply(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        start = max(n for n, m in enumerate(messages) if m.role.value == "user")
        _, call, answer = next(turn for turn in SCRIPT if turn[0] == messages[start].content)
        results = [json.loads(m.content or "{}") for m in messages[start + 1 :] if m.role.value == "tool"]
        for result in results[-1:]:
            out(f"tool ← {short(result, 200)}")
        system = "\n".join(m.content or "" for m in messages if m.role.value == "system")
        if call is not None and not results:
            out(f"model → {call['name']} {json.dumps(call['args'], ensure_ascii=False)}")
            block = ToolCallBlock(tool_call_id=f"call-{start}", tool_name=call["name"], tool_kwargs=call["args"])
            return ChatMessage(role="assistant", blocks=[block])
        if PREAMBLE in system:
            out(f"memory block: {_recalled(system)}")
        text = answer(results, system)
        out(f"assistant> {text}")
        return ChatMessage(role="assistant", content=text)

    return MockFunctionCallingLLM(response_generator=reply)


async def converse(conversation: Conversation, out: Callable[[str], None]) -> None:
    block = AgentMemoryBlock(conversation=conversation)
    chat_memory = Memory.from_defaults(
        session_id=conversation.context.thread_id,
        token_limit=TOKEN_LIMIT,
        memory_blocks=[block],
        tokenizer_fn=str.split,  # LlamaIndex's default counts with tiktoken, which downloads its tables
    )
    agent = FunctionAgent(
        llm=scripted_model(out),
        tools=memory_tools(conversation),
        system_prompt="You are a helpful assistant. Remember durable facts about the user with your memory tools.",
    )
    for number, (user, _, _) in enumerate(SCRIPT, 1):
        out(f"── turn {number} ──\nuser> {user}")
        flushed = len(block.flushes)
        await agent.run(user_msg=user, memory=chat_memory)
        for flush in block.flushes[flushed:]:
            note = flush.get("note")
            out(f"flush: {flush['status']}" + (f" — note {note['id']}: {note['text']}" if note else ""))


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    args = parser("python -m examples.llama_index_chat", __doc__.split("\n\n")[0]).parse_args(argv)
    memory, context = open_memory(args)
    with memory:
        asyncio.run(converse(Conversation(memory, context), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
