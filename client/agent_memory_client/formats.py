"""The tool definitions of ``GET /v1/tools`` in each model provider's request shape (never hand-copied).

- ``openai-chat`` (Chat Completions ``tools``): ``{"type": "function", "function": {"name", "description",
  "parameters"}}``;
- ``openai-responses`` (Responses ``tools``): ``{"type": "function", "name", "description", "parameters",
  "strict": false}``;
- ``anthropic`` (Messages ``tools``): ``{"name", "description", "input_schema"}``;
- ``bedrock`` (Converse ``toolConfig.tools``): ``{"toolSpec": {"name", "description", "inputSchema": {"json"}}}``.

``strict`` is false for OpenAI: strict mode wants every property required, and ``recall``'s ``k`` is optional;
the service checks the arguments strictly itself (an unknown key is a 422 the model sees).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Literal

from agent_memory_client.types import ToolDefinition

ToolFormat = Literal["openai-chat", "openai-responses", "anthropic", "bedrock"]


def _openai_chat(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool["name"], "description": tool["description"], "parameters": tool["parameters"]},
    }


def _openai_responses(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["parameters"],
        "strict": False,
    }


def _anthropic(tool: ToolDefinition) -> dict[str, Any]:
    return {"name": tool["name"], "description": tool["description"], "input_schema": tool["parameters"]}


def _bedrock(tool: ToolDefinition) -> dict[str, Any]:
    spec = {"name": tool["name"], "description": tool["description"], "inputSchema": {"json": tool["parameters"]}}
    return {"toolSpec": spec}


_CONVERTERS: dict[str, Callable[[ToolDefinition], dict[str, Any]]] = {
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "bedrock": _bedrock,
}
FORMATS: tuple[str, ...] = tuple(_CONVERTERS)


def convert(tools: Sequence[ToolDefinition], format: str) -> list[dict[str, Any]]:
    """Each tool in ``format``'s shape; the schemas are copies, so a caller may edit them freely."""
    try:
        converter = _CONVERTERS[format]
    except KeyError:
        raise ValueError(f"unknown tool format {format!r}; one of {', '.join(FORMATS)}") from None
    return [converter(copy.deepcopy(tool)) for tool in tools]
