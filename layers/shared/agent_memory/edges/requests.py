"""How a request is read: the one place where untrusted input is parsed (docs/api.md §6 "Bodies and
parameters"), and the request models of the tool and context routes (docs/api.md §3).

Every body (tools, context, flush, the dashboard's writes), every integer query parameter and every
header the service reads goes through here before anything else looks at it. Which refusal is which:

- not JSON at all (or ``NaN``/``Infinity``, which JSON does not have): 400 ``malformed_request``;
- JSON, but not an object, a repeated key, nesting deeper than 32, more than 10,000 keys, a lone UTF-16
  surrogate, an integer of more than 18 digits: 422 ``invalid_input``; an integer not in plain decimal form
  (``+1``, ``1_0``, ``1.0``) in a query parameter or a path: 422 too.

A 422 of a request that does not match its model names its first problem in the message (``context.visibility``
is required) and lists them all in ``details`` (at most 20 reach the caller: ``domain.shapes.ErrorBody``).

The tools' models are strict: nothing unknown is accepted. The conversation context comes from the chat
backend; ``arguments`` come from the model. A tool call is parsed in three steps so that refusals come in a
fixed order: the envelope and its context (422), then the scope binding (403/422, in ``scope``), then the
arguments (422). Nothing is read or written before all three pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeGuard, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError, create_model

from agent_memory.basics.errors import InvalidInput, MalformedRequest, QueryTooLong
from agent_memory.domain.commands import ExtractCommand
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope, bind_scope

MAX_DEPTH = 32
MAX_INTEGER_DIGITS = 18
# Keys in one body, every level counted. The largest body of the contract holds a few dozen (a flush payload
# of 2,000 messages about 4,000); 200,000 unknown keys took seconds to validate and answered 16.7 MB.
MAX_KEYS = 10_000
MAX_QUERY_CHARS = 2_000
# A key or a path part named back to the caller (a message, a detail's ``loc``) is cut to this many characters.
MAX_NAMED_CHARS = 64
ID_PATTERN = r"^[A-Za-z0-9._@-]{1,128}$"
_ID = re.compile(ID_PATTERN)
_PLAIN_INTEGER = re.compile(r"0|[1-9][0-9]{0,17}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def is_id(value: object) -> TypeGuard[str]:
    """An id of the contract, matched in full (``"u-1\\n"`` is not one)."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def _refused(message: str, loc: list[str | int], kind: str) -> InvalidInput:
    return InvalidInput(message, details=[{"loc": loc, "msg": message, "type": kind}])


class _Duplicate(Exception):
    pass


class _NotJson(Exception):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise _Duplicate(repeated)
    return result


def _integer(text: str) -> int:
    digits = text.removeprefix("-")
    if len(digits) > MAX_INTEGER_DIGITS:
        raise _refused(
            f"an integer has at most {MAX_INTEGER_DIGITS} digits", ["body"], "integer_too_long"
        )  # raised through json.loads
    return int(text)


def _constant(name: str) -> Any:
    raise _NotJson(name)


def parse_json_object(raw: str, *, loc: str = "body") -> dict[str, Any]:
    """``raw`` as a JSON object, or the contract's refusal; nothing is read from the body otherwise."""
    payload = parse_json(raw, loc=loc)
    if not isinstance(payload, dict):
        raise _refused("the request body must be a JSON object", [loc], "not_an_object")
    return payload


def parse_json(raw: str | bytes, *, loc: str = "body") -> Any:
    """``raw`` as any JSON value within the bounds (``check_value``), or the contract's refusal: 400
    ``MalformedRequest`` for what is not JSON, 422 ``InvalidInput`` for JSON out of bounds. Never a
    ``RecursionError``: the local Invoke API reads its payloads here too."""
    try:
        payload = json.loads(raw, object_pairs_hook=_object, parse_int=_integer, parse_constant=_constant)
    except _Duplicate as duplicate:
        raise _refused(f"the key {str(duplicate)[:MAX_NAMED_CHARS]!r} appears twice", [loc], "duplicate_key") from None
    except RecursionError:
        raise _refused(f"the JSON nests deeper than {MAX_DEPTH} levels", [loc], "too_deep") from None
    except _NotJson as constant:
        raise MalformedRequest(f"the request body is not valid JSON: {constant} is not a JSON value") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedRequest(f"the request body is not valid JSON: {exc}") from None
    check_value(payload, loc=loc)
    return payload


def check_value(value: object, *, loc: str = "body") -> None:
    """Depth at most 32, at most 10,000 keys, no lone surrogate, no integer over 18 digits, in an already
    decoded value: checked before any model validates it, so that no body's size decides the validation's
    time or the size of its refusal.

    Iterative, so that a value nested as deep as Python allowed it to be decoded is refused, not a crash.
    """
    stack: list[tuple[object, int]] = [(value, 1)]
    keys = 0
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise _refused(f"the JSON nests deeper than {MAX_DEPTH} levels", [loc], "too_deep")
            if isinstance(item, dict):
                keys += len(item)
                if keys > MAX_KEYS:
                    raise _refused(f"a body holds at most {MAX_KEYS:,} keys", [loc], "too_many_keys")
                for key, child in item.items():
                    _check_text(key, loc)
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str):
            _check_text(item, loc)
        elif isinstance(item, int) and not isinstance(item, bool) and len(str(abs(item))) > MAX_INTEGER_DIGITS:
            raise _refused(f"an integer has at most {MAX_INTEGER_DIGITS} digits", [loc], "integer_too_long")


def _check_text(text: object, loc: str) -> None:
    if isinstance(text, str) and _SURROGATE.search(text):
        raise _refused("text holds a lone UTF-16 surrogate, which is not a character", [loc], "surrogate")


def plain_integer(value: str, *, loc: list[str | int]) -> int:
    """A query or path parameter that is an integer: plain decimal digits only, at most 18 of them."""
    if not _PLAIN_INTEGER.fullmatch(value):
        raise _refused("must be a plain decimal integer (digits only, at most 18)", loc, "plain_integer")
    return int(value)


def check_integer_parameters(parameters: Mapping[str, str] | None, names: frozenset[str]) -> None:
    """Each named query parameter present is a plain decimal integer (its range is checked by the route)."""
    for name, value in (parameters or {}).items():
        if name in names:
            plain_integer(value, loc=["query", name])


def lower_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Header names compared without regard to case, as HTTP says."""
    return {str(name).lower(): str(value) for name, value in (headers or {}).items()}


def media_type(headers: Mapping[str, str] | None) -> str:
    """The ``Content-Type``'s media type, lower case, without parameters; empty when absent."""
    return lower_headers(headers).get("content-type", "").split(";")[0].strip().lower()


def normalise_content_type(event: dict[str, Any]) -> None:
    """Rewrite a JSON ``Content-Type`` of any case (``APPLICATION/JSON``) as ``application/json`` in place.

    Powertools' body validation compares it case-sensitively; HTTP media types are case-insensitive.
    """
    headers = event.get("headers")
    if not isinstance(headers, dict):
        return
    for name in list(headers):
        if str(name).lower() == "content-type" and media_type({"content-type": str(headers[name])}) == (
            "application/json"
        ):
            headers[name] = "application/json"


def idempotency_key(headers: Mapping[str, str] | None) -> str | None:
    """The ``Idempotency-Key`` header (an id of the contract), None when absent; anything else is a 422."""
    value = lower_headers(headers).get("idempotency-key")
    if value is None:
        return None
    if not is_id(value):
        raise _refused("`Idempotency-Key` must match ^[A-Za-z0-9._@-]{1,128}$", ["header", "Idempotency-Key"], "id")
    return value


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


def bounded_query(query: str) -> str:
    """A recall query of at most 2,000 characters, else 422 ``validation_error`` (``QueryTooLong``).

    Raised from inside the validation (pydantic turns only ``ValueError`` and ``AssertionError`` into its own
    errors; this one passes through to the error mapping), so a query of 4.5 MB is refused at once, on the
    tool and the dashboard's search alike, before any search reads it."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLong(f"a recall query is at most {MAX_QUERY_CHARS:,} characters, not {len(query):,}")
    return query


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
        raise not_matching("the flush payload does not match the contract", exc.errors(include_url=False)) from None


class ExtractRequest(StrictModel):
    """The body of ``POST /v1/extract`` (docs/api.md §3): a stretch of conversation to turn into facts."""

    context: ConversationContext
    extraction_id: Identifier = Field(description="Once per `(thread_id, extraction_id)`: a repeat is a duplicate.")
    messages: Annotated[list[ChatMessage], Field(min_length=1, max_length=2000)] = Field(
        description="Oldest first; a fact cites their indexes."
    )


def parse_extract_request(raw_body: str | None) -> ExtractCommand:
    """The body read (JSON, then the model), then its scope bound, before anything is read or written."""
    if not raw_body:
        raise InvalidInput('the request body is required: {"context": {...}, "extraction_id": ..., "messages": [...]}')
    try:
        request = ExtractRequest.model_validate(parse_json_object(raw_body))
    except ValidationError as exc:
        raise not_matching("the request does not match the contract", exc.errors(include_url=False)) from None
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


def _named(part: str | int) -> str | int:
    return part[:MAX_NAMED_CHARS] if isinstance(part, str) else part


def _problem(detail: Mapping[str, Any]) -> str:
    where = "`" + ".".join(str(part) for part in detail["loc"]) + "`"
    if detail["type"] == "missing":
        return f"{where} is required"
    if detail["type"] == "extra_forbidden":
        return f"{where} is not allowed"
    return f"{where}: {detail['msg']}"


def not_matching(message: str, errors: Iterable[Mapping[str, Any]], prefix: tuple[str | int, ...] = ()) -> InvalidInput:
    """The 422 of a request that its model (pydantic's, or Powertools' validation of a route) refused: the
    message names the first problem (``the request does not match the contract: `context.visibility` is
    required``), ``details`` lists them all; a key named back is cut to 64 characters."""
    details = [
        {"loc": [_named(part) for part in (*prefix, *error["loc"])], "msg": error.get("msg", ""), "type": error["type"]}
        for error in errors
    ]
    return InvalidInput(f"{message}: {_problem(details[0])}" if details else message, details=details)


def parse_envelope(raw_body: str | None, *, takes_arguments: bool) -> tuple[ConversationContext, dict[str, Any]]:
    """Decode the body and validate its context; the arguments stay raw until the scope is bound."""
    if not raw_body:
        raise InvalidInput('the request body is required: {"context": {...}, "arguments": {...}}')
    payload = parse_json_object(raw_body)
    try:
        envelope = _Envelope.model_validate(payload)
    except ValidationError as exc:
        raise not_matching("the request does not match the contract", exc.errors(include_url=False)) from None
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
        raise not_matching(
            "the tool arguments do not match the tool's schema", exc.errors(include_url=False), ("arguments",)
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
