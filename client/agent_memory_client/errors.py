"""Typed errors: one class per refusal class of the contract, each carrying the answer's ``error.code``.

Every answer that is not 2xx raises a subclass of :class:`MemoryApiError` (docs/api.md §3, §5): the
status picks the class, ``code`` and ``message`` come from the body's ``{"error": {"code", "message"}}``,
``details`` from a 422. A request that never got an answer (timeout, connection refused) raises
:class:`MemoryTransportError`.
"""

from __future__ import annotations

from typing import Any


class MemoryClientError(Exception):
    """Base of every error this package raises."""


class MemoryTransportError(MemoryClientError):
    """No answer: the connection failed or timed out (after the retries). For a write the outcome is unknown."""


class MemoryApiError(MemoryClientError):
    """The service answered with an error."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        details: list[dict[str, Any]] | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retry_after_s = retry_after_s


class BadRequest(MemoryApiError):
    """400 or 415: the request is not JSON the service can read."""


class Unauthorized(MemoryApiError):
    """401: no token, or one that does not verify (management routes)."""


class Forbidden(MemoryApiError):
    """403: the context names another user's thread, or the caller is not a member or an operator."""


class NotFound(MemoryApiError):
    """404: no such route, version or note in this scope."""


class VersionConflict(MemoryApiError):
    """409 ``version_conflict``: the document changed since the version the write was based on."""


class InvalidInput(MemoryApiError):
    """422: ``invalid_input``, ``validation_error`` (a recall query too long), ``document_too_large``,
    ``quota_exceeded`` (characters)...; see ``code``."""


class RateLimited(MemoryApiError):
    """429, e.g. ``quota_exceeded`` (notes per day): ``retry_after_s`` says when to try again."""


class ServiceUnavailable(MemoryApiError):
    """503 (``storage_unavailable``, ``model_unavailable``...): for a write, the outcome is unknown."""


_BY_STATUS: dict[int, type[MemoryApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: NotFound,
    409: VersionConflict,
    415: BadRequest,
    422: InvalidInput,
    429: RateLimited,
    503: ServiceUnavailable,
}


def api_error(status: int, body: Any, retry_after_s: float | None = None) -> MemoryApiError:
    """The typed error for an answer's status and body (any body: a gateway may answer plain text)."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code, message = str(error.get("code", "unknown")), str(error.get("message", ""))
        details = error.get("details", body.get("details"))
    else:
        # API Gateway's own refusals (a bad signature: 403 {"message": ...}) have no error object.
        code = "http_error"
        message = str(body.get("message", body)) if isinstance(body, dict) else str(body or "")
        details = None
    cls = _BY_STATUS.get(status, ServiceUnavailable if status >= 500 else MemoryApiError)
    return cls(
        status, code, message, details=details if isinstance(details, list) else None, retry_after_s=retry_after_s
    )
