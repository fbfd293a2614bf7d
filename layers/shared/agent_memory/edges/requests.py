"""Request models of the tool and context routes (docs/api.md §3): strict, nothing unknown accepted.

The conversation context comes from the chat backend; ``arguments`` come from the model. Parsing
happens in three steps so that refusals come in a fixed order: the envelope and its context (422),
then the scope binding (403/422, in ``scope``), then the arguments (422). Nothing is read or written
before all three pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, create_model

from agent_memory.basics.errors import InvalidInput
from agent_memory.domain.scope import Scope, bind_scope
from agent_memory.edges.parsing import ID_PATTERN, check_value, parse_json_object

Identifier = Annotated[str, StringConstraints(pattern=ID_PATTERN)]


class StrictModel(BaseModel):
    """Unknown keys are an error and no type is coerced (``"3"`` is not an integer)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


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


class RecallArgs(StrictModel):
    """Search this conversation's memory notes, best match first."""

    # Non-blank: at least one character that is not whitespace (the schema tells the model so too).
    query: Annotated[str, StringConstraints(pattern=r"\S")] = Field(description="What to look for (not blank).")
    k: Annotated[int, Field(ge=1, le=20)] = Field(default=8, description="How many notes to return (1-20).")


class ContextRequest(StrictModel):
    """The body of ``POST /v1/context``: the conversation context alone (no ``arguments``)."""

    context: ConversationContext


def tool_request(arguments: type[StrictModel]) -> type[StrictModel]:
    """The whole body of a tool route, ``{"context", "arguments"}``, as the OpenAPI document describes it.

    The route does not validate it in one go: it parses it in the contract's order (``parse_envelope``,
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
    try:
        return FlushRequest.model_validate(event)
    except ValidationError as exc:
        raise InvalidInput("the flush payload does not match the contract", details=_details(exc)) from None


ArgsT = TypeVar("ArgsT", bound=StrictModel)


class _Envelope(BaseModel):
    """The outer shape; ``arguments`` is validated separately, after the scope is bound."""

    model_config = ConfigDict(extra="forbid", strict=True)

    context: ConversationContext
    arguments: dict[str, Any] | None = None


def _details(error: ValidationError, prefix: tuple[str | int, ...] = ()) -> list[dict[str, Any]]:
    return [
        {"loc": [*prefix, *item["loc"]], "msg": item["msg"], "type": item["type"]}
        for item in error.errors(include_url=False, include_input=False)
    ]


def parse_envelope(raw_body: str | None, *, takes_arguments: bool) -> tuple[ConversationContext, dict[str, Any]]:
    """Decode the body and validate its context; the arguments stay raw until the scope is bound."""
    if not raw_body:
        raise InvalidInput('the request body is required: {"context": {...}, "arguments": {...}}')
    payload = parse_json_object(raw_body)
    try:
        envelope = _Envelope.model_validate(payload)
    except ValidationError as exc:
        raise InvalidInput("the request does not match the contract", details=_details(exc)) from None
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
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise InvalidInput(
            "the tool arguments do not match the tool's schema", details=_details(exc, ("arguments",))
        ) from None


# --- A tool call, parsed in the contract's order: envelope and context, then scope, then arguments ----------


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
