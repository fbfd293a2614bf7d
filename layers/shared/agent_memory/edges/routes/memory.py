"""The dashboard's routes of a memory's document and notes (docs/api.md §5), personal and team alike.

Each operation is written once and served at both of its paths (``scoped``); ManagementFunction
(``functions/management/app.py``) includes this router after settling 401 and 403 from the token and the path.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import date
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import AfterValidator

from agent_memory.basics.errors import InvalidInput
from agent_memory.bootstrap import services
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import (
    CurrentDocumentAnswer,
    NotesByDayAnswer,
    OneVersionAnswer,
    ProvenanceAnswer,
    RecalledAnswer,
    SavedDocumentAnswer,
    VersionsAnswer,
    VersionWithEditsAnswer,
)
from agent_memory.edges.http import answer, idempotent, replied
from agent_memory.edges.requests.dashboard import DocumentBody, RestoreBody
from agent_memory.edges.requests.declared import body_of
from agent_memory.edges.requests.reading import ID_PATTERN, MAX_QUERY_CHARS, bounded_query
from agent_memory.edges.responses import documented
from agent_memory.edges.routes.scoped import Scoped, principal_of
from agent_memory.storage.idempotency_records import Once, Reply

router = APIGatewayHttpRouter()
scoped = Scoped(router)

NoteId = Annotated[str, Path(pattern=ID_PATTERN)]
Version = Annotated[int, Path(ge=1)]
Limit = Annotated[int, Query(ge=1, le=100)]
Cursor = Annotated[str | None, Query()]
Day = Annotated[str | None, Query(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Days = Annotated[int, Query(ge=1, le=31)]
# The recall query's own bound (a 422 ``validation_error`` over 2,000 characters), as on the tool.
SearchText = Annotated[
    str, AfterValidator(bounded_query), Query(min_length=1, json_schema_extra={"maxLength": MAX_QUERY_CHARS})
]
SearchSize = Annotated[int, Query(ge=1, le=20)]
Json = Response[dict[str, Any]]

# What each route answers (its success, then its refusals): the OpenAPI document is generated from these.
_REFUSED = (401, 403, 422, 500, 503)  # every route: the token, membership, the request, the unexpected, storage
DOCUMENT = documented(200, CurrentDocumentAnswer, "The current document and the limits.", *_REFUSED)
PUT_DOCUMENT = documented(200, SavedDocumentAnswer, "The new version (reason `dashboard`).", 400, 409, 415, *_REFUSED)
PROVENANCE = documented(
    200, ProvenanceAnswer, "Each line of the current document with the notes cited for it.", *_REFUSED
)
VERSIONS = documented(200, VersionsAnswer, "The versions, newest first.", *_REFUSED)
VERSION = documented(200, VersionWithEditsAnswer, "The document as it was, and the edits that made it.", 404, *_REFUSED)
RESTORE = documented(
    200, OneVersionAnswer, "A new version with that content (reason `restore`).", 400, 404, 409, 415, *_REFUSED
)
NOTES = documented(200, NotesByDayAnswer, "Notes day by day, newest first.", *_REFUSED)
SEARCH = documented(200, RecalledAnswer, "The notes found, best first.", *_REFUSED)
DELETE_NOTE = documented(204, None, "Deleted: gone from the listing, context, recall and search.", 404, *_REFUSED)


def _once(scope: Scope, route: str, request: dict[str, Any]) -> AbstractContextManager[Once]:
    """A dashboard write: a repeat of its key by the same user with the same request gets the first answer."""
    user_id = principal_of(router).user_id
    request = {"user_id": user_id, **request}
    return idempotent(services().idempotency, router.current_event.headers, scope, route, user_id, request)


# --- document ---------------------------------------------------------------------------------------------


@scoped.get("/v1/memory/personal/document", "/v1/memory/workspaces/<workspace_id>/document", DOCUMENT)
def document(scope: Scope) -> Json:
    return answer(200, services().management.document(scope))


@scoped.put(
    "/v1/memory/personal/document", "/v1/memory/workspaces/<workspace_id>/document", PUT_DOCUMENT, body=DocumentBody
)
def put_document(scope: Scope) -> Json:
    body = body_of(router, DocumentBody)
    with _once(scope, "put_document", body.model_dump()) as write:
        if write.earlier is None:
            user_id = principal_of(router).user_id
            write.reply = Reply.of(200, services().management.save(scope, body.content, body.expected_version, user_id))
    return replied(write)


@scoped.get(
    "/v1/memory/personal/document/provenance", "/v1/memory/workspaces/<workspace_id>/document/provenance", PROVENANCE
)
def provenance(scope: Scope) -> Json:
    return answer(200, services().management.provenance(scope))


@scoped.get("/v1/memory/personal/document/versions", "/v1/memory/workspaces/<workspace_id>/document/versions", VERSIONS)
def versions(scope: Scope, limit: Limit = 20, cursor: Cursor = None) -> Json:
    return answer(200, services().management.versions(scope, limit, cursor))


@scoped.get(
    "/v1/memory/personal/document/versions/<version>",
    "/v1/memory/workspaces/<workspace_id>/document/versions/<version>",
    VERSION,
)
def version(scope: Scope, version: Version) -> Json:
    return answer(200, services().management.version(scope, version))


@scoped.post(
    "/v1/memory/personal/document/versions/<version>/restore",
    "/v1/memory/workspaces/<workspace_id>/document/versions/<version>/restore",
    RESTORE,
    body=RestoreBody,
)
def restore(scope: Scope, version: Version) -> Json:
    body = body_of(router, RestoreBody)
    with _once(scope, "restore", {"version": version, **body.model_dump()}) as write:
        if write.earlier is None:
            user_id = principal_of(router).user_id
            restored = services().management.restore(scope, version, body.expected_version, user_id)
            write.reply = Reply.of(200, restored)
    return replied(write)


# --- notes ------------------------------------------------------------------------------------------------


@scoped.get("/v1/memory/personal/notes", "/v1/memory/workspaces/<workspace_id>/notes", NOTES)
def notes(scope: Scope, before: Day = None, days: Days = 2) -> Json:
    try:
        before_day = date.fromisoformat(before) if before is not None else None
    except ValueError:
        raise InvalidInput(
            "`before` must be a valid date, YYYY-MM-DD",
            details=[{"loc": ["query", "before"], "msg": "invalid date", "type": "date"}],
        ) from None
    return answer(200, services().management.notes_by_day(scope, before_day, days))


@scoped.get("/v1/memory/personal/notes/search", "/v1/memory/workspaces/<workspace_id>/notes/search", SEARCH)
def search(scope: Scope, q: SearchText, k: SearchSize = 8) -> Json:
    if not q.strip():
        raise InvalidInput("`q` must not be blank", details=[{"loc": ["query", "q"], "msg": "blank", "type": "blank"}])
    return answer(200, services().recall_service.recall(scope, q, k=k))


@scoped.delete(
    "/v1/memory/personal/notes/<note_id>", "/v1/memory/workspaces/<workspace_id>/notes/<note_id>", DELETE_NOTE
)
def delete_note(scope: Scope, note_id: NoteId) -> Response[None]:
    services().management.delete_note(scope, note_id)
    return Response(status_code=204)
