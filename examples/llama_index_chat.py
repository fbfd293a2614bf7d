"""The memory in a LlamaIndex chat: ``AgentMemoryBlock`` is a block of LlamaIndex's ``Memory``. When the chat
history passes the memory's token limit, the oldest messages leave it and the block asks the service for a note of
them (the flush); each turn the block recalls the notes that match the user's message into the system message, so
the model still knows what was decided after the messages are gone.

::

    make run                                                     # the local stack, in another terminal
    PYTHONPATH=client python -m examples.llama_index_chat        # offline: a scripted model plays the conversation
    make demo EXAMPLE=llama_index_chat                           # the same, on a local stack it starts and stops
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from agent_memory_client import Conversation
from agent_memory_client.llama_index_memory import PREAMBLE, AgentMemoryBlock
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, CompletionResponse, LLMMetadata
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import CustomLLM
from llama_index.core.memory import Memory

from examples.cli import open_memory, parser

TOKEN_LIMIT = 60  # words (the tokenizer below): small, so that the third turn pushes the first out


def _recalled(system: str) -> str:
    """The memory block's note lines the model 'read' in its system message."""
    lines = system.split(PREAMBLE, 1)[1].strip().splitlines() if PREAMBLE in system else []
    return " | ".join(line.split("] ", 1)[1] for line in lines if line.startswith("- [")) or "nothing"


SCRIPT: dict[str, Callable[[str], str]] = {
    "Let's plan the billing migration: cutover the week of January 12, Dana signs off payments.": lambda system: (
        "Planned: cutover the week of January 12; open: Dana's payments sign-off."
    ),
    "Also, move the team standup to 9:30 from next Monday on, please note it in the invite.": lambda system: (
        "Done: the standup is at 9:30 from next Monday."
    ),
    "Which room do we use for the retro on Friday afternoon, the big one or the small one?": lambda system: (
        "The big one: the whole team comes."
    ),
    "What did we decide about the billing migration?": lambda system: f"From memory: {_recalled(system)}",
}


class ScriptedLLM(CustomLLM):
    """A scripted model behind LlamaIndex's LLM interface: it answers the last user line from the script, with what
    the memory block put in the system message, so a broken service shows in the transcript. No network."""

    out: Any

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=4096, num_output=256, model_name="scripted")

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        system = "\n".join(m.content or "" for m in messages if m.role.value == "system")
        user = next(m.content or "" for m in reversed(messages) if m.role.value == "user")
        if PREAMBLE in system:
            self.out(f"memory block: {_recalled(system)}")
        answer = SCRIPT[user](system)
        self.out(f"assistant> {answer}")
        return ChatResponse(message=ChatMessage(role="assistant", content=answer))

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError("the scripted model only chats")

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model only chats")


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    args = parser("python -m examples.llama_index_chat", __doc__.split("\n\n")[0]).parse_args(argv)
    memory, context = open_memory(args)
    with memory:
        block = AgentMemoryBlock(conversation=Conversation(memory, context))
        chat_memory = Memory.from_defaults(
            session_id=context.thread_id,
            token_limit=TOKEN_LIMIT,
            memory_blocks=[block],
            tokenizer_fn=str.split,  # LlamaIndex's default counts with tiktoken, which downloads its tables
        )
        engine = SimpleChatEngine.from_defaults(llm=ScriptedLLM(out=out), memory=chat_memory)
        for number, user in enumerate(SCRIPT, 1):
            out(f"── turn {number} ──\nuser> {user}")
            flushed = len(block.flushes)
            engine.chat(user)
            for flush in block.flushes[flushed:]:
                note = flush.get("note")
                out(f"flush: {flush['status']}" + (f" — note {note['id']}: {note['text']}" if note else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
