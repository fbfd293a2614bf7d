"""The chat-model port and its two real providers, chosen by ``MEMORY_CHAT_MODEL`` (docs/api.md §2).

- ``bedrock:<modelId>``: Bedrock Converse through boto3.
- ``openai:<model>``: any OpenAI-compatible ``/chat/completions`` server (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``).

Every call is bounded by the timeout given at construction, so a slow model fails instead of hanging.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from agent_memory.basics.errors import ModelUnavailable
from agent_memory.basics.settings import Settings
from agent_memory.providers.clients import RemoteModel, provider_from_spec


class ChatModel(Protocol):
    """One system prompt and one user message in, the model's text out; raises ModelUnavailable on any failure."""

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> str: ...


class BedrockChatModel(RemoteModel):
    def complete(self, *, system: str, prompt: str, max_tokens: int) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            answer = self.client.converse(
                modelId=self.model,
                system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": prompt}]}],
                inferenceConfig={"maxTokens": max_tokens, "temperature": 0.2},
            )
            blocks = answer["output"]["message"]["content"]
            text = "".join(block.get("text", "") for block in blocks)
        except (BotoCoreError, ClientError, KeyError, TypeError) as error:
            raise ModelUnavailable(f"the chat model failed: {type(error).__name__}") from error
        if answer.get("stopReason") == "max_tokens":
            raise ModelUnavailable("the chat model's answer was cut off at its token limit")
        return text


class OpenAIChatModel(RemoteModel):
    def complete(self, *, system: str, prompt: str, max_tokens: int) -> str:
        import httpx

        try:
            response = self.client.post(
                "chat/completions",
                json={
                    "model": self.model,
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
                    "max_tokens": max_tokens,
                    "temperature": 0.2,
                },
            )
            response.raise_for_status()
            choice = response.json()["choices"][0]
            text = choice["message"]["content"]
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as error:
            raise ModelUnavailable(f"the chat model failed: {type(error).__name__}") from error
        if not isinstance(text, str):
            raise ModelUnavailable("the chat model answered without text")
        if choice.get("finish_reason") == "length":
            raise ModelUnavailable("the chat model's answer was cut off at its token limit")
        return text


def chat_model_from_settings(settings: Settings, *, timeout_s: float) -> ChatModel | None:
    """The deployment's default chat model, or None when ``MEMORY_CHAT_MODEL`` is unset."""
    makers: dict[str, Callable[[Any, str], ChatModel]] = {"bedrock": BedrockChatModel, "openai": OpenAIChatModel}
    return provider_from_spec(settings.chat_model, settings, makers, timeout_s=timeout_s, connect_timeout_s=5)
