"""The runnable examples of ``examples/``, one per integration (docs/client.md "Runnable examples"), played against
the local stack with their scripted models, and what each wrote read back through the client."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable

import pytest
from agent_memory_client import ConversationContext, MemoryClient

from tests.support.clients import FLUSH_SUMMARY, conversation_context
from tests.support.stack import ROOT, Stack, stack_environment
from tests.support.tool_venvs import adk_python, strands_python

pytestmark = pytest.mark.slow
FACT = "Ana lives in Lisbon and wants metric units"


def play(main: Callable[..., int], stack: Stack, *options: str) -> str:
    """The example's transcript, played against ``stack``."""
    lines: list[str] = []
    endpoints = [
        "--api-url",
        f"http://127.0.0.1:{stack.api_port}",
        "--lambda-url",
        f"http://127.0.0.1:{stack.lambda_port}",
    ]
    assert main([*endpoints, *options], out=lines.append) == 0
    return "\n".join(lines)


def test_claude_memory_tool_edits_the_document_meets_a_conflict_and_remembers(
    client_stack: Stack, memory: MemoryClient
) -> None:
    from examples import claude_memory_tool

    transcript = play(claude_memory_tool.main, client_stack, "--user", "ex-claude", "--thread", "t-ex")

    context = ConversationContext(user_id="ex-claude", thread_id="t-ex")
    document = memory.get_context(context)["document"]
    assert document["version"] == 3  # the model's create, the dashboard's edit, the model's redone edit
    assert (
        document["content"]
        == "# About Ana\n- Lives in Porto\n- Backend engineer, works on billing\n- Prefers metric units"
    )
    assert "error: /memories/MEMORY.md was changed by someone else" in transcript
    assert [n["text"] for n in memory.get_context(context)["recent_notes"]] == ["Ana flies to Oslo on May 3"]
    assert "assistant> From my memory: - Lives in Porto; - Prefers metric units" in transcript


def agent_transcript_checks(transcript: str, memory: MemoryClient, context: ConversationContext) -> None:
    """What the agent examples that play the demo script must have written and read."""
    assert f"assistant> From my notes: {FACT}." in transcript  # the recall found turn 1's note
    assert memory.get_context(context)["document"]["version"] == 1
    notes = memory.get_context(context)["recent_notes"]
    flushed = re.search(r"^flush: written — note (\S+): (.+)$", transcript, re.MULTILINE)
    assert flushed is not None
    kept = [n for n in notes if n["source"] != "extraction"]
    assert sorted((n["source"], n["id"] == flushed[1]) for n in kept) == [("flush", True), ("remember", False)]
    # The session's end: the facts of the conversation, each citing its messages (the stack's model, one per user
    # message), those already held skipped.
    assert "── session end ──\nextraction: written" in transcript
    extracted = [n for n in notes if n["source"] == "extraction"]
    assert extracted and all(n["origin"].get("messages") for n in extracted)
    last_turn = transcript.split("── turn 5 ──")[1]
    assert flushed[2] in last_turn and "metric units" in last_turn  # the memory block the model read


def test_openai_agent_remembers_recalls_updates_and_flushes(client_stack: Stack, memory: MemoryClient) -> None:
    from examples import openai_agent

    transcript = play(openai_agent.main, client_stack, "--user", "ex-openai", "--thread", "t-ex")

    agent_transcript_checks(transcript, memory, conversation_context("ex-openai", "t-ex"))


def test_strands_agent_remembers_recalls_updates_and_flushes(client_stack: Stack, memory: MemoryClient) -> None:
    """Strands runs in its own virtualenv (``make test`` builds .venv-strands: strands-agents requires mcp<2.2, the
    MCP server mcp>=2.3), so the example is played there, as a developer runs it, against this stack."""
    python = strands_python("the Strands example")
    endpoints = ["--api-url", f"http://127.0.0.1:{client_stack.api_port}"]
    endpoints += ["--lambda-url", f"http://127.0.0.1:{client_stack.lambda_port}"]
    played = subprocess.run(
        [str(python), "-m", "examples.strands_agent", *endpoints, "--user", "ex-strands", "--thread", "t-ex"],
        cwd=ROOT,
        env=stack_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr

    agent_transcript_checks(played.stdout, memory, conversation_context("ex-strands", "t-ex"))


def test_adk_memory_service_extracts_a_session_at_its_end_and_searches_it_fenced(
    client_stack: Stack, memory: MemoryClient
) -> None:
    """Google ADK lives in its own virtualenv (``make test`` builds .venv-adk: google-adk pins its own httpx,
    starlette and opentelemetry), so the example is played there, as a developer runs it, against this stack."""
    python = adk_python("the ADK example")
    endpoints = ["--api-url", f"http://127.0.0.1:{client_stack.api_port}"]
    played = subprocess.run(
        [str(python), "-m", "examples.adk_memory", *endpoints, "--user", "ex-adk", "--thread", "s-1"],
        cwd=ROOT,
        env={**stack_environment(), "PYTHONPATH": f"{ROOT / 'client'}{os.pathsep}{ROOT}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr
    transcript = played.stdout

    # The stack's model proposes one fact per user message, citing it: messages 0 and 2 of the session.
    assert "── session end ──\nextraction: written" in transcript
    assert "(messages [0]): The user said: Hi! I live in Porto and I'm vegetarian." in transcript
    assert "(messages [2]): The user said: I'm flying to Osaka on March 3rd for two weeks." in transcript
    assert "added again: 1 extraction in all" in transcript  # nothing new since: nothing sent
    found = re.findall(r"^memory (\S+) \(\S+\): (.+)$", transcript, re.MULTILINE)
    assert "The user said: Hi! I live in Porto and I'm vegetarian." in [text for _, text in found]
    notes = memory.get_context(conversation_context("ex-adk", "s-1"))["recent_notes"]
    assert sorted(note["source"] for note in notes) == ["extraction", "extraction"]


def test_langgraph_agent_writes_and_searches_through_langmem_and_is_refused_a_delete(
    client_stack: Stack, memory: MemoryClient
) -> None:
    from examples import langgraph_agent

    transcript = play(langgraph_agent.main, client_stack, "--user", "ex-langgraph", "--thread", "t-ex")

    context = conversation_context("ex-langgraph", "t-ex")
    assert [n["text"] for n in memory.get_context(context)["recent_notes"]] == [FACT]  # the refused delete kept it
    assert f"assistant> From my notes: {FACT}." in transcript  # LangMem's search found it through recall
    assert "I could not: Error: StoreRefusal('notes are not deleted through the agent" in transcript


def test_llama_index_agent_remembers_flushes_what_leaves_the_window_and_recalls_both(
    client_stack: Stack, memory: MemoryClient
) -> None:
    from examples import llama_index_chat

    transcript = play(llama_index_chat.main, client_stack, "--user", "ex-llamaindex", "--thread", "t-ex")

    page = memory.admin.export(user="ex-llamaindex")  # every note of the user's memory, page after page
    notes = page["notes"]
    while page["next_cursor"]:
        page = memory.admin.export(user="ex-llamaindex", cursor=page["next_cursor"])
        notes += page["notes"]
    flushed = re.findall(r"^flush: written — note (\S+): ", transcript, re.MULTILINE)
    assert len(flushed) >= 2
    assert [(n["source"], n["text"]) for n in notes if n["id"] not in flushed] == [("remember", FACT)]
    assert {(n["source"], n["text"]) for n in notes if n["id"] in flushed} == {("flush", FLUSH_SUMMARY)}
    turns = transcript.split("── turn ")
    assert f"assistant> From memory: {FLUSH_SUMMARY}" in turns[5]  # the block recalled the flush's note
    assert f"assistant> From memory: {FACT}" in turns[6]  # and the fact the agent remembered in turn 1


def test_mcp_many_users_keeps_two_sessions_apart_and_refuses_a_forged_token(
    client_stack: Stack, memory: MemoryClient
) -> None:
    from examples import mcp_many_users

    transcript = play(mcp_many_users.main, client_stack, "--user", "ex-mcp-ana", "--colleague", "ex-mcp-ben")

    for user, city in (("ex-mcp-ana", "Oslo"), ("ex-mcp-ben", "Rome")):
        notes = memory.recall(conversation_context(user), "flies")["notes"]
        assert [n["text"] for n in notes] == [f"{user} flies to {city} in May"]  # the refused call wrote nothing
        assert f"{user}: ← error: " in transcript and '"code": "invalid_input"' in transcript
    assert "forged token: HTTP 401" in transcript
