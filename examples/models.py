"""The chat models the example agent can talk to, behind one small interface.

The history is kept in one neutral shape and each model turns it into its provider's request:

- ``{"role": "user", "content": text}``
- ``{"role": "assistant", "content": text, "tool_calls": [{"id", "name", "arguments": dict}]}``
- ``{"role": "tool", "tool_call_id": id, "name": name, "content": result dict}``

``BedrockConverse`` (the default) and ``OpenAIChat`` (any OpenAI-compatible server) call a real model;
``ScriptedFakeModel`` (``examples/scripted_model.py``) is the offline demo's fake.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from agent_memory_client import Conversation

Message = dict[str, Any]


@dataclass
class Reply:
    """What the model answered: text, and the tool calls it wants run (none: the turn is over)."""

    text: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


class ChatModel(Protocol):
    tool_format: str

    def reply(self, system: str, history: list[Message], tools: list[dict[str, Any]]) -> Reply: ...


# --- Bedrock Converse -------------------------------------------------------------------------------------------


def converse_messages(history: list[Message]) -> list[dict[str, Any]]:
    """The neutral history as Converse messages: tool results go back in a user message, consecutive ones merged."""
    messages: list[dict[str, Any]] = []
    for item in history:
        if item["role"] == "tool":
            block = {"toolResult": {"toolUseId": item["tool_call_id"], "content": [{"json": item["content"]}]}}
            if "error" in item["content"]:
                block["toolResult"]["status"] = "error"
            if messages and messages[-1]["role"] == "user" and "toolResult" in messages[-1]["content"][0]:
                messages[-1]["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
        elif item["role"] == "assistant":
            content: list[dict[str, Any]] = [{"text": item["content"]}] if item["content"] else []
            for call in item.get("tool_calls", []):
                content.append({"toolUse": {"toolUseId": call["id"], "name": call["name"], "input": call["arguments"]}})
            messages.append({"role": "assistant", "content": content})
        else:
            messages.append({"role": "user", "content": [{"text": item["content"]}]})
    return messages


class BedrockUnavailable(Exception):
    """Bedrock cannot be called from here (no region, no credentials): one line that says what to set."""


OTHER_MODELS = "or talk to an OpenAI-compatible server with --openai-base-url, or play offline with --offline"


def bedrock_client(region: str | None) -> Any:
    """A ``bedrock-runtime`` client, after checking what botocore would otherwise raise mid-chat as a traceback."""
    from botocore.session import get_session

    session = get_session()
    region = region or session.get_config_variable("region")
    if not region:
        raise BedrockUnavailable(
            f"Bedrock needs an AWS region: pass --region or set AWS_DEFAULT_REGION ({OTHER_MODELS})"
        )
    if session.get_credentials() is None:
        raise BedrockUnavailable(
            "Bedrock needs AWS credentials and none were found (environment, ~/.aws, SSO or an instance role):"
            f" run `aws configure` or `aws sso login`, or set AWS_PROFILE ({OTHER_MODELS})"
        )
    return session.create_client("bedrock-runtime", region_name=region)


class BedrockConverse:
    tool_format = "bedrock"

    def __init__(self, model_id: str, region: str | None = None, client: Any = None) -> None:
        self.model_id = model_id
        self.client = client or bedrock_client(region)

    def reply(self, system: str, history: list[Message], tools: list[dict[str, Any]]) -> Reply:
        answer = self.client.converse(
            modelId=self.model_id,
            system=[{"text": system}],
            messages=converse_messages(history),
            toolConfig={"tools": tools},
        )
        content = answer["output"]["message"]["content"]
        text = "".join(block.get("text", "") for block in content)
        calls = [
            {"id": b["toolUse"]["toolUseId"], "name": b["toolUse"]["name"], "arguments": b["toolUse"]["input"]}
            for b in content
            if "toolUse" in b
        ]
        return Reply(text, calls)


# --- OpenAI-compatible Chat Completions -------------------------------------------------------------------------


def openai_messages(system: str, history: list[Message]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for item in history:
        if item["role"] == "tool":
            messages.append(
                {"role": "tool", "tool_call_id": item["tool_call_id"], "content": json.dumps(item["content"])}
            )
        elif item["role"] == "assistant" and item.get("tool_calls"):
            calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for c in item["tool_calls"]
            ]
            messages.append({"role": "assistant", "content": item["content"] or None, "tool_calls": calls})
        else:
            messages.append({"role": item["role"], "content": item["content"]})
    return messages


class OpenAIChat:
    tool_format = "openai-chat"

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout_s: float = 60.0) -> None:
        self.model = model
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s)

    def reply(self, system: str, history: list[Message], tools: list[dict[str, Any]]) -> Reply:
        body = {"model": self.model, "messages": openai_messages(system, history), "tools": tools}
        answer = self.http.post("/chat/completions", json=body)
        answer.raise_for_status()
        message = answer.json()["choices"][0]["message"]
        calls = []
        for call in message.get("tool_calls") or []:
            try:
                arguments = json.loads(call["function"]["arguments"] or "{}")
            except ValueError:
                arguments = call["function"]["arguments"]  # handle() answers the model that it is not JSON
            calls.append({"id": call["id"], "name": call["function"]["name"], "arguments": arguments})
        return Reply(message.get("content") or "", calls)


def run_turn(
    model: ChatModel, conversation: Conversation, system: str, history: list[Message], max_rounds: int = 5
) -> list[Message]:
    """One turn: ask the model; run each memory tool call with the conversation's context; ask again with the
    results, until the model answers without tool calls. Returns the messages the turn added."""
    added: list[Message] = []
    tools = conversation.tools(format=model.tool_format)
    for _ in range(max_rounds):
        reply = model.reply(system, history + added, tools)
        for call in reply.tool_calls:
            call.setdefault("id", f"call-{uuid.uuid4().hex[:8]}")
        added.append({"role": "assistant", "content": reply.text, "tool_calls": reply.tool_calls})
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            if call["name"] in conversation.tool_names():
                result = conversation.handle(call["name"], call["arguments"])
            else:
                result = {"error": {"code": "unknown_tool", "message": f"no tool named {call['name']}"}}
            added.append({"role": "tool", "tool_call_id": call["id"], "name": call["name"], "content": result})
    return added
