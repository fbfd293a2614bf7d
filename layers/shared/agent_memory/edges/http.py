"""HTTP edges shared by every API function: the resolver, JSON answers, and the one error mapping."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, cast

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agent_memory.basics.errors import MalformedRequest, MemoryServiceError, UnsupportedMediaType
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain.shapes import Answer
from agent_memory.edges.callers import admit, caller_of
from agent_memory.edges.requests import idempotency_key, media_type, not_matching
from agent_memory.edges.responses import ErrorBody

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from agent_memory.domain.scope import Scope
    from agent_memory.edges.auth import Principal
    from agent_memory.storage.idempotency_records import IdempotencyStore, Once


def body_text(event: BaseProxyEvent) -> str | None:
    """The request body as text. API Gateway base64-encodes a body that is not UTF-8; that is a 400, never a 500."""
    try:
        return event.decoded_body
    except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
        raise MalformedRequest("the request body is not UTF-8 text") from None


def json_body_text(event: BaseProxyEvent) -> str | None:
    """``body_text`` of a route that takes JSON (the tools, ``context``): a body declared as anything else, or
    not declared at all, is a 415. A browser sends ``text/plain``, a form or no type cross-site without a
    preflight; only ``application/json`` (any case, with parameters) needs one."""
    if event.body and media_type(event.headers or {}) != "application/json":
        raise UnsupportedMediaType("the request body must be JSON, declared as Content-Type: application/json")
    return body_text(event)


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
    body = ErrorBody.of(code, message, details).json_body()
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
        "body": json.dumps(ErrorBody.of(error.code, error.message, error.details).json_body()),
    }


RequestCheck = Callable[[dict[str, Any]], None]


class CallerCheckedResolver(APIGatewayHttpResolver):
    """A resolver that serves only routes with a class of caller (``edges.callers.ROUTES``) and checks it first.

    A route the table does not name fails its registration (``UnclassifiedRoute``), so the function's module
    does not import. Each request is matched to its route as the resolver routes it (the same rules, in the same
    order, on the path without a named stage's prefix) and its caller checked against the route's class before
    anything of the route runs, validation included: 401 and 403 come before 415 and 422, and a refusal
    changes nothing. Then the function's own ``checks`` of the request's parts run, and the route.
    """

    def __init__(self, *, enable_validation: bool, checks: Sequence[RequestCheck]) -> None:
        super().__init__(enable_validation=enable_validation)
        self._checks = tuple(checks)

    def route(self, rule: str, method: str | list[str] | tuple[str], *args: Any, **kwargs: Any) -> Any:
        for each in (method,) if isinstance(method, str) else method:
            caller_of(each, rule)
        return super().route(rule, method, *args, **kwargs)

    def resolve(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        raw = cast("dict[str, Any]", event)  # a Lambda event is a dict; a check may normalise it in place
        try:
            principal = self._admit(raw)
            for check in self._checks:
                check(raw)
        except MemoryServiceError as error:
            return error_result(error)
        if principal is not None:
            self.append_context(principal=principal)  # the dashboard's caller, for its routes (``principal_of``)
        return super().resolve(event, context)

    def _admit(self, event: dict[str, Any]) -> Principal | None:
        """The caller checked against the class of the route this request reaches; no route: the 404 runs nothing."""
        proxy = self._to_proxy_event(event)
        method, path = proxy.http_method.upper(), self._remove_prefix(proxy.path)
        for route in self._static_routes + self._dynamic_routes:
            if route.method == method and (match := route.rule.match(path)):
                return admit(caller_of(route.method, route.path), event, match.groupdict())
        return None


def make_resolver(
    *routers: APIGatewayHttpRouter, enable_validation: bool = False, checks: Sequence[RequestCheck] = ()
) -> CallerCheckedResolver:
    """A resolver whose every failure is a JSON error of the contract's shape, never a stack trace, and whose
    every route is checked for its class of caller before it runs (``CallerCheckedResolver``).

    With ``enable_validation`` Powertools validates query parameters and bodies against the route's
    annotations (and can describe them in OpenAPI); its refusals become the contract's 422. ``checks`` are the
    function's checks of a request's own parts (its media type, its JSON), run after the caller's and before
    routing.
    """
    app = CallerCheckedResolver(enable_validation=enable_validation, checks=checks)
    for router in routers:
        app.include_router(router)

    @app.exception_handler(RequestUnsupportedContentType)
    def _unsupported(_: RequestUnsupportedContentType) -> Response[Any]:
        return _counted(415, "unsupported_media_type", "the request body must be JSON (application/json)")

    @app.exception_handler(RequestValidationError)
    def _invalid(error: RequestValidationError) -> Response[Any]:
        refusal = not_matching("the request does not match the contract", error.errors())
        return _counted(refusal.status, refusal.code, refusal.message, refusal.details)

    @app.exception_handler(UnicodeDecodeError)
    def _not_text(error: UnicodeDecodeError) -> Response[Any]:
        """A body that is not UTF-8 (API Gateway passes it base64-encoded), read by the validation of a route."""
        return _counted(400, "malformed_request", "the request body is not UTF-8 text")

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
