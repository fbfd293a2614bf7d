"""The chat backend's requests (docs/api.md §3, §4): the conversation context it alone knows, the tools'
arguments, the per-turn context, the extraction and the flush.

The models are strict: nothing unknown is accepted. The conversation context comes from the chat backend;
``arguments`` come from the model. A tool call is read in three steps so that refusals come in a fixed
order: the envelope and its context (422), then the scope binding (403/422, in ``scope``), then the
arguments (422). Nothing is read or written before all three pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, create_model

from agent_memory.basics.errors import InvalidInput
from agent_memory.domain.commands import ExtractCommand
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope, bind_scope
from agent_memory.edges.requests.reading import (
    MAX_QUERY_CHARS,
    Identifier,
    StrictModel,
    bounded_query,
    check_value,
    validated,
)

TOOL_BODY = 'the request body is required: {"context": {...}, "arguments": {...}}'
EXTRACT_BODY = 'the request body is required: {"context": {...}, "extraction_id": ..., "messages": [...]}'


class ConversationContext(StrictModel):
    """What the chat backend alone knows about the conversation a tool call came from."""

    user_id: Identifier
    thread_id: Identifier
    visibility: Literal["private", "shared"]
    workspace_id: Identifier | None = None
    thread_owner_id: Identifier | None = None
    document_version: Annotated[int, Field(ge=0)] | None = None


class RememberArgs(StrictModel):
    """Append one durable fact to this conversation's memory as a dated note."""

    text: str = Field(description="One fact, a single bullet's worth of text (at most 2,000 characters).")


class UpdateMemoryArgs(StrictModel):
    """Replace the whole curated memory document of this conversation's scope."""

    content: str = Field(description="The complete new Markdown document (it replaces the current one).")


# Non-blank (at least one character that is not whitespace) and bounded: the schema tells the model both.
RecallQuery = Annotated[
    str,
    StringConstraints(pattern=r"\S"),
    AfterValidator(bounded_query),
    Field(json_schema_extra={"maxLength": MAX_QUERY_CHARS}),
]


class RecallArgs(StrictModel):
    """Search this conversation's memory notes, best match first."""

    query: RecallQuery = Field(description="What to look for (not blank, at most 2,000 characters).")
    k: Annotated[int, Field(ge=1, le=20)] = Field(default=8, description="How many notes to return (1-20).")


class ContextRequest(StrictModel):
    """The body of ``POST /v1/context``: the conversation context alone (no ``arguments``)."""

    context: ConversationContext


def tool_request(arguments: type[StrictModel]) -> type[StrictModel]:
    """The whole body of a tool route, ``{"context", "arguments"}``, as the OpenAPI document describes it.

    The route does not validate it in one go: it parses it in the contract's order (``tool_call``: the envelope,
    then the scope, then ``parse_arguments``), so that a refusal of the scope comes before one of the arguments.
    """
    name = arguments.__name__.removesuffix("Args") + "Request"
    model: type[StrictModel] = create_model(
        name,
        __base__=StrictModel,
        __doc__=f"A tool call: the conversation context and the model's arguments ({arguments.__doc__})",
        context=(ConversationContext, ...),
        arguments=(arguments, ...),
    )
    return model


class ChatMessage(StrictModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str


class FlushRequest(StrictModel):
    """The direct-invoke payload of FlushFunction (docs/api.md §4)."""

    context: ConversationContext
    compaction_id: Identifier
    messages: Annotated[list[ChatMessage], Field(min_length=1, max_length=2000)]


def parse_flush_request(event: object) -> FlushRequest:
    check_value(event, loc="payload")
    return validated(FlushRequest, event, message="the flush payload does not match the contract")


class ExtractRequest(StrictModel):
    """The body of ``POST /v1/extract`` (docs/api.md §3): a stretch of conversation to turn into facts."""

    context: ConversationContext
    extraction_id: Identifier = Field(description="Once per `(thread_id, extraction_id)`: a repeat is a duplicate.")
    messages: Annotated[list[ChatMessage], Field(min_length=1, max_length=2000)] = Field(
        description="Oldest first; a fact cites their indexes."
    )


def extract_command(request: ExtractRequest) -> ExtractCommand:
    """The extraction the body asks for, its scope bound, before anything is read or written."""
    context = request.context
    return ExtractCommand(
        scope=bind_scope(context),
        origin=Origin(context.user_id, context.thread_id),
        extraction_id=request.extraction_id,
        messages=tuple((message.role, message.content) for message in request.messages),
    )


ArgsT = TypeVar("ArgsT", bound=StrictModel)


class _Envelope(BaseModel):
    """The outer shape; ``arguments`` is validated separately, after the scope is bound."""

    model_config = ConfigDict(extra="forbid", strict=True)

    context: ConversationContext
    arguments: dict[str, Any] | None = None


def _envelope(body: dict[str, Any], *, takes_arguments: bool) -> tuple[ConversationContext, dict[str, Any]]:
    """The body's context, validated; the arguments stay raw until the scope is bound."""
    envelope = validated(_Envelope, body)
    if takes_arguments and envelope.arguments is None:
        raise InvalidInput(
            "`arguments` is required", details=[{"loc": ["arguments"], "msg": "Field required", "type": "missing"}]
        )
    if not takes_arguments and envelope.arguments is not None:
        raise InvalidInput(
            "this route takes no `arguments`",
            details=[{"loc": ["arguments"], "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}],
        )
    return envelope.context, envelope.arguments or {}


def parse_arguments(model: type[ArgsT], arguments: dict[str, Any]) -> ArgsT:
    """Validate the model-produced arguments; an unknown key (a scope, a user id...) is a 422."""
    return validated(
        model, arguments, message="the tool arguments do not match the tool's schema", prefix=("arguments",)
    )


# --- A tool call, read in the contract's order: envelope and context, then scope, then arguments -----------


@dataclass(frozen=True, slots=True)
class ToolCall(Generic[ArgsT]):
    context: ConversationContext
    scope: Scope
    arguments: ArgsT


def tool_call(body: dict[str, Any], arguments_model: type[ArgsT]) -> ToolCall[ArgsT]:
    context, raw_arguments = _envelope(body, takes_arguments=True)
    scope = bind_scope(context)
    return ToolCall(context, scope, parse_arguments(arguments_model, raw_arguments))


def context_call(body: dict[str, Any]) -> tuple[ConversationContext, Scope]:
    context, _ = _envelope(body, takes_arguments=False)
    return context, bind_scope(context)
