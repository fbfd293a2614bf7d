"""A tool call, parsed in the contract's order: envelope and context, then scope, then arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from agent_memory.domain.scope import Scope, bind_scope
from agent_memory.edges.requests import ConversationContext, StrictModel, parse_arguments, parse_envelope

ArgsT = TypeVar("ArgsT", bound=StrictModel)


@dataclass(frozen=True, slots=True)
class ToolCall(Generic[ArgsT]):
    context: ConversationContext
    scope: Scope
    arguments: ArgsT


def parse_tool_call(raw_body: str | None, arguments_model: type[ArgsT]) -> ToolCall[ArgsT]:
    context, raw_arguments = parse_envelope(raw_body, takes_arguments=True)
    scope = bind_scope(context)
    return ToolCall(context, scope, parse_arguments(arguments_model, raw_arguments))


def parse_context_call(raw_body: str | None) -> tuple[ConversationContext, Scope]:
    context, _ = parse_envelope(raw_body, takes_arguments=False)
    return context, bind_scope(context)
