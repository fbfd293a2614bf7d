"""Claude's memory tool backed by the service: the ``anthropic`` SDK's own tool runner with ``ClaudeMemoryTool``.

The model works in the ``/memories`` directory it already knows: ``MEMORY.md`` is the user's curated document
(each edit a new version), and a file written under ``notes/`` is remembered as notes. Between two turns the user
edits the document in the dashboard, so the next edit meets a conflict: the model is told, views the file again
and redoes its edit on what it holds now.

::

    make run                                                  # the local stack, in another terminal
    PYTHONPATH=client python -m examples.claude_memory_tool   # offline: a scripted Claude plays the conversation
    make demo EXAMPLE=claude_memory_tool                      # the same, on a local stack it starts and stops
    PYTHONPATH=client python -m examples.claude_memory_tool --model claude-sonnet-4-5   # Claude (ANTHROPIC_API_KEY)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
from agent_memory_client import ConversationContext, MemoryClient
from agent_memory_client.claude_memory import ClaudeMemoryTool

from examples.cli import open_memory, parser, short
from examples.scripted_model import Results, ScriptedTurn, turn_for

INSTRUCTIONS = "You are a helpful assistant. Keep what you learn about the user in your memory directory."
DOCUMENT = "/memories/MEMORY.md"


def _said(results: Results) -> str:
    """The tool results as the scripted model 'read' them: the first line of each."""
    return " | ".join(("refused: " if r["is_error"] else "") + r["text"].split("\n")[0] for r in results)


def _lines(results: Results, *words: str) -> str:
    found = [line.split("\t", 1)[-1] for r in results for line in r["text"].split("\n")[1:]]
    return "; ".join(line for line in found if any(w in line for w in words)) or "nothing yet"


SCRIPT = [
    ScriptedTurn(
        "Hi! I'm Ana. I live in Lisbon and I'm a backend engineer on billing. Please keep that in mind.",
        [("memory", {"command": "view", "path": "/memories"})],
        lambda system, results: f"Noted in your profile: {_said(results)}",
        then=[
            [
                (
                    "memory",
                    {
                        "command": "create",
                        "path": DOCUMENT,
                        "file_text": "# About Ana\n- Lives in Lisbon\n- Backend engineer, works on billing",
                    },
                )
            ]
        ],
    ),
    ScriptedTurn(
        "Also remember that I fly to Oslo on May 3.",
        [
            (
                "memory",
                {"command": "create", "path": "/memories/notes/travel.md", "file_text": "Ana flies to Oslo on May 3"},
            )
        ],
        lambda system, results: f"I'll remember it: {_said(results)}",
    ),
    ScriptedTurn(
        "I moved to Porto last week.",
        [("memory", {"command": "str_replace", "path": DOCUMENT, "old_str": "Lisbon", "new_str": "Porto"})],
        lambda system, results: f"Updated: {_said(results)}",
        then=[  # the edit above meets the dashboard's version: read the file again, then redo it
            [("memory", {"command": "view", "path": DOCUMENT})],
            [("memory", {"command": "str_replace", "path": DOCUMENT, "old_str": "Lisbon", "new_str": "Porto"})],
        ],
    ),
    ScriptedTurn(
        "What do you know about me?",
        [("memory", {"command": "view", "path": DOCUMENT}), ("memory", {"command": "view", "path": "/memories"})],
        lambda system, results: f"From my memory: {_lines(results, 'Porto', 'metric', 'notes/')}",
    ),
]
DASHBOARD_EDIT = "\n- Prefers metric units"  # what the user adds in the dashboard between turns 2 and 3


class ScriptedClaude:
    """A scripted Claude behind the Messages API: an ``httpx2`` transport handler that answers each request of the
    tool runner with the script's next ``tool_use`` blocks, or its answer, built from the tool results the runner
    sent (so a broken service shows in the transcript). Nothing leaves the machine."""

    def __init__(self, script: list[ScriptedTurn] = SCRIPT) -> None:
        self.script = script
        self.threads: dict[str, list[dict[str, Any]]] = {}  # a reply's id: the history it ends (server-side threads)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        system = body.get("system", "")
        thread = body.get("thread") or {}
        messages = [*self.threads.get(thread.get("previous_message_id", ""), []), *body["messages"]]
        start = max(i for i, m in enumerate(messages) if m["role"] == "user" and _user_text(m) is not None)
        rounds = [_results(m) for m in messages[start + 1 :] if m["role"] == "user"]
        move = turn_for(self.script, _user_text(messages[start]) or "").step(system, rounds)
        if isinstance(move, str):
            content: list[dict[str, Any]] = [{"type": "text", "text": move}]
            stop = "end_turn"
        else:
            content = [
                {"type": "tool_use", "id": f"toolu_{len(self.threads)}_{n}", "name": name, "input": arguments}
                for n, (name, arguments) in enumerate(move)
            ]
            stop = "tool_use"
        message = {
            "id": f"msg_{len(self.threads)}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        self.threads[message["id"]] = [*messages, {"role": "assistant", "content": content}]
        return httpx2.Response(200, json=message)


def _user_text(message: dict[str, Any]) -> str | None:
    """The text a user typed, or None for a message of tool results."""
    content = message["content"]
    if isinstance(content, str):
        return content
    if any(block.get("type") == "tool_result" for block in content):
        return None
    return "".join(block.get("text", "") for block in content)


def _results(message: dict[str, Any]) -> Results:
    def text(content: Any) -> str:
        return content if isinstance(content, str) else "".join(block.get("text", "") for block in content)

    return [
        {"text": text(block.get("content", "")), "is_error": bool(block.get("is_error"))}
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def scripted_claude() -> anthropic.Anthropic:
    """An ``Anthropic`` client whose requests :class:`ScriptedClaude` answers, in the process."""
    http = httpx2.Client(transport=httpx2.MockTransport(ScriptedClaude()))
    return anthropic.Anthropic(api_key="scripted", base_url="http://scripted-claude.invalid", http_client=http)


def converse(
    claude: anthropic.Anthropic,
    model: str,
    tool: ClaudeMemoryTool,
    users: list[str],
    between: Callable[[int], None] = lambda turn: None,
    out: Callable[[str], None] = print,
) -> list[str]:
    """One conversation, a tool runner per user line over the history so far; ``between(n)`` runs before turn n."""
    history: list[Any] = []
    answers = []
    for number, user in enumerate(users, 1):
        between(number)
        out(f"── turn {number} ──\nuser> {user}")
        history.append({"role": "user", "content": user})
        runner = claude.beta.messages.tool_runner(
            model=model, max_tokens=1024, system=INSTRUCTIONS, tools=[tool], messages=history
        )
        for message in runner:
            history.append(message.to_param())
            for block in message.content:
                if block.type == "tool_use":
                    out(f"model → memory {short(block.input)}")
                elif block.type == "text":
                    answers.append(block.text)
                    out(f"assistant> {block.text}")
            results = runner.generate_tool_call_response()
            if results is not None:
                history.append(results)
                for result in _results(dict(results)):
                    out(f"tool ← {'error: ' if result['is_error'] else ''}{short(result['text'], 200)}")
    return answers


def dashboard_edit(memory: MemoryClient, context: ConversationContext, out: Callable[[str], None]) -> None:
    """The user adds a line to the document in the dashboard: a new version the model has not read."""
    content = memory.get_context(context)["document"]["content"]
    saved = memory.update_memory(context, content + DASHBOARD_EDIT)["document"]
    out(f"── meanwhile the user edits MEMORY.md in the dashboard: version {saved['version']} ──")


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    p = parser("python -m examples.claude_memory_tool", __doc__.split("\n\n")[0])
    p.add_argument("--model", default=None, help="a Claude model id: the real API (ANTHROPIC_API_KEY), else scripted")
    args = p.parse_args(argv)
    memory, context = open_memory(args)
    claude = anthropic.Anthropic() if args.model else scripted_claude()
    with memory:
        tool = ClaudeMemoryTool(memory, context)
        converse(
            claude,
            args.model or "claude-scripted",
            tool,
            [turn.user for turn in SCRIPT],
            between=lambda turn: dashboard_edit(memory, context, out) if turn == 3 else None,
            out=out,
        )
        document = memory.get_context(context)["document"]
        out(f"── MEMORY.md is at version {document['version']} ──\n{document['content']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
