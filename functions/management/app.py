"""ManagementFunction: the dashboard's API (docs/api.md §5), behind the HTTP API's JWT authorizer.

Refusals come in the contract's order: who is calling (401) and whether they may touch this memory
(403) are settled by the resolver before routing, from the token and the class of the route
(``edges.callers``: a member's, with the path's workspace, or an operator's); then this function's checks
of the request's parts (415, 422); only then does the resolver validate the request (422) and the
operation look for what was asked (404).
"""

from __future__ import annotations

import re
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.basics.errors import InvalidInput, MalformedRequest, UnsupportedMediaType
from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.edges.http import body_text, make_resolver
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

_VERSION_PATH = re.compile(r"/document/versions/([^/]+)")
INTEGER_QUERY = frozenset({"limit", "days", "k"})


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


app = make_resolver(
    memory.router,  # the document and the notes, personal and team (docs/api.md §5)
    people.router,  # export, erase, injections, usage (docs/api.md §6)
    admin.router,  # consolidation runs, for operators
    enable_validation=True,
    checks=[require_json, check_request],
)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
