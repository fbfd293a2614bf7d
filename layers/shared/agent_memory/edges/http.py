"""HTTP edges shared by every API function: the resolver, JSON answers, and the one error mapping."""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, cast

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Route
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agent_memory.basics.errors import MemoryServiceError
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain.shapes import Answer
from agent_memory.edges.callers import admit, caller_of, route_key
from agent_memory.edges.requests.declared import UndeclaredRequest, body_problems, declared_body
from agent_memory.edges.requests.reading import (
    BACKEND_READING,
    CONTRACT,
    Integers,
    Reading,
    idempotency_key,
    not_matching,
    parse_json_object,
)
from agent_memory.edges.responses import ErrorBodyAnswer

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from agent_memory.domain.scope import Scope
    from agent_memory.storage.idempotency_records import IdempotencyStore, Once


# Seconds a caller should wait after a 503 (storage or model unavailable) before retrying.
RETRY_AFTER_S = 1


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response[Any]:
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body, headers=headers)


def idempotent(
    store: IdempotencyStore,
    headers: Mapping[str, str] | None,
    scope: Scope,
    route: str,
    caller: str,
    request: object,
) -> AbstractContextManager[Once]:
    """The one path of every write that honours ``Idempotency-Key`` (docs/api.md §6), tools and dashboard alike:
    a repeat of ``caller``'s key with the same ``request`` gets the first answer (``Once.earlier``) and writes
    nothing; the same key from another caller is another request."""
    return store.once(scope, route, caller, idempotency_key(headers), request)


def replied(write: Once) -> Response[Any]:
    """The answer of an idempotent write: this call's, or the one given again."""
    return json_response(write.answer.status, write.answer.body)


def answer(status: int, shape: Answer) -> Response[dict[str, Any]]:
    """A route's success: the shape the use case built, as its JSON body."""
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=shape.json_body())


def error_response(status: int, code: str, message: str, details: list[dict[str, Any]] | None = None) -> Response[Any]:
    """The contract's error shape: ``{"error": {"code", "message"}}``, plus ``details`` on a 422.

    A 503 says when to retry (``Retry-After``), as docs/api.md §6 "Storage faults" asks."""
    body = ErrorBodyAnswer.of(code, message, details).json_body()
    return json_response(status, body, {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else None)


def _counted(status: int, code: str, message: str, details: list[dict[str, Any]] | None = None) -> Response[Any]:
    """A refusal, counted by its status (``Http<status>``)."""
    metrics.add_metric(name=f"Http{status}", unit="Count", value=1)
    return error_response(status, code, message, details)


def _storage_unavailable() -> Response[Any]:
    from agent_memory.storage.client import STORAGE_UNAVAILABLE

    metrics.add_metric(name="StorageUnavailable", unit="Count", value=1)
    return _counted(503, "storage_unavailable", STORAGE_UNAVAILABLE)


def error_result(error: MemoryServiceError) -> dict[str, Any]:
    """An API Gateway v2 result for a refusal made before routing (authentication, authorization)."""
    metrics.add_metric(name=f"Http{error.status}", unit="Count", value=1)
    logger.info("request refused", extra={"status": error.status, "code": error.code, "reason": error.message})
    return {
        "statusCode": error.status,
        "headers": {"Content-Type": content_types.APPLICATION_JSON},
        "body": json.dumps(ErrorBodyAnswer.of(error.code, error.message, error.details).json_body()),
    }


class CallerCheckedResolver(APIGatewayHttpResolver):
    """A resolver that serves only routes with a class of caller (``edges.callers.ROUTES``) and checks it first,
    then reads the request its one way (``edges.requests.reading``).

    A route the table does not name fails its registration (``UnclassifiedRoute``), so the function's module
    does not import. Each request is matched to its route as the resolver routes it (the same rules, in the same
    order, on the path without a named stage's prefix) and its caller checked against the route's class before
    anything of the route runs, validation included: 401 and 403 come before 415 and 422, and a refusal
    changes nothing. Then the function's ``Reading`` reads what it reads before routing (the body, the
    integers and the ids of the path), Powertools validates the parameters against the route's annotations,
    and the route reads its declared body (``reads``) through the same reader: the body is decoded once.
    """

    def __init__(self, *, reading: Reading, enable_validation: bool) -> None:
        super().__init__(enable_validation=enable_validation, json_body_deserializer=parse_json_object)
        self._reading = reading
        self._integers = Integers()
        self._event: BaseProxyEvent | None = None

    def route(self, rule: str, method: str | list[str] | tuple[str], *args: Any, **kwargs: Any) -> Any:
        for each in (method,) if isinstance(method, str) else method:
            caller_of(each, rule)
        return super().route(rule, method, *args, **kwargs)

    def resolve(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        raw = cast("dict[str, Any]", event)  # a Lambda event is a dict; the reading may normalise it in place
        self._event = proxy = super()._to_proxy_event(raw)  # one event, so the body is decoded once
        try:
            route, path = self._matched(proxy)
            principal = admit(caller_of(route.method, route.path), raw, path) if route is not None else None
            self._reading.before_route(proxy, path, self._integers)
        except MemoryServiceError as error:
            self._event = None
            return error_result(error)
        if principal is not None:
            self.append_context(principal=principal)  # the dashboard's caller, for its routes (``principal_of``)
        body = declared_body(route.func, route_key(route.method, route.path)) if route is not None else None
        self.append_context(reading=self._reading, request_body=body)
        try:
            return super().resolve(event, context)
        finally:
            self._event = None

    def _to_proxy_event(self, event: dict[str, Any]) -> BaseProxyEvent:
        """The event ``resolve`` read, so that what it decoded (the body) is not decoded again."""
        if self._event is not None and self._event.raw_event is event:
            return self._event
        return super()._to_proxy_event(event)

    def _matched(self, event: BaseProxyEvent) -> tuple[Route | None, dict[str, str]]:
        """The route this request reaches, with its path parameters; no route: the 404 runs nothing."""
        method, path = event.http_method.upper(), self._remove_prefix(event.path)
        for route in self._static_routes + self._dynamic_routes:
            if route.method == method and (match := route.rule.match(path)):
                return route, match.groupdict()
        return None, {}

    def routes(self) -> list[Route]:
        """Every route the resolver serves."""
        return [*self._static_routes, *self._dynamic_routes]

    def read_integers(self) -> None:
        """Note the integer parameters the routes annotate (``Integers``), once they are all registered."""
        dependants = [route.dependant for route in self.routes()]
        self._integers = Integers(
            query=frozenset(f.name for d in dependants for f in d.query_params if f.field_info.annotation is int),
            path=frozenset(f.name for d in dependants for f in d.path_params if f.field_info.annotation is int),
        )


def make_resolver(
    *routers: APIGatewayHttpRouter, reading: Reading = BACKEND_READING, enable_validation: bool = False
) -> CallerCheckedResolver:
    """A resolver whose every failure is a JSON error of the contract's shape, never a stack trace, whose
    every route is checked for its class of caller before it runs (``CallerCheckedResolver``), and whose
    every route declares the body it reads (``edges.requests.declared.reads``; ``UndeclaredRequest``
    otherwise, so the function does not start).

    With ``enable_validation`` Powertools validates query and path parameters against the routes' annotations
    (and describes them in OpenAPI); its refusals become the contract's 422, listed before the problems of the
    route's body. A route that takes parameters on a resolver that does not validate them fails too.
    """
    app = CallerCheckedResolver(reading=reading, enable_validation=enable_validation)
    for router in routers:
        app.include_router(router)
    for route in app.routes():
        key = route_key(route.method, route.path)
        declared_body(route.func, key)
        if not enable_validation and route.dependant.path_params + route.dependant.query_params:
            raise UndeclaredRequest(f"{key} takes parameters that nothing validates: enable_validation")
    app.read_integers()

    @app.exception_handler(RequestValidationError)
    def _invalid(error: RequestValidationError) -> Response[Any]:
        """The parameters' problems, then the declared body's, in one 422 (as Powertools lists a body's)."""
        route: Route | None = app.context.get("_route")
        body = body_problems(route.func, app.current_event) if route is not None else []
        refusal = not_matching(CONTRACT, [*error.errors(), *body])
        return _counted(refusal.status, refusal.code, refusal.message, refusal.details)

    @app.exception_handler(MemoryServiceError)
    def _domain_error(error: MemoryServiceError) -> Response[Any]:
        logger.info("request refused", extra={"status": error.status, "code": error.code, "reason": error.message})
        refusal = _counted(error.status, error.code, error.message, error.details)
        if isinstance(retry_after := getattr(error, "retry_after", None), int):
            refusal.headers["Retry-After"] = str(retry_after)
        return refusal

    @app.exception_handler([BotocoreConnectionError, HTTPClientError])
    def _storage_fault(error: Exception) -> Response[Any]:
        """DynamoDB timed out or could not be reached after botocore's retries: 503, never 500 (docs/api.md §6)."""
        logger.warning("storage unavailable", extra={"fault": type(error).__name__})
        return _storage_unavailable()

    @app.exception_handler(ClientError)
    def _client_error(error: ClientError) -> Response[Any]:
        from agent_memory.storage.client import is_unavailable

        if is_unavailable(error):  # a throttle or a server fault that no store turned into StorageUnavailable
            logger.warning("storage unavailable", extra={"fault": str(error)})
            return _storage_unavailable()
        return _unexpected(error)

    @app.not_found
    def _no_route(_: NotFoundError) -> Response[Any]:
        return error_response(404, "not_found", "no such route")

    @app.exception_handler(Exception)
    def _unexpected(error: Exception) -> Response[Any]:
        logger.exception("unexpected failure")
        return _counted(500, "internal_error", "an unexpected error occurred; nothing was half-written")

    return app
