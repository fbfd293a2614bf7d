"""Claude's memory tool backed by the service (docs/client.md "Claude's memory tool"): the ``anthropic`` SDK's own
tool runner drives :class:`ClaudeMemoryTool` against the local stack, its model replaced by a scripted transport
(no network): each scripted turn is one ``memory`` tool call, and the tool results the runner sends back are
what the model would read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import anyio
import httpx2
import pytest
from agent_memory_client import ConversationContext, MemoryClient
from agent_memory_client.claude_memory import AsyncClaudeMemoryTool, ClaudeMemoryTool

from tests.support.clients import conversation_context

pytestmark = pytest.mark.slow


class ScriptedClaude:
    """A Messages API that answers each request with the next scripted ``memory`` command as a tool call (then
    ``end_turn``), and keeps the tool results it is sent."""

    def __init__(self, commands: list[dict[str, Any]]) -> None:
        self.commands = list(commands)
        self.results: list[dict[str, Any]] = []
        self.tools: list[Any] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.tools = body.get("tools", self.tools)  # a continued thread sends only what is new
        last = body["messages"][-1]
        if last["role"] == "user" and isinstance(last["content"], list):
            self.results += [block for block in last["content"] if block.get("type") == "tool_result"]
        turn = len(self.results)
        if turn < len(self.commands):
            content: list[dict[str, Any]] = [
                {"type": "tool_use", "id": f"toolu_{turn}", "name": "memory", "input": self.commands[turn]}
            ]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "Done."}], "end_turn"
        message = {
            "id": f"msg_{turn}",
            "type": "message",
            "role": "assistant",
            "model": "claude-scripted",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return httpx2.Response(200, json=message)


def run(tool: ClaudeMemoryTool, commands: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    """The tool results of the commands, in order: (is_error, text)."""
    script = ScriptedClaude(commands)
    claude = anthropic.Anthropic(
        api_key="scripted",
        base_url="http://claude.invalid",
        http_client=httpx2.Client(transport=httpx2.MockTransport(script)),
    )
    runner = claude.beta.messages.tool_runner(
        model="claude-scripted", max_tokens=256, tools=[tool], messages=[{"role": "user", "content": "Remember."}]
    )
    for _ in runner:
        pass
    assert script.tools == [{"type": "memory_20250818", "name": "memory"}]
    results = []
    for result in script.results:
        content = result["content"]
        text = content if isinstance(content, str) else "".join(block["text"] for block in content)
        results.append((bool(result.get("is_error")), text))
    return results


@pytest.fixture
def context(request: pytest.FixtureRequest) -> ConversationContext:
    return conversation_context(f"claude-{request.node.name[:40]}".replace("[", "-").replace("]", ""))


@pytest.fixture
def tool(memory: MemoryClient, context: ConversationContext) -> Iterator[ClaudeMemoryTool]:
    yield ClaudeMemoryTool(memory, context)


def test_the_document_is_created_viewed_and_edited_as_versions(
    tool: ClaudeMemoryTool, memory: MemoryClient, context: ConversationContext
) -> None:
    results = run(
        tool,
        [
            {"command": "view", "path": "/memories"},
            {"command": "create", "path": "/memories/MEMORY.md", "file_text": "# About\n- Lives in Lisbon"},
            {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "Lisbon", "new_str": "Porto"},
            {"command": "insert", "path": "/memories/MEMORY.md", "insert_line": 1, "insert_text": "- Prefers tea"},
            {"command": "view", "path": "/memories/MEMORY.md"},
            {"command": "view", "path": "/memories/MEMORY.md", "view_range": [2, 2]},
        ],
    )

    assert [error for error, _ in results] == [False] * 6
    assert "/memories/notes/" in results[0][1] and "MEMORY.md" not in results[0][1]
    assert "(version 1)" in results[1][1] and "(version 2)" in results[2][1] and "(version 3)" in results[3][1]
    assert results[4][1].endswith("     1\t# About\n     2\t- Prefers tea\n     3\t- Lives in Porto")
    assert results[5][1].endswith("     2\t- Prefers tea")
    assert memory.get_context(context)["document"]["content"] == "# About\n- Prefers tea\n- Lives in Porto"


def test_a_fact_written_into_notes_is_a_remember_and_the_day_files_are_read_only(
    tool: ClaudeMemoryTool, memory: MemoryClient, context: ConversationContext
) -> None:
    results = run(
        tool,
        [
            {
                "command": "create",
                "path": "/memories/notes/travel.md",
                "file_text": "# Travel\n- Flies to Oslo in May\n",
            },
            {"command": "view", "path": "/memories/notes"},
        ],
    )
    day = memory.get_context(context)["recent_notes"][0]["day"]
    more = run(
        tool,
        [
            {"command": "insert", "path": f"/memories/notes/{day}.md", "insert_line": 0, "insert_text": "Owns a cat"},
            {"command": "view", "path": f"/memories/notes/{day}.md"},
            {"command": "str_replace", "path": f"/memories/notes/{day}.md", "old_str": "cat", "new_str": "dog"},
        ],
    )

    assert results[0] == (False, results[0][1]) and "Remembered 1 note(s)" in results[0][1]
    assert f"/memories/notes/{day}.md" in results[1][1]
    assert not more[0][0] and "Remembered 1 note(s)" in more[0][1]
    assert more[1] == (
        False,
        f"Here's the content of /memories/notes/{day}.md with line numbers:\n"
        "     1\t- Flies to Oslo in May\n     2\t- Owns a cat",
    )
    assert more[2][0] and "append-only" in more[2][1]
    assert [n["text"] for n in memory.recall(context, "cat Oslo")["notes"]] != []


REFUSED = [
    {"command": "view", "path": "/memories/../etc/passwd"},
    {"command": "create", "path": "/memories/../x.md", "file_text": "x"},
    {"command": "create", "path": "/memories/notes%2F..%2F..%2Fx.md", "file_text": "x"},
    {"command": "create", "path": "/memories\\notes\\x.md", "file_text": "x"},
    {"command": "create", "path": "/memories/other.md", "file_text": "x"},
    {"command": "create", "path": "/memories/notes/deeper/x.md", "file_text": "x"},
    {"command": "create", "path": "/tmp/x.md", "file_text": "x"},
    {"command": "str_replace", "path": "/memories/other.md", "old_str": "a", "new_str": "b"},
    {"command": "insert", "path": "/memories/other.md", "insert_line": 0, "insert_text": "x"},
    {"command": "delete", "path": "/memories/MEMORY.md"},
    {"command": "delete", "path": "/memories/notes"},
    {"command": "rename", "old_path": "/memories/MEMORY.md", "new_path": "/memories/OLD.md"},
    {"command": "view", "path": "/memories/notes/1999-01-01.md"},
    {"command": "create", "path": "/memories/notes/empty.md", "file_text": "# Only a heading\n\n"},
]


def test_every_refused_command_is_an_error_result_and_writes_nothing(
    tool: ClaudeMemoryTool, memory: MemoryClient, context: ConversationContext
) -> None:
    run(tool, [{"command": "create", "path": "/memories/MEMORY.md", "file_text": "# Kept"}])
    before = memory.get_context(context)

    results = run(tool, REFUSED)

    assert [error for error, _ in results] == [True] * len(REFUSED), results
    assert all(text and "Traceback" not in text for _, text in results)
    after = memory.get_context(context)
    assert after["document"] == before["document"] and after["recent_notes"] == before["recent_notes"] == []


def test_a_concurrent_edit_is_a_conflict_the_model_can_act_on(
    tool: ClaudeMemoryTool, memory: MemoryClient, context: ConversationContext
) -> None:
    run(tool, [{"command": "create", "path": "/memories/MEMORY.md", "file_text": "# Plans\n- Ski in March"}])
    memory.update_memory(context, "# Plans\n- Ski in February")  # someone else, meanwhile

    results = run(
        tool,
        [
            {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "March", "new_str": "April"},
            {"command": "view", "path": "/memories/MEMORY.md"},
            {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "February", "new_str": "April"},
        ],
    )

    assert results[0][0] and "changed by someone else" in results[0][1] and "View /memories/MEMORY.md" in results[0][1]
    assert not results[1][0] and "Ski in February" in results[1][1]
    assert not results[2][0] and "(version 3)" in results[2][1]
    assert memory.get_context(context)["document"]["content"] == "# Plans\n- Ski in April"


def test_creating_over_an_unread_document_is_refused_until_it_is_read(
    tool: ClaudeMemoryTool, memory: MemoryClient, context: ConversationContext
) -> None:
    memory.update_memory(context, "# Someone's notes")

    results = run(
        tool,
        [
            {"command": "create", "path": "/memories/MEMORY.md", "file_text": "# Mine"},
            {"command": "view", "path": "/memories"},  # the directory's listing shows none of the document
            {"command": "create", "path": "/memories/MEMORY.md", "file_text": "# Mine"},
            {"command": "view", "path": "/memories/MEMORY.md"},
            {"command": "create", "path": "/memories/MEMORY.md", "file_text": "# Mine"},
        ],
    )

    assert results[0][0] and "view it first" in results[0][1]
    assert results[2][0] and "view it first" in results[2][1]
    assert not results[4][0]
    assert memory.get_context(context)["document"]["content"] == "# Mine"


def test_a_shared_conversation_sees_its_workspaces_memory(memory: MemoryClient) -> None:
    team = ConversationContext(user_id="claude-member", thread_id="t-1", visibility="shared", workspace_id="w-claude")
    run(ClaudeMemoryTool(memory, team), [{"command": "create", "path": "/memories/MEMORY.md", "file_text": "# Team"}])

    assert memory.get_context(team)["document"]["content"] == "# Team"
    assert memory.get_context(conversation_context("claude-member"))["document"]["version"] == 0


def test_the_async_tool_runs_under_the_async_runner(memory: MemoryClient, context: ConversationContext) -> None:
    script = ScriptedClaude(
        [
            {"command": "create", "path": "/memories/MEMORY.md", "file_text": "# Async"},
            {"command": "delete", "path": "/memories/MEMORY.md"},
        ]
    )
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(script))
    claude = anthropic.AsyncAnthropic(api_key="scripted", base_url="http://claude.invalid", http_client=http)

    async def run() -> None:
        runner = claude.beta.messages.tool_runner(
            model="claude-scripted",
            max_tokens=256,
            tools=[AsyncClaudeMemoryTool(memory, context)],
            messages=[{"role": "user", "content": "Remember."}],
        )
        async for _ in runner:
            pass

    anyio.run(run)

    created, deleted = script.results
    assert not created.get("is_error") and deleted["is_error"]
    assert memory.get_context(context)["document"]["content"] == "# Async"
