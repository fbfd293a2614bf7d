"""A terminal chat agent with durable memory: the whole loop a chat backend runs, in one file.

Each turn: ``POST /v1/context`` gives the memory block for the system prompt; the model gets it and the
memory tools (``GET /v1/tools`` in its provider's shape); each tool call it makes is run with the
conversation's context (the model never names a user or a workspace); when the history grows long, the
conversation is flushed (``FlushFunction`` writes a note of it) and then summarized (the compaction).

::

    make run                                            # the local stack, in another terminal
    .venv/bin/python -m examples.agent_chat --user u-1  # Bedrock Converse (the default; --region, credentials)
    .venv/bin/python -m examples.agent_chat --user u-1 --openai-base-url http://127.0.0.1:11434/v1 --model llama3.1
    .venv/bin/python -m examples.agent_chat --offline   # the scripted fake model, no provider
    make demo                                           # the offline version, stack included

The agent's model (Bedrock, the OpenAI-compatible server, the scripted fake) is not the memory's: the flush's
note is written by the stack's own ``MEMORY_CHAT_MODEL`` (``make run``: ``local:extractive``, no model).

Commands in the chat: ``/compact`` flushes and summarizes now, ``/memory`` prints the memory block, ``/quit``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable

from agent_memory_client import Conversation, ConversationContext, MemoryClient
from botocore.exceptions import NoCredentialsError, NoRegionError

from examples.cli import lambda_url_for, short
from examples.models import BedrockConverse, BedrockUnavailable, ChatModel, Message, OpenAIChat, run_turn

# Claude Haiku 4.5 through the US cross-region inference profile (in the EU: --model eu.anthropic.claude-haiku-...;
# docs/deploying.md "Model ids and inference profiles"); on-demand calls of the bare model id are refused.
DEFAULT_BEDROCK_MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
INSTRUCTIONS = "You are a helpful assistant. Use your memory tools to keep durable facts about the user."
SUMMARY_REQUEST = "Summarize our conversation so far in a few sentences, for yourself, to continue from."

Out = Callable[[str], None]


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())


class Agent:
    """One conversation: the history, the memory helper, the model, and the compaction."""

    def __init__(self, conversation: Conversation, model: ChatModel, *, compact_after: int = 12, out: Out = print):
        self.conversation = conversation
        self.model = model
        self.compact_after = compact_after
        self.out = out
        self.history: list[Message] = []
        self.turns = 0
        self.compactions = 0

    def turn(self, user_text: str) -> str:
        self.turns += 1
        memory_block = self.conversation.system_prompt()
        self.out(f"── turn {self.turns} ──")
        self.out("memory block:")  # the system prompt from its first block on (the instructions before it are fixed)
        start = memory_block.find("<memory_document")
        self.out(_indent(memory_block[start:] if start >= 0 else memory_block))
        self.out(f"user> {user_text}")
        self.history.append({"role": "user", "content": user_text})
        added = run_turn(self.model, self.conversation, f"{INSTRUCTIONS}\n\n{memory_block}", self.history)
        for message in added:
            for call in message.get("tool_calls", []):
                self.out(f"model → {call['name']} {short(call['arguments'])}")
            if message["role"] == "tool":
                self.out(f"tool ← {message['name']} {short(message['content'])}")
        self.history.extend(added)
        answer = str(added[-1]["content"])
        self.out(f"assistant> {answer}")
        if len(self.history) >= self.compact_after:
            self.compact()
        return answer

    def transcript(self) -> list[dict[str, str]]:
        """The history as the flush takes it: ``{"role", "content"}`` text messages."""
        messages = []
        for item in self.history:
            if item["role"] == "tool":
                messages.append({"role": "tool", "content": json.dumps(item["content"], ensure_ascii=False)})
            elif item["content"]:
                messages.append({"role": item["role"], "content": item["content"]})
        return messages

    def compact(self) -> None:
        """Flush first (a note of what the conversation is about), then replace the history by a summary."""
        self.compactions += 1
        compaction_id = f"{self.conversation.context.thread_id}-compaction-{self.compactions}"
        self.out(f"── compaction {compaction_id} ──")
        outcome = self.conversation.flush(compaction_id, self.transcript())
        note = outcome.get("note")
        written_by = " (no model: extracted from the messages)" if outcome.get("model_free") else ""
        self.out(f"flush: {outcome['status']}{written_by}" + (f" — note {note['id']}: {note['text']}" if note else ""))
        if outcome.get("reason"):
            self.out(f"flush reason: {outcome['reason']}")
        summarize = getattr(self.model, "summarize", None)
        if summarize is not None:
            summary = summarize(self.history)
        else:
            # The same tools: Converse refuses a history holding tool calls without them.
            ask = [*self.history, {"role": "user", "content": SUMMARY_REQUEST}]
            summary = self.model.reply(INSTRUCTIONS, ask, self.conversation.tools(format=self.model.tool_format)).text
        self.out(f"summary: {summary}")
        self.history = [{"role": "user", "content": summary}, {"role": "assistant", "content": "Understood."}]


def chat(agent: Agent, lines: Iterable[str]) -> None:
    for line in lines:
        text = line.strip()
        if not text:
            continue
        if text == "/quit":
            break
        if text == "/compact":
            agent.compact()
        elif text == "/memory":
            agent.out(agent.conversation.system_prompt())
        else:
            agent.turn(text)


def _interactive() -> Iterable[str]:
    while True:
        try:
            yield input("you> ")
        except EOFError:
            return


def _model(args: argparse.Namespace) -> ChatModel:
    if args.offline:
        from examples.scripted_model import ScriptedFakeModel

        return ScriptedFakeModel()
    if args.openai_base_url:
        return OpenAIChat(args.openai_base_url, args.model or "gpt-4o-mini", os.environ.get("OPENAI_API_KEY", ""))
    return BedrockConverse(args.model or DEFAULT_BEDROCK_MODEL, region=args.region)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m examples.agent_chat", description=__doc__.split("\n\n")[0])
    p.add_argument("--api-url", default=os.environ.get("MEMORY_API_URL", "http://127.0.0.1:3000"))
    p.add_argument("--lambda-url", default=os.environ.get("MEMORY_LAMBDA_URL"), help="locally http://127.0.0.1:3001")
    p.add_argument("--flush-function", default=os.environ.get("MEMORY_FLUSH_FUNCTION", "FlushFunction"))
    p.add_argument("--region", default=None, help="AWS region of the API and of Bedrock (else the default chain's)")
    p.add_argument("--user", default="u-1")
    p.add_argument("--thread", default="t-chat")
    p.add_argument("--workspace", default=None, help="a shared conversation: the workspace's team memory")
    p.add_argument("--model", default=None, help=f"the model id (Bedrock default: {DEFAULT_BEDROCK_MODEL})")
    p.add_argument("--openai-base-url", default=None, help="use this OpenAI-compatible server instead of Bedrock")
    p.add_argument("--offline", action="store_true", help="play the scripted demo with the scripted fake model")
    p.add_argument("--compact-after", type=int, default=None, help="messages in the history before a compaction")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    client = MemoryClient(
        args.api_url,
        region=args.region,
        lambda_endpoint=lambda_url_for(args.api_url, args.lambda_url),
        flush_function=args.flush_function,
    )
    context = ConversationContext(
        user_id=args.user,
        thread_id=args.thread,
        visibility="shared" if args.workspace else "private",
        workspace_id=args.workspace,
    )
    try:
        agent = Agent(Conversation(client, context), _model(args), compact_after=args.compact_after or 24)
        if args.offline:
            from examples.scripted_model import scripted_users

            chat(agent, scripted_users())
        else:
            chat(agent, _interactive())
    except (BedrockUnavailable, NoCredentialsError, NoRegionError) as error:
        # Credentials can also go (an SSO session expiring) mid-chat: the same one line, never a traceback.
        print(f"agent_chat: {error}", file=sys.stderr)
        return 2
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
