"""Typed domain exceptions. Each carries its HTTP status and error code; ``http`` maps them once."""

from __future__ import annotations

from typing import Any


class MemoryServiceError(Exception):
    """Base of every error the service reports to a caller on purpose."""

    status: int = 500
    code: str = "internal_error"

    def __init_subclass__(cls, *, status: int, code: str) -> None:
        """Each refusal names its status and code in its class line (``class X(MemoryServiceError, status=…)``)."""
        super().__init_subclass__()
        cls.status, cls.code = status, code

    def __init__(self, message: str, *, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class MalformedRequest(MemoryServiceError, status=400, code="malformed_request"):
    """The body is not JSON at all."""


class UnsupportedMediaType(MemoryServiceError, status=415, code="unsupported_media_type"):
    """The body is declared as something other than JSON."""


class InvalidInput(MemoryServiceError, status=422, code="invalid_input"):
    """The request is well-formed JSON but breaks a rule of the contract."""


class QueryTooLong(MemoryServiceError, status=422, code="validation_error"):
    """A recall query over its bound (``edges.requests.reading.MAX_QUERY_CHARS``), on the tool and the dashboard's
    search alike: refused before any search, so that no query's length decides how long a recall takes."""


class Unauthorized(MemoryServiceError, status=401, code="unauthorized"):
    """No token, or one that does not verify."""


class Forbidden(MemoryServiceError, status=403, code="forbidden"):
    """The conversation context does not allow this scope."""


class NotFound(MemoryServiceError, status=404, code="not_found"):
    """No such version or note in this memory."""


class VersionConflict(MemoryServiceError, status=409, code="version_conflict"):
    """The document changed since the version the caller based its write on."""


class DocumentTooLarge(MemoryServiceError, status=422, code="document_too_large"):
    """Over the hard limit, and compression could not bring it under."""


class ModelUnavailable(MemoryServiceError, status=503, code="model_unavailable"):
    """The chat model timed out or failed; nothing was written."""


class EmbeddingUnavailable(MemoryServiceError, status=503, code="embedding_unavailable"):
    """The embedding model timed out, failed or answered a vector the index cannot hold.

    Never reaches a caller of recall: recall answers with BM25 instead, and the indexer writes the note
    without its vector."""


class StorageUnavailable(MemoryServiceError, status=503, code="storage_unavailable"):
    """DynamoDB refused or failed after the client's retries: a write's outcome is unknown (it may have been
    applied with its every answer lost)."""


class NothingWritten(StorageUnavailable, status=503, code="storage_unavailable"):
    """A transaction cancelled for conflicts every time it was sent: known not to be applied."""


class NotesQuotaExceeded(MemoryServiceError, status=429, code="quota_exceeded"):
    """The scope has written ``MEMORY_QUOTA_NOTES_PER_DAY`` notes today; ``retry_after`` is the wait, in
    seconds, until the next UTC midnight (the ``Retry-After`` header)."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StorageQuotaExceeded(MemoryServiceError, status=422, code="quota_exceeded"):
    """The write would take the scope over ``MEMORY_QUOTA_CHARS`` stored characters; nothing was written."""


class ImportIdReused(MemoryServiceError, status=422, code="invalid_input"):
    """An ``import_id`` sent again with another body: an import's id names one request."""


class ImportUnfinished(MemoryServiceError, status=503, code="import_unfinished"):
    """An import that stopped before every note had its outcome (its time ran out, or another call of the same
    id is writing it now): what is done stays done; the same request again continues it."""

    retry_after = 1
