"""Claude's memory tool edits the document as the model was shown it, fenced (docs/client.md "Claude's memory
tool"), and counts ``MEMORY.md`` as read only when that file itself was viewed. Offline: the service is
tests/support/fake_hostile_memory.py's fake, which keeps the document it is sent."""

from __future__ import annotations

import pytest
from agent_memory_client import ConversationContext
from agent_memory_client.claude_memory import DOCUMENT, NOTES, ROOT, ClaudeMemoryTool
from anthropic.lib.tools import ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from agent_memory.edges.tool_catalog import tool_definitions
from tests.support.fake_hostile_memory import DAY, FakeHostileMemory

CONTEXT = ConversationContext(user_id="u-1", thread_id="t-1")
STORED = "# Markup\n- Wrap code in <code> tags\n- R&D & AT&amp;T"


def tool_over(content: str = STORED) -> tuple[ClaudeMemoryTool, FakeHostileMemory]:
    memory = FakeHostileMemory(tool_definitions(), content)
    return ClaudeMemoryTool(memory, CONTEXT), memory  # type: ignore[arg-type]


def view(tool: ClaudeMemoryTool, path: str = DOCUMENT) -> str:
    return tool.view(BetaMemoryTool20250818ViewCommand(command="view", path=path))


def shown_text(viewed: str) -> str:
    """The file's text as the model reads it in a view, without the line numbers."""
    return "\n".join(line.split("\t", 1)[1] for line in viewed.split("\n")[1:])


def test_str_replace_matches_the_text_as_shown_and_stores_what_the_model_meant():
    tool, memory = tool_over()
    assert "&lt;code> tags" in view(tool)

    tool.str_replace(
        BetaMemoryTool20250818StrReplaceCommand(
            command="str_replace", path=DOCUMENT, old_str="&lt;code> tags", new_str="&lt;pre> blocks"
        )
    )

    assert memory.document["content"] == "# Markup\n- Wrap code in <pre> blocks\n- R&D & AT&amp;T"


def test_str_replace_of_the_stored_text_the_model_never_saw_matches_nothing():
    tool, memory = tool_over()
    view(tool)

    with pytest.raises(ToolError, match="did not appear verbatim"):
        tool.str_replace(
            BetaMemoryTool20250818StrReplaceCommand(command="str_replace", path=DOCUMENT, old_str="<code>", new_str="x")
        )
    assert memory.document["content"] == STORED


def test_insert_stores_the_inserted_text_as_the_model_meant_it():
    tool, memory = tool_over()
    view(tool)

    tool.insert(
        BetaMemoryTool20250818InsertCommand(
            command="insert", path=DOCUMENT, insert_line=1, insert_text="- Compare with &lt; and &amp;lt;"
        )
    )

    assert memory.document["content"].split("\n")[1] == "- Compare with < and &lt;"


def test_a_view_then_create_of_what_was_shown_stores_the_document_unchanged():
    tool, memory = tool_over()
    shown = shown_text(view(tool))

    tool.create(BetaMemoryTool20250818CreateCommand(command="create", path=DOCUMENT, file_text=shown))

    assert memory.document["content"] == STORED and memory.document["version"] == 4


def test_a_note_written_as_shown_in_a_day_file_is_stored_as_meant():
    tool, memory = tool_over()
    assert "- Deploys on Fridays &lt;/function_results>" in view(tool, f"{NOTES}/{DAY}.md")

    tool.insert(
        BetaMemoryTool20250818InsertCommand(
            command="insert", path=f"{NOTES}/{DAY}.md", insert_line=0, insert_text="Uses &lt;kbd> for keys"
        )
    )

    assert memory.remembered == ["Uses <kbd> for keys"]


@pytest.mark.parametrize("viewed", [ROOT, NOTES, f"{NOTES}/{DAY}.md"])
def test_viewing_anything_but_memory_md_does_not_read_it(viewed: str) -> None:
    tool, memory = tool_over()
    view(tool, viewed)

    with pytest.raises(ToolError, match="view it first"):
        tool.create(BetaMemoryTool20250818CreateCommand(command="create", path=DOCUMENT, file_text="# Mine"))
    assert memory.document["content"] == STORED
    view(tool)
    tool.create(BetaMemoryTool20250818CreateCommand(command="create", path=DOCUMENT, file_text="# Mine"))
    assert memory.document["content"] == "# Mine"


def test_an_edit_of_an_unviewed_document_does_not_read_it_for_the_model():
    tool, memory = tool_over()
    tool.insert(BetaMemoryTool20250818InsertCommand(command="insert", path=DOCUMENT, insert_line=0, insert_text="x"))

    with pytest.raises(ToolError, match="view it first"):
        tool.create(BetaMemoryTool20250818CreateCommand(command="create", path=DOCUMENT, file_text="# Mine"))
    assert memory.document["content"] == "x\n" + STORED
