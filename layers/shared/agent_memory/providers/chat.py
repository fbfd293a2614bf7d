"""The chat-model port and its two real providers, chosen by ``MEMORY_CHAT_MODEL`` (docs/api.md §2).

- ``bedrock:<modelId>``: Bedrock Converse through boto3.
- ``openai:<model>``: any OpenAI-compatible ``/chat/completions`` server (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``).
- ``local:extractive``: in process, for the memory's own calls without a model: the flush's note is taken
  from the messages; it writes no document (compression and consolidation behave as without a model).

Every call is bounded by the timeout given at construction, so a slow model fails instead of hanging.
A call may offer the model one tool (``Tool``) and require it: an OpenAI-compatible server gets it as the
request's ``tools`` with ``tool_choice`` naming it, Bedrock Converse as ``toolConfig``. The answer
(``Answer``) holds the text, the tool call's arguments when the model made one, and the tokens the provider
reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agent_memory.basics.errors import ModelUnavailable
from agent_memory.basics.settings import Settings
from agent_memory.domain.fence import unfence
from agent_memory.domain.prompts import FLUSH_SYSTEM
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
    in text only), and the input and output tokens the provider reported (0 when it reported none).
    ``model_free`` marks an answer no model wrote (``local:extractive``), so that the answers built on it can
    say so."""

    text: str
    arguments: dict[str, Any] | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    model_free: bool = False


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


class ExtractiveChatModel:
    """``local:extractive``: no model, only extraction. Asked for a flush note, it answers what the conversation
    is about (its first user message's first sentence) and its last open question (the last sentence ending in
    ``?``), at most 500 characters; asked for anything else (a document), it fails: ``document_writer`` keeps it
    away from compression and consolidation, which then do what they do without a model."""

    NOTE_MAX_CHARS = 500

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> str:
        return self.ask(system=system, prompt=prompt, max_tokens=max_tokens).text

    def ask(self, *, system: str, prompt: str, max_tokens: int, tool: Tool | None = None) -> Answer:
        if system != FLUSH_SYSTEM:
            raise ModelUnavailable("the local extractive model writes flush notes only")
        return Answer(extractive_note(_transcript(prompt)), model_free=True)


def _transcript(prompt: str) -> list[tuple[str, str]]:
    """The ``(role, content)`` lines of ``domain.prompts.flush_prompt``'s conversation block."""
    body = prompt.split("<conversation>\n", 1)[-1].rsplit("\n</conversation>", 1)[0]
    messages = []
    for line in body.split("\n"):
        role, separator, content = line.partition(": ")
        if separator and role in ("user", "assistant", "system", "tool"):
            messages.append((role, unfence(content).strip()))
    return messages


def extractive_note(messages: list[tuple[str, str]]) -> str:
    """What the conversation is about and its last open question, from the messages themselves."""
    said = [(role, content) for role, content in messages if content]
    opening = next((content for role, content in said if role == "user"), said[0][1] if said else "")
    about = _sentences(opening)[0] if opening else "an unknown subject"
    asked = [sentence for _, content in said for sentence in _sentences(content) if sentence.endswith("?")]
    question = asked[-1] if asked else None
    about = _clipped(about, 240)
    note = f"Conversation about: {about}" + ("" if about.endswith((".", "!", "?")) else ".")
    note += f" Last open question: {_clipped(question, 230)}" if question else " No open question."
    return _clipped(note, ExtractiveChatModel.NOTE_MAX_CHARS)


def _sentences(text: str) -> list[str]:
    """``text`` cut after each ``.``, ``!`` or ``?`` that ends a word; never empty for a non-empty text."""
    parts = [part.strip() for part in re.split(r"(?<=[.!?])\s+", " ".join(text.split()))]
    return [part for part in parts if part] or [text.strip()]


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def document_writer(model: ChatModel | None) -> ChatModel | None:
    """The model to write a document with (compression, consolidation): None when there is none, or when the
    configured one writes no documents (``local:extractive``)."""
    return None if isinstance(model, ExtractiveChatModel) else model


def chat_model_from_settings(settings: Settings, *, timeout_s: float) -> ChatModel | None:
    """The deployment's default chat model, or None when ``MEMORY_CHAT_MODEL`` is unset or ``none``."""
    if settings.chat_model == "local:extractive":
        return ExtractiveChatModel()
    makers: dict[str, Callable[[Any, str], ChatModel]] = {"bedrock": BedrockChatModel, "openai": OpenAIChatModel}
    return provider_from_spec(settings.chat_model, settings, makers, timeout_s=timeout_s, connect_timeout_s=5)
