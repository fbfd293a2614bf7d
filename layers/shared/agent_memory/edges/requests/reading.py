"""The one request path: how every route of the API reads its request (docs/api.md §6 "Bodies and
parameters"). Nothing else in the service decodes a body or judges a parameter.

- A body is read by ``Reading.body``: its media type first (415), then its text (400 when not UTF-8), then its
  JSON, decoded once by ``parse_json_object`` (the resolvers' JSON deserializer, so ``event.json_body`` is this
  reader and its result is kept for the request) within the bounds below.
- Every route declares its body where it is registered (``edges.requests.declared.reads``: a model, or none);
  a route that declares nothing fails its registration (``edges.http``), so no route can read its body another
  way. The model validates through ``validated``, whose refusal is the one 422 (``not_matching``): the
  message names the first problem (``context.visibility`` is required), ``details`` lists them all (at most
  20 reach the caller: ``domain.shapes.ErrorBodyAnswer``).
- Path and query parameters are validated by Powertools against the route's annotations; its refusal is the
  same 422 (``edges.http``). Integers in a query or a path are plain decimals, ids match ``ID_PATTERN``,
  before any route runs (``Reading``).

Which refusal is which:

- not JSON at all (or ``NaN``/``Infinity``, which JSON does not have): 400 ``malformed_request`` (422
  ``json_invalid`` on the dashboard's routes, which have always answered so);
- JSON, but not an object, a repeated key, nesting deeper than 32, more than 10,000 keys, a lone UTF-16
  surrogate, an integer of more than 18 digits: 422 ``invalid_input``; an integer not in plain decimal form
  (``+1``, ``1_0``, ``1.0``) in a query parameter or a path: 422 too.

The two kinds of API function read the same way and differ in two documented points (``Reading``): the
chat backend's routes read a body only where they declare one and must be told it is JSON; the dashboard's
routes take a body without a ``Content-Type`` as JSON (a browser's ``fetch`` may send none) and read the body
of every request before routing, so that a broken one is refused before its parameters are looked at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeGuard, TypeVar

from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from agent_memory.basics.errors import InvalidInput, MalformedRequest, QueryTooLong, UnsupportedMediaType

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


def bounded_query(query: str) -> str:
    """A recall query of at most 2,000 characters, else 422 ``validation_error`` (``QueryTooLong``).

    Raised from inside the validation (pydantic turns only ``ValueError`` and ``AssertionError`` into its own
    errors; this one passes through to the error mapping), so a query of 4.5 MB is refused at once, on the
    tool and the dashboard's search alike, before any search reads it."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLong(f"a recall query is at most {MAX_QUERY_CHARS:,} characters, not {len(query):,}")
    return query


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


M = TypeVar("M", bound=BaseModel)
CONTRACT = "the request does not match the contract"


def validated(model: type[M], value: object, *, message: str = CONTRACT, prefix: tuple[str | int, ...] = ()) -> M:
    """``value`` as ``model``, or the one 422 (``not_matching``) listing every problem, each under ``prefix``."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise not_matching(message, exc.errors(include_url=False), prefix) from None


MISSING = {"loc": (), "msg": "Field required", "type": "missing"}


def problems_of(model: type[BaseModel], value: object) -> list[dict[str, Any]]:
    """What ``validated`` would list, without raising."""
    if value is None:
        return [MISSING]
    try:
        model.model_validate(value)
    except ValidationError as exc:
        return [dict(error) for error in exc.errors(include_url=False)]
    return []


# --- the body ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Integers:
    """The names of an API function's integer parameters, as its routes annotate them: each must be a plain
    decimal wherever it is sent (``plain_integer``), before Powertools would read ``+1`` as one."""

    query: frozenset[str] = frozenset()
    path: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Reading:
    """How an API function reads a request before its route runs, and the two points where the contract's
    two kinds of caller differ.

    ``untyped_is_json``: a body sent without a ``Content-Type`` is read as JSON (the dashboard) rather than
    refused 415 (the chat backend, which always declares it). ``before_routing``: every request's body is
    read before routing, whether or not the route takes one, and a body that is not JSON is a 422
    ``json_invalid``, as the dashboard has always answered. ``id_path``: every path parameter must be an id
    (``ID_PATTERN``), checked before routing.
    """

    untyped_is_json: bool = False
    before_routing: bool = False
    id_path: bool = False

    def before_route(self, event: BaseProxyEvent, path: Mapping[str, str], integers: Integers) -> None:
        """The request's parts, read before any route runs (after its caller is checked): its body (on the
        dashboard), its integers (plain decimals: ``integers``, the function's integer parameters), its path
        ids; ``path`` is the matched route's path parameters."""
        if self.untyped_is_json:
            normalise_content_type(event.raw_event)
        if self.before_routing:
            self.body(event)
        check_integer_parameters(event.query_string_parameters, integers.query)
        for name in integers.path & path.keys():
            plain_integer(path[name], loc=["path", name])
        if self.id_path:
            require_path_ids(event.raw_event.get("pathParameters") or {})

    def body(self, event: BaseProxyEvent) -> dict[str, Any] | None:
        """The body as a JSON object, None when there is none: 415 for a body declared as anything but JSON,
        400 for one that is not UTF-8, then the JSON reader's refusals."""
        declared = media_type(event.headers or {})
        if event.body and declared != "application/json" and (declared or not self.untyped_is_json):
            if self.untyped_is_json:
                raise UnsupportedMediaType(f"the request body must be JSON (application/json), not {declared}")
            raise UnsupportedMediaType("the request body must be JSON, declared as Content-Type: application/json")
        try:
            text = event.decoded_body
        except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
            raise MalformedRequest("the request body is not UTF-8 text") from None
        if not text:
            return None
        try:
            body: dict[str, Any] = event.json_body
        except MalformedRequest as error:
            if not self.before_routing:
                raise
            details = [{"loc": ["body"], "msg": error.message, "type": "json_invalid"}]
            raise InvalidInput(error.message, details=details) from None
        return body


BACKEND_READING = Reading(id_path=True)
DASHBOARD_READING = Reading(untyped_is_json=True, before_routing=True)


def require_path_ids(parameters: Mapping[str, str]) -> None:
    """422 for a path id off the id pattern, whatever the router would make of it."""
    for name, value in parameters.items():
        if not is_id(value):
            raise InvalidInput(
                f"`{name}` must match {ID_PATTERN}",
                details=[{"loc": ["path", name], "msg": "not an id", "type": "string_pattern_mismatch"}],
            )
