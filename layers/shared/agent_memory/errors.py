"""Typed domain exceptions. Each carries its HTTP status and error code; ``http`` maps them once."""

from __future__ import annotations

from typing import Any


class MemoryServiceError(Exception):
    """Base of every error the service reports to a caller on purpose."""

    status: int = 500
    code: str = "internal_error"

    def __init__(self, message: str, *, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class MalformedRequest(MemoryServiceError):
    """The body is not JSON at all."""

    status, code = 400, "malformed_request"


class UnsupportedMediaType(MemoryServiceError):
    """The body is declared as something other than JSON."""

    status, code = 415, "unsupported_media_type"


class InvalidInput(MemoryServiceError):
    """The request is well-formed JSON but breaks a rule of the contract."""

    status, code = 422, "invalid_input"


class Unauthorized(MemoryServiceError):
    """No token, or one that does not verify."""

    status, code = 401, "unauthorized"


class Forbidden(MemoryServiceError):
    """The conversation context does not allow this scope."""

    status, code = 403, "forbidden"


class NotFound(MemoryServiceError):
    status, code = 404, "not_found"


class VersionConflict(MemoryServiceError):
    """The document changed since the version the caller based its write on."""

    status, code = 409, "version_conflict"


class DocumentTooLarge(MemoryServiceError):
    """Over the hard limit, and compression could not bring it under."""

    status, code = 422, "document_too_large"


class ModelUnavailable(MemoryServiceError):
    """The chat model timed out or failed; nothing was written."""

    status, code = 503, "model_unavailable"


class EmbeddingUnavailable(MemoryServiceError):
    """The embedding model timed out, failed or answered a vector the index cannot hold.

    Never reaches a caller of recall: recall answers with BM25 instead, and the indexer writes the note
    without its vector."""

    status, code = 503, "embedding_unavailable"


class StorageUnavailable(MemoryServiceError):
    """DynamoDB refused or failed after the client's retries; nothing was written."""

    status, code = 503, "storage_unavailable"


class NotesQuotaExceeded(MemoryServiceError):
    """The scope has written ``MEMORY_QUOTA_NOTES_PER_DAY`` notes today; ``retry_after`` is the wait, in
    seconds, until the next UTC midnight (the ``Retry-After`` header)."""

    status, code = 429, "quota_exceeded"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StorageQuotaExceeded(MemoryServiceError):
    """The write would take the scope over ``MEMORY_QUOTA_CHARS`` stored characters; nothing was written."""

    status, code = 422, "quota_exceeded"
