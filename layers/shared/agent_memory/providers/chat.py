"""The chat-model port and its two real providers, chosen by ``MEMORY_CHAT_MODEL`` (docs/api.md §2).

- ``bedrock:<modelId>``: Bedrock Converse through boto3.
- ``openai:<model>``: any OpenAI-compatible ``/chat/completions`` server (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``).
- ``local:extractive``: no model at all: the flush's note is summarised from the messages by the flush itself
  (``memory.summary``), an extraction's facts are the user's first-person statements (``memory.first_person``);
  compression and consolidation behave as without a model.

Every call is bounded by the timeout given at construction, so a slow model fails instead of hanging.
A call may offer the model one tool (``Tool``) and require it: an OpenAI-compatible server gets it as the
request's ``tools`` with ``tool_choice`` naming it, Bedrock Converse as ``toolConfig``. The answer
(``Answer``) holds the text, the tool call's arguments when the model made one, and the tokens the provider
reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, Protocol

from agent_memory.basics.errors import ModelUnavailable
from agent_memory.basics.settings import Settings
from agent_memory.providers.clients import RemoteModel, provider_from_spec


@dataclass(frozen=True, slots=True)
class Tool:
    """One function the model is asked to call: its name, what it does, its parameters' JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Answer:
    """A model's answer: its ``text``, the ``arguments`` of its call of the offered tool (None when it answered
    in text only), and the input and output tokens the provider reported (0 when it reported none)."""

    text: str
    arguments: dict[str, Any] | None = None
    input_tokens: int = 0
    output_tokens: int = 0


class ChatModel(Protocol):
    """One system prompt and one user message in, the model's answer out; raises ModelUnavailable on any failure.

    ``complete`` is the text alone; ``ask`` the whole answer, with ``tool`` offered and required when given."""

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> str: ...

    def ask(self, *, system: str, prompt: str, max_tokens: int, tool: Tool | None = None) -> Answer: ...


class _RemoteChatModel(RemoteModel):
    """What both providers share: ``complete`` is the text of ``ask``."""

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> str:
        return self.ask(system=system, prompt=prompt, max_tokens=max_tokens).text

    def ask(self, *, system: str, prompt: str, max_tokens: int, tool: Tool | None = None) -> Answer:
        raise NotImplementedError


class BedrockChatModel(_RemoteChatModel):
    def ask(self, *, system: str, prompt: str, max_tokens: int, tool: Tool | None = None) -> Answer:
        from botocore.exceptions import BotoCoreError, ClientError

        request: dict[str, Any] = {
            "modelId": self.model,
            "system": [{"text": system}],
            "messages": [{"role": "user", "content": [{"text": prompt}]}],
            "inferenceConfig": {"maxTokens": max_tokens, "temperature": 0.2},
        }
        if tool is not None:
            spec = {"name": tool.name, "description": tool.description, "inputSchema": {"json": tool.parameters}}
            request["toolConfig"] = {"tools": [{"toolSpec": spec}], "toolChoice": {"tool": {"name": tool.name}}}
        try:
            answer = self.client.converse(**request)
            blocks = answer["output"]["message"]["content"]
            text = "".join(block.get("text", "") for block in blocks)
            calls = [block["toolUse"] for block in blocks if "toolUse" in block]
            arguments = next((call["input"] for call in calls if tool and call.get("name") == tool.name), None)
            usage = answer.get("usage") or {}
        except (BotoCoreError, ClientError, KeyError, TypeError) as error:
            raise ModelUnavailable(f"the chat model failed: {type(error).__name__}") from error
        if answer.get("stopReason") == "max_tokens":
            raise ModelUnavailable("the chat model's answer was cut off at its token limit")
        return Answer(text, _object(arguments), _count(usage.get("inputTokens")), _count(usage.get("outputTokens")))


class OpenAIChatModel(_RemoteChatModel):
    def ask(self, *, system: str, prompt: str, max_tokens: int, tool: Tool | None = None) -> Answer:
        import httpx

        request: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "temperature": 0.2,
        }
        if tool is not None:
            function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
            request["tools"] = [{"type": "function", "function": function}]
            request["tool_choice"] = {"type": "function", "function": {"name": tool.name}}
        try:
            response = self.client.post("chat/completions", json=request)
            response.raise_for_status()
            body = response.json()
            choice = body["choices"][0]
            message = choice["message"]
            text = message.get("content")
            calls = message.get("tool_calls") or []
            arguments = next(
                (call["function"]["arguments"] for call in calls if tool and call["function"]["name"] == tool.name),
                None,
            )
            usage = body.get("usage") or {}
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
            raise ModelUnavailable(f"the chat model failed: {type(error).__name__}") from error
        if choice.get("finish_reason") == "length":
            raise ModelUnavailable("the chat model's answer was cut off at its token limit")
        if arguments is None and not isinstance(text, str):
            raise ModelUnavailable("the chat model answered without text")
        tokens = (_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))
        return Answer(text if isinstance(text, str) else "", _object(arguments), *tokens)


def _object(arguments: object) -> dict[str, Any] | None:
    """A tool call's arguments as an object (OpenAI-compatible servers send them as JSON text); arguments that are
    not a JSON object come back as ``{"unreadable": ...}``, which the caller's validation refuses."""
    if arguments is None:
        return None
    if isinstance(arguments, str):
        text = arguments
        try:
            arguments = json.loads(text)
        except ValueError:
            return {"unreadable": text[:200]}
    return arguments if isinstance(arguments, dict) else {"unreadable": arguments}


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


# What the service asks a chat model for: a document over its limit compressed, a conversation's flush note,
# a stretch of conversation's facts, and the nightly fold. Each has its own time budget, so each gets a model
# made with that budget.
ModelUse = Literal["compression", "flush", "extraction", "fold"]


class ChatModels(Protocol):
    """The chat model a use (``ModelUse``) asks, or None when the deployment has none. A part of the object graph
    (``bootstrap.Services.chat_models``): a test hands in its scripted models instead of patching a use case."""

    def __call__(self, use: ModelUse) -> ChatModel | None: ...


class ConfiguredChatModels:
    """The deployment's chat model (``MEMORY_CHAT_MODEL``), made on a use's first need with that use's time budget
    (seconds) and kept: a client costs tens of milliseconds to build, a warm sandbox reuses it."""

    def __init__(self, settings: Settings, budgets_s: dict[ModelUse, float]) -> None:
        self._settings = settings
        self._budgets_s = budgets_s
        self._made = cache(self._make)

    def __call__(self, use: ModelUse) -> ChatModel | None:
        return self._made(use)

    def _make(self, use: ModelUse) -> ChatModel | None:
        return chat_model_from_settings(self._settings, timeout_s=self._budgets_s[use])


def chat_model_from_settings(settings: Settings, *, timeout_s: float) -> ChatModel | None:
    """The deployment's default chat model, or None when ``MEMORY_CHAT_MODEL`` is unset, ``none`` or
    ``local:extractive`` (no model: the flush summarises the messages itself, ``memory.summary``)."""
    if settings.chat_model == "local:extractive":
        return None
    makers: dict[str, Callable[[Any, str], ChatModel]] = {"bedrock": BedrockChatModel, "openai": OpenAIChatModel}
    return provider_from_spec(settings.chat_model, settings, makers, timeout_s=timeout_s, connect_timeout_s=5)
