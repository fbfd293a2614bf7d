"""The example agent's real-model paths, one turn each against the local stack: Bedrock Converse (botocore's Stubber,
which validates each request against the service model) and an OpenAI-compatible server (httpx's mock transport)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from agent_memory_client import Conversation, ConversationContext, MemoryClient
from botocore.session import get_session
from botocore.stub import Stubber

from examples.agent_chat import Agent
from examples.models import BedrockConverse, OpenAIChat
from tests.support.clients import FLUSH_SUMMARY

pytestmark = pytest.mark.slow


def test_a_bedrock_converse_turn_runs_the_tool_call_with_the_conversations_context(memory: MemoryClient) -> None:
    client = get_session().create_client(
        "bedrock-runtime", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    usage = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
    tool_use = {"toolUse": {"toolUseId": "tu-1", "name": "remember", "input": {"text": "Owns a bike"}}}
    with Stubber(client) as stub:
        stub.add_response(
            "converse",
            {
                "output": {"message": {"role": "assistant", "content": [tool_use]}},
                "stopReason": "tool_use",
                "usage": usage,
                "metrics": {"latencyMs": 1},
            },
        )
        stub.add_response(
            "converse",
            {
                "output": {"message": {"role": "assistant", "content": [{"text": "Noted."}]}},
                "stopReason": "end_turn",
                "usage": usage,
                "metrics": {"latencyMs": 1},
            },
        )
        lines: list[str] = []
        conversation = Conversation(memory, ConversationContext(user_id="a-bedrock", thread_id="t-1"))
        agent = Agent(
            conversation, BedrockConverse("anthropic.claude-3-5-haiku-20241022-v1:0", client=client), out=lines.append
        )

        stub.add_response(
            "converse",
            {
                "output": {"message": {"role": "assistant", "content": [{"text": "The user bought a bike."}]}},
                "stopReason": "end_turn",
                "usage": usage,
                "metrics": {"latencyMs": 1},
            },
        )
        answer = agent.turn("I bought a bike")
        agent.compact()  # flush (FlushFunction on the stack), then the model's own summary
        stub.assert_no_pending_responses()

    assert answer == "Noted."
    assert any(line.startswith("flush: written") for line in lines)
    assert agent.history == [
        {"role": "user", "content": "The user bought a bike."},
        {"role": "assistant", "content": "Understood."},
    ]
    notes = memory.get_context(conversation.context)["recent_notes"]
    assert [(note["source"], note["text"]) for note in notes] == [("flush", FLUSH_SUMMARY), ("remember", "Owns a bike")]
    assert notes[1]["origin"] == {"user_id": "a-bedrock", "thread_id": "t-1"}


def test_an_openai_compatible_turn_sends_the_tools_and_returns_the_results(memory: MemoryClient) -> None:
    memory.remember(ConversationContext(user_id="a-openai", thread_id="t-0"), "Allergic to peanuts")
    requests: list[dict[str, Any]] = []
    call = {"id": "call-1", "type": "function", "function": {"name": "recall", "arguments": '{"query": "peanuts"}'}}
    answers = [
        {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]},
        {"choices": [{"message": {"role": "assistant", "content": "You are allergic to peanuts."}}]},
    ]

    def server(request: httpx.Request) -> httpx.Response:
        requests.append(json.loads(request.content))
        return httpx.Response(200, json=answers[len(requests) - 1])

    model = OpenAIChat("http://model.invalid/v1", "some-model")
    model.http = httpx.Client(base_url="http://model.invalid/v1", transport=httpx.MockTransport(server))
    conversation = Conversation(memory, ConversationContext(user_id="a-openai", thread_id="t-1"))

    answer = Agent(conversation, model, out=lambda line: None).turn("What am I allergic to?")

    assert answer == "You are allergic to peanuts."
    assert [tool["function"]["name"] for tool in requests[0]["tools"]] == ["remember", "update_memory", "recall"]
    assert "Allergic to peanuts" in requests[0]["messages"][0]["content"]  # the memory block, in the system prompt
    result = requests[1]["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call-1"
    assert [note["text"] for note in json.loads(result["content"])["notes"]] == ["Allergic to peanuts"]
