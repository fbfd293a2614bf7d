"""The chat-model port's two real providers, against a local OpenAI-compatible server and botocore's Stubber."""

from __future__ import annotations

import time

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber

from agent_memory.basics.errors import ModelUnavailable
from agent_memory.basics.settings import Settings
from agent_memory.providers.chat import Answer, BedrockChatModel, OpenAIChatModel, Tool, chat_model_from_settings
from tests.support.openai_loopback import OpenAICompatible


def _openai(base_url, timeout_s=2.0):
    model = chat_model_from_settings(
        Settings(chat_model="openai:gpt-test", openai_base_url=base_url, openai_api_key="sk-local"), timeout_s=timeout_s
    )
    assert isinstance(model, OpenAIChatModel)
    return model


def test_openai_compatible_sends_system_and_user_and_returns_the_text(openai_server):
    text = _openai(openai_server).complete(system="be brief", prompt="hello", max_tokens=50)

    assert text == "rewritten"
    path, auth, body = OpenAICompatible.seen[0]
    assert path == "/v1/chat/completions"
    assert auth == "Bearer sk-local"
    assert body["model"] == "gpt-test" and body["max_tokens"] == 50
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    ("status", "reply"),
    [
        (500, {"error": "boom"}),
        (429, {"error": "slow down"}),
        (200, {"choices": []}),
        (200, {"unexpected": True}),
        (200, {"choices": [{"message": {"content": None}}]}),
        (200, {"choices": [{"message": {"content": "half"}, "finish_reason": "length"}]}),
    ],
)
def test_openai_compatible_failures_are_model_unavailable(openai_server, status, reply):
    OpenAICompatible.status, OpenAICompatible.reply = status, reply

    with pytest.raises(ModelUnavailable):
        _openai(openai_server).complete(system="s", prompt="p", max_tokens=5)


def test_openai_compatible_times_out(openai_server):
    OpenAICompatible.delay_s = 1.0
    started = time.monotonic()

    with pytest.raises(ModelUnavailable):
        _openai(openai_server, timeout_s=0.2).complete(system="s", prompt="p", max_tokens=5)
    assert time.monotonic() - started < 0.9


def _bedrock():
    client = boto3.client("bedrock-runtime", region_name="eu-west-1", config=Config(retries={"max_attempts": 1}))
    return client, BedrockChatModel(client, "anthropic.claude-test-v1:0")


def test_bedrock_converse_request_and_answer():
    client, model = _bedrock()
    with Stubber(client) as stub:
        stub.add_response(
            "converse",
            {
                "output": {"message": {"role": "assistant", "content": [{"text": "re"}, {"text": "written"}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                "metrics": {"latencyMs": 1},
            },
            {
                "modelId": "anthropic.claude-test-v1:0",
                "system": [{"text": "be brief"}],
                "messages": [{"role": "user", "content": [{"text": "hello"}]}],
                "inferenceConfig": {"maxTokens": 50, "temperature": 0.2},
            },
        )
        assert model.complete(system="be brief", prompt="hello", max_tokens=50) == "rewritten"


@pytest.mark.parametrize(
    "code", ["ThrottlingException", "ModelTimeoutException", "ValidationException", "AccessDeniedException"]
)
def test_bedrock_errors_are_model_unavailable(code):
    client, model = _bedrock()
    with Stubber(client) as stub:
        stub.add_client_error("converse", service_error_code=code, http_status_code=400)
        with pytest.raises(ModelUnavailable):
            model.complete(system="s", prompt="p", max_tokens=5)


def test_bedrock_answer_cut_at_max_tokens_is_refused():
    client, model = _bedrock()
    with Stubber(client) as stub:
        stub.add_response(
            "converse",
            {
                "output": {"message": {"role": "assistant", "content": [{"text": "half"}]}},
                "stopReason": "max_tokens",
                "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                "metrics": {"latencyMs": 1},
            },
        )
        with pytest.raises(ModelUnavailable):
            model.complete(system="s", prompt="p", max_tokens=5)


def test_bedrock_provider_is_built_with_the_timeout():
    model = chat_model_from_settings(Settings(chat_model="bedrock:amazon.nova-lite-v1:0"), timeout_s=7)

    assert isinstance(model, BedrockChatModel)
    assert model.model == "amazon.nova-lite-v1:0"
    assert model.client.meta.config.read_timeout == 7


def test_no_model_configured_is_none():
    assert chat_model_from_settings(Settings(), timeout_s=1) is None


# --- a tool offered and required, and the tokens reported -------------------------------------------------------

TOOL = Tool("edit_document", "Apply edits.", {"type": "object", "properties": {"edits": {"type": "array"}}})


def test_openai_compatible_asks_for_the_tool_call_and_reads_its_arguments_and_usage(openai_server):
    call = {"type": "function", "function": {"name": "edit_document", "arguments": '{"edits": []}'}}
    OpenAICompatible.reply = {
        "choices": [
            {"message": {"content": None, "tool_calls": [{"id": "c1", **call}]}, "finish_reason": "tool_calls"}
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
    }

    answer = _openai(openai_server).ask(system="s", prompt="p", max_tokens=50, tool=TOOL)

    assert answer == Answer("", {"edits": []}, 120, 9)
    body = OpenAICompatible.seen[-1][2]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "edit_document", "description": "Apply edits.", "parameters": TOOL.parameters},
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "edit_document"}}


def test_openai_compatible_text_instead_of_a_tool_call_is_text_and_bad_arguments_are_kept_for_refusal(openai_server):
    OpenAICompatible.reply = {"choices": [{"message": {"content": "# Doc"}, "finish_reason": "stop"}]}
    assert _openai(openai_server).ask(system="s", prompt="p", max_tokens=5, tool=TOOL) == Answer("# Doc")
    call = {"type": "function", "function": {"name": "edit_document", "arguments": "{edits: ["}}
    OpenAICompatible.reply = {
        "choices": [{"message": {"content": None, "tool_calls": [call]}, "finish_reason": "stop"}]
    }
    answer = _openai(openai_server).ask(system="s", prompt="p", max_tokens=5, tool=TOOL)
    assert answer.arguments == {"unreadable": "{edits: ["}


def test_bedrock_converse_offers_the_tool_in_tool_config_and_reads_tool_use_and_usage():
    client, model = _bedrock()
    with Stubber(client) as stub:
        stub.add_response(
            "converse",
            {
                "output": {
                    "message": {
                        "role": "assistant",
                        "content": [{"toolUse": {"toolUseId": "t1", "name": "edit_document", "input": {"edits": []}}}],
                    }
                },
                "stopReason": "tool_use",
                "usage": {"inputTokens": 300, "outputTokens": 12, "totalTokens": 312},
                "metrics": {"latencyMs": 1},
            },
            {
                "modelId": "anthropic.claude-test-v1:0",
                "system": [{"text": "s"}],
                "messages": [{"role": "user", "content": [{"text": "p"}]}],
                "inferenceConfig": {"maxTokens": 50, "temperature": 0.2},
                "toolConfig": {
                    "tools": [
                        {
                            "toolSpec": {
                                "name": "edit_document",
                                "description": "Apply edits.",
                                "inputSchema": {"json": TOOL.parameters},
                            }
                        }
                    ],
                    "toolChoice": {"tool": {"name": "edit_document"}},
                },
            },
        )
        assert model.ask(system="s", prompt="p", max_tokens=50, tool=TOOL) == Answer("", {"edits": []}, 300, 12)
