"""The one place where untrusted input is parsed (docs/api.md §6 "Bodies and parameters").

Every body (tools, context, flush, the dashboard's writes), every integer query parameter and every
header the service reads goes through here before anything else looks at it. Which refusal is which:

- not JSON at all (or ``NaN``/``Infinity``, which JSON does not have): 400 ``malformed_request``;
- JSON, but not an object, a repeated key, nesting deeper than 32, a lone UTF-16 surrogate, an integer of
  more than 18 digits: 422 ``invalid_input``; an integer not in plain decimal form (``+1``, ``1_0``,
  ``1.0``) in a query parameter or a path: 422 too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from agent_memory.basics.errors import InvalidInput, MalformedRequest

MAX_DEPTH = 32
MAX_INTEGER_DIGITS = 18
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
    try:
        payload = json.loads(raw, object_pairs_hook=_object, parse_int=_integer, parse_constant=_constant)
    except _Duplicate as duplicate:
        raise _refused(f"the key {str(duplicate)[:64]!r} appears twice", [loc], "duplicate_key") from None
    except RecursionError:
        raise _refused(f"the JSON nests deeper than {MAX_DEPTH} levels", [loc], "too_deep") from None
    except _NotJson as constant:
        raise MalformedRequest(f"the request body is not valid JSON: {constant} is not a JSON value") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedRequest(f"the request body is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise _refused("the request body must be a JSON object", [loc], "not_an_object")
    check_value(payload, loc=loc)
    return payload


def check_value(value: object, *, loc: str = "body") -> None:
    """Depth at most 32, no lone surrogate, no integer over 18 digits, in an already decoded value.

    Iterative, so that a value nested as deep as Python allowed it to be decoded is refused, not a crash.
    """
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise _refused(f"the JSON nests deeper than {MAX_DEPTH} levels", [loc], "too_deep")
            if isinstance(item, dict):
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
