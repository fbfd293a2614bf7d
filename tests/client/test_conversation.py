"""The conversation helper: tool definitions in each provider's own request types, tool calls run with the context."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_memory_client import Conversation, ConversationContext, MemoryClient
from agent_memory_client.formats import FORMATS, convert
from anthropic.types import ToolParam
from botocore.session import get_session
from botocore.validate import ParamValidator
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter, ValidationError

from tests.support.clients import FLUSH_SUMMARY

pytestmark = pytest.mark.slow


def valid_as(sdk_type: Any, tool: dict[str, Any]) -> bool:
    """The SDK's own request type accepts the tool and keeps every key (pydantic drops keys a TypedDict lacks)."""
    try:
        return bool(TypeAdapter(sdk_type).validate_python(tool) == tool)
    except ValidationError:
        return False


def converse_errors(tools: list[dict[str, Any]]) -> str:
    """botocore's validation of a Converse request (the bedrock-runtime service model) holding these tools."""
    shape = get_session().get_service_model("bedrock-runtime").operation_model("Converse").input_shape
    request = {
        "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "toolConfig": {"tools": tools, "toolChoice": {"auto": {}}},
    }
    return ParamValidator().validate(request, shape).generate_report()


def test_each_format_is_a_valid_request_of_its_providers_sdk(memory: MemoryClient) -> None:
    served = memory.list_tools()
    conversation = Conversation(memory, ConversationContext(user_id="h-formats", thread_id="t-1"))

    chat = conversation.tools(format="openai-chat")
    responses = conversation.tools(format="openai-responses")
    anthropic = conversation.tools(format="anthropic")
    bedrock = conversation.tools(format="bedrock")

    assert all(valid_as(ChatCompletionToolParam, tool) for tool in chat)
    assert all(valid_as(FunctionToolParam, tool) for tool in responses)
    assert all(valid_as(ToolParam, tool) and tool["input_schema"]["type"] == "object" for tool in anthropic)
    assert converse_errors(bedrock) == ""
    # Generated from GET /v1/tools, not hand-copied: the same names, descriptions and schemas in every shape.
    assert [t["function"] for t in chat] == served
    assert [{"name": t["name"], "description": t["description"], "parameters": t["parameters"]} for t in responses] == (
        served
    )
    assert [
        {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]} for t in anthropic
    ] == (served)
    specs = [t["toolSpec"] for t in bedrock]
    assert [
        {"name": s["name"], "description": s["description"], "parameters": s["inputSchema"]["json"]} for s in specs
    ] == (served)


def test_the_validators_do_refuse_a_wrong_shape() -> None:
    tool = {"name": "recall", "description": "d", "parameters": {"type": "object"}}
    assert not valid_as(ChatCompletionToolParam, {**convert([tool], "openai-chat")[0], "input_schema": {}})
    assert not valid_as(ToolParam, {"name": "recall", "parameters": {"type": "object"}})
    assert "Unknown parameter" in converse_errors([{"toolSpec": {"name": "recall", "parameters": {}}}])
    with pytest.raises(ValueError, match="unknown tool format"):
        convert([tool], "gemini")
    assert set(FORMATS) == {"openai-chat", "openai-responses", "anthropic", "bedrock"}


def test_a_turn_remember_recall_and_update_with_the_conversations_context(memory: MemoryClient) -> None:
    conversation = Conversation(memory, ConversationContext(user_id="h-turn", thread_id="t-1"))
    prompt = conversation.system_prompt()

    remembered = conversation.handle("remember", {"text": "Allergic to peanuts"})
    recalled = conversation.handle("recall", json.dumps({"query": "peanuts allergy"}))  # OpenAI's JSON text
    updated = conversation.handle("update_memory", {"content": "# Health\n- Allergic to peanuts"})
    again = conversation.handle("update_memory", {"content": "# Health\n- Allergic to peanuts and shellfish"})

    assert "<recent_memory_notes>" in prompt
    assert remembered["note"]["origin"] == {"user_id": "h-turn", "thread_id": "t-1"}
    assert [note["text"] for note in recalled["notes"]] == ["Allergic to peanuts"]
    assert updated["document"]["version"] == 1 and again["document"]["version"] == 2
    assert "Allergic to peanuts" in conversation.system_prompt()


def test_refusals_go_back_to_the_model_as_errors(memory: MemoryClient, dashboard: Any) -> None:
    from local.token import mint

    conversation = Conversation(memory, ConversationContext(user_id="h-refused", thread_id="t-1"))
    conversation.system_prompt()  # shows version 0
    dashboard(mint("h-refused", [])).put_document("# edited elsewhere", 0)

    stale = conversation.handle("update_memory", {"content": "# mine"})
    named_scope = conversation.handle("remember", {"text": "x", "workspace_id": "w-other"})
    not_json = conversation.handle("recall", "{not json")
    blank = conversation.handle("recall", {"query": " "})

    assert stale["error"]["code"] == "version_conflict"
    assert named_scope["error"]["code"] == "invalid_input"
    assert any("workspace_id" in detail["loc"] for detail in named_scope["error"]["details"])
    assert not_json["error"]["code"] == "invalid_input" and blank["error"]["code"] == "invalid_input"
    assert memory.get_context(conversation.context)["recent_notes"] == []
    with pytest.raises(ValueError, match="not a memory tool"):
        conversation.handle("get_weather", {})


def test_the_flush_before_a_summary(memory: MemoryClient) -> None:
    conversation = Conversation(memory, ConversationContext(user_id="h-flush", thread_id="t-1"))
    conversation.system_prompt()
    messages = [{"role": "user", "content": "Plan the billing migration"}, {"role": "assistant", "content": "Sure."}]

    outcome = conversation.flush("cmp-h-1", messages)

    assert outcome["status"] == "written" and outcome["note"] is not None
    assert outcome["note"]["text"] == FLUSH_SUMMARY
    assert FLUSH_SUMMARY in conversation.system_prompt()


def _said(*turns: str) -> list[dict[str, str]]:
    """A conversation of user turns, each answered by the assistant."""
    messages: list[dict[str, str]] = []
    for turn in turns:
        messages += [{"role": "user", "content": turn}, {"role": "assistant", "content": "Noted."}]
    return messages


def test_observe_extracts_every_n_user_turns_the_messages_not_extracted_yet(memory: MemoryClient) -> None:
    context = ConversationContext(user_id="h-observe", thread_id="t-1")
    conversation = Conversation(memory, context, extract_every=2)
    messages = _said("I live in Porto.")

    assert conversation.observe(messages) is None  # one user turn of two
    messages += _said("I'm vegetarian.")
    first = conversation.observe(messages)
    assert first is not None and first["status"] == "written"
    assert [(note["text"], note["origin"].get("messages")) for note in first["notes"]] == [
        ("The user said: I live in Porto.", [0]),
        ("The user said: I'm vegetarian.", [2]),
    ]
    assert conversation.observe(messages) is None  # nothing new
    messages += _said("I'm flying to Osaka in March.")
    assert conversation.observe(messages) is None  # one new user turn of two
    last = conversation.observe(messages, end=True)  # the session's end: what is left
    assert last is not None and [note["text"] for note in last["notes"]] == [
        "The user said: I'm flying to Osaka in March."
    ]
    assert last["notes"][0]["origin"].get("messages") == [0]  # its index in the stretch sent: messages 4 and 5


def test_observe_at_the_end_only_and_the_same_stretch_again_is_a_duplicate(memory: MemoryClient) -> None:
    context = ConversationContext(user_id="h-observe-end", thread_id="t-1")
    messages = _said("I prefer trains to planes.", "My sister Noor is a paramedic.")
    conversation = Conversation(memory, context)

    assert conversation.observe(messages) is None  # no extract_every: the end only
    written = conversation.observe(messages, end=True)
    again = Conversation(memory, context).observe(messages, end=True)  # a backend that sends the session twice

    assert written is not None and written["status"] == "written" and len(written["notes"]) == 2
    assert again == {"status": "duplicate", "notes": written["notes"], "skipped": []}


def test_observe_follows_what_it_sent_by_content_when_the_list_is_compacted(memory: MemoryClient) -> None:
    context = ConversationContext(user_id="h-observe-compacted", thread_id="t-1")
    conversation = Conversation(memory, context, extract_every=2)
    messages = _said("I live in Porto.", "I'm vegetarian.")
    first = conversation.observe(messages)
    assert first is not None and first["status"] == "written"

    # A framework's summarizing manager replaces the older messages by a summary and keeps the latest turn.
    summary = {"role": "assistant", "content": "Summary: the user lives in Porto."}
    compacted = [summary, *messages[-2:], *_said("I'm flying to Osaka in March.", "My sister Noor is a paramedic.")]
    second = conversation.observe(compacted)

    assert second is not None and second["status"] == "written"
    assert [note["text"] for note in second["notes"]] == [
        "The user said: I'm flying to Osaka in March.",
        "The user said: My sister Noor is a paramedic.",
    ]
    assert conversation.observe(compacted, end=True) is None  # nothing new


def test_observe_names_a_stretch_by_its_content_so_another_stretch_is_never_a_duplicate(memory: MemoryClient) -> None:
    context = ConversationContext(user_id="h-observe-named", thread_id="t-1")
    written = Conversation(memory, context).observe(_said("I prefer trains to planes."), end=True)
    other = Conversation(memory, context).observe(_said("I'm allergic to peanuts."), end=True)  # same positions

    assert written is not None and written["status"] == "written"
    assert other is not None and other["status"] == "written"
    assert [note["text"] for note in other["notes"]] == ["The user said: I'm allergic to peanuts."]
