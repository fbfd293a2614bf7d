"""ManagementFunction: the dashboard's API (docs/api.md §5), behind the HTTP API's JWT authorizer.

Refusals come in the contract's order: who is calling (401) and whether they may touch this memory
(403) are settled here, before routing, from the token and the path alone; only then does the resolver
validate the request (422) and the operation look for what was asked (404).
"""

from __future__ import annotations

import re
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.basics.errors import InvalidInput, MalformedRequest, MemoryServiceError, UnsupportedMediaType
from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import get_settings, require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.edges.auth import Principal, principal_from_event
from agent_memory.edges.http import body_text, error_result, make_resolver
from agent_memory.edges.requests import (
    check_integer_parameters,
    media_type,
    normalise_content_type,
    parse_json_object,
    plain_integer,
)
from agent_memory.edges.routes import admin, memory, people
from agent_memory.recall.index_check import require_matching_index

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line
require_matching_index(services().notes_index)  # vectors of another size than the index's fail it too

app = make_resolver(enable_validation=True)
app.include_router(memory.router)  # the document and the notes, personal and team (docs/api.md §5)
app.include_router(people.router)  # export, erase, injections, usage (docs/api.md §6)
app.include_router(admin.router)  # consolidation runs, for operators

_WORKSPACE_PATH = re.compile(r"^/v1/memory/workspaces/([^/]*)(?:/|$)")
_VERSION_PATH = re.compile(r"/document/versions/([^/]+)")
INTEGER_QUERY = frozenset({"limit", "days", "k"})


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
