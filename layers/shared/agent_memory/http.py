"""HTTP edges shared by every API function: the resolver, JSON answers, and the one error mapping."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError

from agent_memory.errors import MemoryServiceError
from agent_memory.observability import logger, metrics


def json_response(status: int, body: Any) -> Response[Any]:
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


def error_response(status: int, code: str, message: str, details: list[dict[str, Any]] | None = None) -> Response[Any]:
    """The contract's error shape: ``{"error": {"code", "message"}}``, plus ``details`` on a 422."""
    error: dict[str, Any] = {"code": code, "message": message}
    body: dict[str, Any] = {"error": error}
    if details:
        body["details"] = details
    return json_response(status, body)


def make_resolver() -> APIGatewayHttpResolver:
    """A resolver whose every failure is a JSON error of the contract's shape, never a stack trace."""
    app = APIGatewayHttpResolver()

    @app.exception_handler(MemoryServiceError)
    def _domain_error(error: MemoryServiceError) -> Response[Any]:
        metrics.add_metric(name=f"Http{error.status}", unit="Count", value=1)
        logger.info("request refused", extra={"status": error.status, "code": error.code, "reason": error.message})
        return error_response(error.status, error.code, error.message, error.details)

    @app.not_found
    def _no_route(_: NotFoundError) -> Response[Any]:
        return error_response(404, "not_found", "no such route")

    @app.exception_handler(Exception)
    def _unexpected(error: Exception) -> Response[Any]:
        logger.exception("unexpected failure")
        metrics.add_metric(name="Http500", unit="Count", value=1)
        return error_response(500, "internal_error", "an unexpected error occurred; nothing was half-written")

    return app
