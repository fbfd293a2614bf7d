"""What Claude's memory tool tells the model when a write gets no answer (docs/client.md "Claude's memory tool"):
a 503 or a request that never got an answer leaves the outcome unknown (docs/api.md §6 "Storage faults"), so the
model is told the write may have happened and to look before writing it again, never that nothing was written (it
would write the note again, or redo the edit on a document that already holds it). A refusal is still "not
written". Offline: the service is tests/support/fake_hostile_memory.py's fake, made to fail here."""

from __future__ import annotations

from typing import Any

import pytest
from agent_memory_client import ConversationContext
from agent_memory_client.claude_memory import DOCUMENT, NOTES, ClaudeMemoryTool
from agent_memory_client.errors import InvalidInput, MemoryClientError, MemoryTransportError, ServiceUnavailable
from anthropic.lib.tools import ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from agent_memory.edges.tool_catalog import tool_definitions
from tests.support.fake_hostile_memory import DAY, FakeHostileMemory

CONTEXT = ConversationContext(user_id="u-1", thread_id="t-1")
UNKNOWN = {
    "storage_unavailable": ServiceUnavailable(503, "storage_unavailable", "DynamoDB did not answer"),
    "no answer": MemoryTransportError("POST /v1/tools/remember: ReadTimeout: timed out"),
}


class FakeFailingMemory(FakeHostileMemory):
    """The fake service, whose writes raise ``error`` (after writing, when ``written``: an answer lost)."""

    def __init__(self, error: MemoryClientError) -> None:
        super().__init__(tool_definitions(), "# About\n- Lives in Lisbon")
        self.error = error

    def remember(self, context: Any, text: str) -> dict[str, Any]:
        super().remember(context, text)
        raise self.error

    def update_memory(self, context: Any, content: str) -> dict[str, Any]:
        super().update_memory(context, content)
        raise self.error


def remember_a_fact(tool: ClaudeMemoryTool) -> str:
    with pytest.raises(ToolError) as raised:
        tool.insert(
            BetaMemoryTool20250818InsertCommand(
                command="insert", path=f"{NOTES}/{DAY}.md", insert_line=0, insert_text="Prefers tea"
            )
        )
    return str(raised.value)


def edit_the_document(tool: ClaudeMemoryTool) -> str:
    tool.view(BetaMemoryTool20250818ViewCommand(command="view", path=DOCUMENT))
    with pytest.raises(ToolError) as raised:
        tool.str_replace(
            BetaMemoryTool20250818StrReplaceCommand(
                command="str_replace", path=DOCUMENT, old_str="Lisbon", new_str="Porto"
            )
        )
    return str(raised.value)


@pytest.mark.parametrize("error", UNKNOWN.values(), ids=UNKNOWN.keys())
def test_a_note_without_an_answer_may_have_been_remembered(error: MemoryClientError) -> None:
    told = remember_a_fact(ClaudeMemoryTool(FakeFailingMemory(error), CONTEXT))  # type: ignore[arg-type]

    assert "may or may not have been remembered" in told and f"View {NOTES}/<today>.md" in told
    assert "was not remembered" not in told


@pytest.mark.parametrize("error", UNKNOWN.values(), ids=UNKNOWN.keys())
def test_an_edit_without_an_answer_may_have_been_saved(error: MemoryClientError) -> None:
    told = edit_the_document(ClaudeMemoryTool(FakeFailingMemory(error), CONTEXT))  # type: ignore[arg-type]

    assert "may or may not be saved" in told and f"View {DOCUMENT}" in told
    assert "Nothing was saved" not in told


def test_a_refusal_is_still_not_written() -> None:
    refusal = InvalidInput(422, "invalid_input", "a note cannot be a heading")

    assert "was not remembered: a note cannot be a heading" in remember_a_fact(
        ClaudeMemoryTool(FakeFailingMemory(refusal), CONTEXT)  # type: ignore[arg-type]
    )
    assert "Nothing was saved: a note cannot be a heading" in edit_the_document(
        ClaudeMemoryTool(FakeFailingMemory(refusal), CONTEXT)  # type: ignore[arg-type]
    )
