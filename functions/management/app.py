"""ManagementFunction: the dashboard's API (docs/api.md §5), behind the HTTP API's JWT authorizer.

Refusals come in the contract's order: who is calling (401) and whether they may touch this memory
(403) are settled here, before routing, from the token and the path alone; only then does the resolver
validate the request (422) and the operation look for what was asked (404).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import Field

from agent_memory.edges.auth import Principal, principal_from_event
from agent_memory.edges.http import answer, body_text, error_result, json_response, make_resolver
from agent_memory.edges.parsing import (
    check_integer_parameters,
    idempotency_key,
    media_type,
    normalise_content_type,
    parse_json_object,
    plain_integer,
)
from agent_memory.edges.requests import ID_PATTERN, StrictModel
from agent_memory.edges.responses import documented
from agent_memory.edges.routes.people import router as people_router
from agent_memory.errors import InvalidInput, MalformedRequest, MemoryServiceError, UnsupportedMediaType
from agent_memory.idempotency import Answer
from agent_memory.observability import logger, metrics
from agent_memory.runtime import idempotency, management, recall_service
from agent_memory.scope import Scope
from agent_memory.settings import get_settings, require_valid_settings
from agent_memory.shapes import (
    CurrentDocument,
    NotesByDay,
    OneVersion,
    Recalled,
    Runs,
    RunStarted,
    SavedDocument,
    Versions,
)

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line

app = make_resolver(enable_validation=True)
app.include_router(people_router)  # export, erase, injections, usage (docs/api.md §6)

_WORKSPACE_PATH = re.compile(r"^/v1/memory/workspaces/([^/]*)(?:/|$)")
_VERSION_PATH = re.compile(r"/document/versions/([^/]+)")
INTEGER_QUERY = frozenset({"limit", "days", "k"})
WorkspaceId = Annotated[str, Path(pattern=ID_PATTERN)]
NoteId = Annotated[str, Path(pattern=ID_PATTERN)]
Version = Annotated[int, Path(ge=1)]
Limit = Annotated[int, Query(ge=1, le=100)]
Day = Annotated[str | None, Query(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Days = Annotated[int, Query(ge=1, le=31)]
SearchText = Annotated[str, Query(min_length=1, max_length=1000)]
SearchSize = Annotated[int, Query(ge=1, le=20)]


# What each route answers (its success, then its refusals): the OpenAPI document is generated from these.
_REFUSED = (401, 403, 422, 500, 503)  # every route: the token, membership, the request, the unexpected, storage
DOCUMENT = documented(200, CurrentDocument, "The current document and the limits.", *_REFUSED)
PUT_DOCUMENT = documented(200, SavedDocument, "The new version (reason `dashboard`).", 400, 409, 415, *_REFUSED)
VERSIONS = documented(200, Versions, "The versions, newest first.", *_REFUSED)
VERSION = documented(200, OneVersion, "The document as it was.", 404, *_REFUSED)
RESTORE = documented(
    200, OneVersion, "A new version with that content (reason `restore`).", 400, 404, 409, 415, *_REFUSED
)
NOTES = documented(200, NotesByDay, "Notes day by day, newest first.", *_REFUSED)
SEARCH = documented(200, Recalled, "The notes found, best first.", *_REFUSED)
DELETE_NOTE = documented(204, None, "Deleted: gone from the listing, context, recall and search.", 404, *_REFUSED)
RUNS = documented(200, Runs, "The runs, newest first (operators only).", *_REFUSED)
START_RUN = documented(202, RunStarted, "A run was started (operators only).", *_REFUSED)


class DocumentBody(StrictModel):
    content: str
    expected_version: Annotated[int, Field(ge=0)]


class RestoreBody(StrictModel):
    expected_version: Annotated[int, Field(ge=0)]


def _principal() -> Principal:
    principal: Principal = app.context["principal"]
    return principal


def _personal() -> Scope:
    return Scope("personal", _principal().user_id)


def _team(workspace_id: str) -> Scope:
    """Membership was checked before routing; checked again here on the routed id, in case the two ever disagree."""
    _principal().require_member(workspace_id)
    return Scope("team", workspace_id)


# --- document ---------------------------------------------------------------------------------------------


def _get_document(scope: Scope) -> Any:
    return answer(200, management().document(scope))


def _once(scope: Scope, route: str, request: dict[str, Any], run: Any) -> Any:
    """A write that honours ``Idempotency-Key`` (docs/api.md §6): a repeat gets the first answer, writes nothing."""
    key = idempotency_key(app.current_event.headers)
    done = idempotency().run_once(scope, route, key, {"user_id": _principal().user_id, **request}, run)
    return json_response(done.status, done.body)


def _put_document(scope: Scope, body: DocumentBody) -> Any:
    def _save() -> Answer:
        saved = management().save(scope, body.content, body.expected_version, _principal().user_id)
        return Answer(200, saved.json_body())

    return _once(scope, "put_document", body.model_dump(), _save)


def _versions(scope: Scope, limit: int, cursor: str | None) -> Any:
    return answer(200, management().versions(scope, limit, cursor))


def _version(scope: Scope, version: int) -> Any:
    return answer(200, management().version(scope, version))


def _restore(scope: Scope, version: int, body: RestoreBody) -> Any:
    def _run() -> Answer:
        restored = management().restore(scope, version, body.expected_version, _principal().user_id)
        return Answer(200, restored.json_body())

    return _once(scope, "restore", {"version": version, **body.model_dump()}, _run)


@app.get("/v1/memory/personal/document", responses=DOCUMENT)
def personal_document() -> Any:
    return _get_document(_personal())


@app.get("/v1/memory/workspaces/<workspace_id>/document", responses=DOCUMENT)
def team_document(workspace_id: WorkspaceId) -> Any:
    return _get_document(_team(workspace_id))


@app.put("/v1/memory/personal/document", responses=PUT_DOCUMENT)
def personal_put_document(body: Annotated[DocumentBody, Body()]) -> Any:
    return _put_document(_personal(), body)


@app.put("/v1/memory/workspaces/<workspace_id>/document", responses=PUT_DOCUMENT)
def team_put_document(workspace_id: WorkspaceId, body: Annotated[DocumentBody, Body()]) -> Any:
    return _put_document(_team(workspace_id), body)


@app.get("/v1/memory/personal/document/versions", responses=VERSIONS)
def personal_versions(limit: Limit = 20, cursor: Annotated[str | None, Query()] = None) -> Any:
    return _versions(_personal(), limit, cursor)


@app.get("/v1/memory/workspaces/<workspace_id>/document/versions", responses=VERSIONS)
def team_versions(workspace_id: WorkspaceId, limit: Limit = 20, cursor: Annotated[str | None, Query()] = None) -> Any:
    return _versions(_team(workspace_id), limit, cursor)


@app.get("/v1/memory/personal/document/versions/<version>", responses=VERSION)
def personal_version(version: Version) -> Any:
    return _version(_personal(), version)


@app.get("/v1/memory/workspaces/<workspace_id>/document/versions/<version>", responses=VERSION)
def team_version(workspace_id: WorkspaceId, version: Version) -> Any:
    return _version(_team(workspace_id), version)


@app.post("/v1/memory/personal/document/versions/<version>/restore", responses=RESTORE)
def personal_restore(version: Version, body: Annotated[RestoreBody, Body()]) -> Any:
    return _restore(_personal(), version, body)


@app.post("/v1/memory/workspaces/<workspace_id>/document/versions/<version>/restore", responses=RESTORE)
def team_restore(workspace_id: WorkspaceId, version: Version, body: Annotated[RestoreBody, Body()]) -> Any:
    return _restore(_team(workspace_id), version, body)


# --- notes ------------------------------------------------------------------------------------------------


def _notes(scope: Scope, before: str | None, days: int) -> Any:
    try:
        before_day = date.fromisoformat(before) if before is not None else None
    except ValueError:
        raise InvalidInput(
            "`before` must be a valid date, YYYY-MM-DD",
            details=[{"loc": ["query", "before"], "msg": "invalid date", "type": "date"}],
        ) from None
    return answer(200, management().notes_by_day(scope, before_day, days))


def _delete_note(scope: Scope, note_id: str) -> Any:
    management().delete_note(scope, note_id)
    return Response(status_code=204)


def _search(scope: Scope, q: str, k: int) -> Any:
    if not q.strip():
        raise InvalidInput("`q` must not be blank", details=[{"loc": ["query", "q"], "msg": "blank", "type": "blank"}])
    return answer(200, recall_service().recall(scope, q, k=k))


@app.get("/v1/memory/personal/notes", responses=NOTES)
def personal_notes(before: Day = None, days: Days = 2) -> Any:
    return _notes(_personal(), before, days)


@app.get("/v1/memory/workspaces/<workspace_id>/notes", responses=NOTES)
def team_notes(workspace_id: WorkspaceId, before: Day = None, days: Days = 2) -> Any:
    return _notes(_team(workspace_id), before, days)


@app.get("/v1/memory/personal/notes/search", responses=SEARCH)
def personal_search(q: SearchText, k: SearchSize = 8) -> Any:
    return _search(_personal(), q, k)


@app.get("/v1/memory/workspaces/<workspace_id>/notes/search", responses=SEARCH)
def team_search(workspace_id: WorkspaceId, q: SearchText, k: SearchSize = 8) -> Any:
    return _search(_team(workspace_id), q, k)


@app.delete("/v1/memory/personal/notes/<note_id>", responses=DELETE_NOTE)
def personal_delete_note(note_id: NoteId) -> Any:
    return _delete_note(_personal(), note_id)


@app.delete("/v1/memory/workspaces/<workspace_id>/notes/<note_id>", responses=DELETE_NOTE)
def team_delete_note(workspace_id: WorkspaceId, note_id: NoteId) -> Any:
    return _delete_note(_team(workspace_id), note_id)


# --- operators --------------------------------------------------------------------------------------------


@app.get("/v1/admin/consolidation/runs", responses=RUNS)
def list_runs(limit: Limit = 20) -> Any:
    _principal().require_admin()  # checked before routing too
    return answer(200, management().runs(limit))


@app.post("/v1/admin/consolidation/runs", responses=START_RUN)
def start_run() -> Any:
    _principal().require_admin()  # checked before routing too
    return answer(202, management().start_run(_principal().user_id))


def authorize(event: dict[str, Any]) -> Principal:
    """401 without a valid token, then 403 for a workspace the caller is not in or a non-operator on /v1/admin."""
    principal = principal_from_event(event, get_settings().local_jwt_secret)
    # The path the resolver routes on: without the stage's prefix on a named stage ("/prod/v1/..."), so
    # that no route is ever reached by a path that this check reads differently.
    path = APIGatewayProxyEventV2(event).path or ""
    workspace = _WORKSPACE_PATH.match(path)
    method = APIGatewayProxyEventV2(event).request_context.http.method
    if workspace and method == "DELETE" and path.rstrip("/") == workspace.group(0).rstrip("/"):
        principal.require_admin()  # erasing a whole workspace is for operators, members or not
    elif workspace:
        principal.require_member(workspace.group(1))
    elif path.startswith("/v1/admin/"):
        principal.require_admin()
    return principal


def require_json(event: dict[str, Any]) -> None:
    """The dashboard's bodies are JSON: a body declared as anything else is a 415 (after 401 and 403)."""
    declared = media_type(event.get("headers"))
    if event.get("body") and declared and declared != "application/json":
        raise UnsupportedMediaType(f"the request body must be JSON (application/json), not {declared}")
    normalise_content_type(event)


def check_request(event: dict[str, Any]) -> None:
    """The request's own parts, before any route reads them (docs/api.md §6): the body is one JSON object
    (no repeated key, at most 32 deep, no lone surrogate), integers are plain decimals."""
    proxy = APIGatewayProxyEventV2(event)
    text = body_text(proxy) if event.get("body") else None  # not UTF-8: 400, as before
    if text:
        try:
            parse_json_object(text)
        except MalformedRequest as error:  # the dashboard's routes have always answered 422 for this
            details = [{"loc": ["body"], "msg": error.message, "type": "json_invalid"}]
            raise InvalidInput(error.message, details=details) from None
    check_integer_parameters(event.get("queryStringParameters"), INTEGER_QUERY)
    version = _VERSION_PATH.search(proxy.path or "")
    if version:
        plain_integer(version.group(1), loc=["path", "version"])


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        principal = authorize(event)
        require_json(event)
        check_request(event)
    except MemoryServiceError as error:
        return error_result(error)
    app.append_context(principal=principal)
    return app.resolve(event, context)
