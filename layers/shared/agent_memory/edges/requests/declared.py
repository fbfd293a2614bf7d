"""What a route declares about its body (``reads``) and how it reads it (``json_of``, ``body_of``): the route's
half of the one request path (``edges.requests.reading``).

Every route declares its body where it is registered: a model, or none. ``edges.http.make_resolver`` refuses a
route that declares nothing (``UndeclaredRequest``), so no route can read its body another way, and the OpenAPI
document describes each body from the model declared (``local/openapi.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from pydantic import BaseModel

from agent_memory.basics.errors import InvalidInput
from agent_memory.edges.requests.reading import CONTRACT, MISSING, M, not_matching, problems_of, validated

Handler = TypeVar("Handler", bound=Callable[..., Any])


class UndeclaredRequest(LookupError):
    """A route registered without saying what body it reads (``reads``): the function must not start."""


@dataclass(frozen=True, slots=True)
class RequestBody:
    """A route's body: its ``model`` (the OpenAPI document describes it), where its problems are said to be
    (``prefix``), and ``required``, the 422's message for no body at all (None: the problem ``body is
    required``, listed with the parameters' problems)."""

    model: type[BaseModel]
    prefix: tuple[str | int, ...] = ()
    required: str | None = None


_DECLARED = "__request_body__"


def reads(
    model: type[BaseModel] | None, *, prefix: tuple[str | int, ...] = (), required: str | None = None
) -> Callable[[Handler], Handler]:
    """Declare the body a route reads (``model``), or that it reads none (None)."""
    body = RequestBody(model, prefix, required) if model is not None else None

    def declare(handler: Handler) -> Handler:
        setattr(handler, _DECLARED, body)
        return handler

    return declare


def declared_body(handler: Callable[..., Any], key: str) -> RequestBody | None:
    """The body ``handler`` (the route ``key``) declared; ``UndeclaredRequest`` when it declared nothing."""
    try:
        body: RequestBody | None = getattr(handler, _DECLARED)
    except AttributeError:
        raise UndeclaredRequest(f"{key} declares no body: decorate it with edges.requests.declared.reads") from None
    return body


def body_problems(handler: Callable[..., Any], event: BaseProxyEvent) -> list[dict[str, Any]]:
    """The problems of the body a route declares (``prefix`` first), to be listed after its parameters'; none
    for a route that reads no body or validates it in steps of its own (``required`` set)."""
    body = declared_body(handler, "the route")
    if body is None or body.required is not None:
        return []
    problems = problems_of(body.model, event.json_body if event.decoded_body else None)
    return [{**problem, "loc": (*body.prefix, *problem["loc"])} for problem in problems]


def json_of(router: APIGatewayHttpRouter) -> dict[str, Any]:
    """The body of the request the route runs for, as its declaration reads it: ``required``'s 422 when there
    is none. For a route that validates its body in steps of its own (the tools, the import)."""
    body: RequestBody = router.context["request_body"]
    value = router.context["reading"].body(router.current_event)
    if value is None:
        raise InvalidInput(body.required or "the request body is required")
    return value


def body_of(router: APIGatewayHttpRouter, model: type[M]) -> M:
    """The body of the request the route runs for, validated whole as the ``model`` the route declares."""
    body: RequestBody = router.context["request_body"]
    if body.model is not model:
        raise TypeError(f"the route declares {body.model.__name__}, not {model.__name__}")
    value = router.context["reading"].body(router.current_event)
    if value is None:  # no body: its own 422, or the problem `body is required`, as Powertools listed it
        raise InvalidInput(body.required) if body.required else not_matching(CONTRACT, [MISSING], body.prefix)
    return validated(model, value, prefix=body.prefix)
