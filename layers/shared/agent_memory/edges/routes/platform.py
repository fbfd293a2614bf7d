"""The chat backend's own data flows (docs/api.md §8): export, erase and usage of any user's personal memory or
any workspace's team memory, by id, when the platform deletes an account or answers a data-access request.

PlatformFunction (``functions/platform/app.py``) serves this router behind the HTTP API's IAM authorization,
for the same class of caller as the tools (``edges.callers.BACKEND``): with ``MEMORY_BACKEND_ROLE_ARN`` set
only the backend's role, and never a dashboard token (in AWS a bearer token cannot pass the ``AWS_IAM``
authorizer; where nothing checks a signature, the local stack, it is refused before routing). Each operation is the
dashboard's (``people.control``): the same receipts, paging and guarantees. Each call is logged with the
caller's IAM principal, the operation and the scope it acted on.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.basics.errors import InvalidInput
from agent_memory.basics.observability import logger
from agent_memory.bootstrap import services
from agent_memory.domain.scope import Scope, ScopeKind
from agent_memory.domain.shapes import Export, Imported, Receipt, Usage
from agent_memory.edges.http import answer, json_body_text
from agent_memory.edges.import_request import parse_import
from agent_memory.edges.requests import ID_PATTERN, is_id
from agent_memory.edges.responses import documented

router = APIGatewayHttpRouter()

OwnerId = Annotated[str, Path(pattern=ID_PATTERN)]
Cursor = Annotated[str | None, Query(min_length=1, max_length=2048)]
Json = Response[dict[str, Any]]

_FORBIDDEN = (
    "A dashboard token (`Authorization: Bearer`) grants nothing here (`forbidden`): these routes are the chat "
    "backend's, signed with SigV4. In AWS the IAM authorizer refuses first, with API Gateway's own 403."
)


def _answers(status: int, model: type[Any], description: str, *body_refusals: int) -> dict[int, Any]:
    answers = documented(status, model, description, *body_refusals, 403, 422, 500, 503)
    answers[403] = {**answers[403], "description": _FORBIDDEN}
    return answers


EXPORT = _answers(200, Export, "One page of the export, oldest first; follow `next_cursor`.")
ERASE = _answers(200, Receipt, "Erased (or finished an interrupted erase): the receipt; a repeat counts zeros.")
USAGE = _answers(200, Usage, "Usage against the quotas.")
IMPORT = _answers(
    200, Imported, "The import's receipt; the same `import_id` again answers it and writes nothing.", 400, 415
)
IMPORT[503] = {
    **IMPORT[503],
    "description": "`import_unfinished`: the call's time ran out, or another call of the same import runs now; what "
    "is done stays done: send the same request again to continue. Or `storage_unavailable`, as anywhere.",
}


def require_path_ids(event: dict[str, Any]) -> None:
    """422 for a path id off the id pattern, whatever the router would make of it (after the caller's check)."""
    for name, value in (event.get("pathParameters") or {}).items():
        if not is_id(value):
            raise InvalidInput(
                f"`{name}` must match {ID_PATTERN}",
                details=[{"loc": ["path", name], "msg": "not an id", "type": "string_pattern_mismatch"}],
            )


def _caller() -> str:
    """The IAM principal API Gateway verified (its ARN); ``unsigned`` where nothing checks a signature."""
    authorizer = router.current_event.raw_event.get("requestContext", {}).get("authorizer") or {}
    iam = authorizer.get("iam") or {}
    return str(iam.get("userArn") or iam.get("callerId") or "unsigned")


def _scope(operation: str, scope: Scope) -> Scope:
    logger.info("platform operation", extra={"caller": _caller(), "operation": operation, "scope": scope.key})
    return scope


def _register(kind: ScopeKind, label: str, prefix: str, id_name: str) -> None:
    """The three operations on ``prefix`` (a user's or a workspace's memory), their path id named ``id_name``;
    each handler is named ``platform_<label>_<operation>`` (its operationId)."""
    owner = inspect.Parameter(id_name, inspect.Parameter.KEYWORD_ONLY, annotation=OwnerId)
    cursor = inspect.Parameter("cursor", inspect.Parameter.KEYWORD_ONLY, annotation=Cursor, default=None)

    def export(cursor: str | None = None, **path: str) -> Json:
        return answer(200, services().people.export(_scope("export", Scope(kind, path[id_name])), cursor))

    def erase(**path: str) -> Json:
        return answer(200, services().people.erase(_scope("erase", Scope(kind, path[id_name]))))

    def usage(**path: str) -> Json:
        return answer(200, services().people.usage(_scope("usage", Scope(kind, path[id_name]))))

    for method, suffix, handler, parameters, responses in (
        ("GET", "/export", export, [owner, cursor], EXPORT),
        ("DELETE", "", erase, [owner], ERASE),
        ("GET", "/usage", usage, [owner], USAGE),
    ):
        handler.__name__ = handler.__qualname__ = f"platform_{label}_{handler.__name__}"
        handler.__signature__ = inspect.Signature(parameters, return_annotation=Json)  # type: ignore[attr-defined]
        router.route(prefix + suffix, method, responses=responses)(handler)


_register("personal", "user", "/v1/platform/users/<user_id>", "user_id")
_register("team", "workspace", "/v1/platform/workspaces/<workspace_id>", "workspace_id")


# --- import (docs/api.md §9): a platform's history, or another deployment's export, into one memory --------


def _register_import(kind: ScopeKind, label: str, prefix: str, id_name: str) -> None:
    """``POST <prefix>/import``, its handler named ``platform_<label>_import``."""
    owner = inspect.Parameter(id_name, inspect.Parameter.KEYWORD_ONLY, annotation=OwnerId)

    def handler(**path: str) -> Json:
        scope = _scope("import", Scope(kind, path[id_name]))
        return answer(200, services().importer.run(parse_import(json_body_text(router.current_event), scope)))

    handler.__name__ = handler.__qualname__ = f"platform_{label}_import"
    handler.__signature__ = inspect.Signature([owner], return_annotation=Json)  # type: ignore[attr-defined]
    router.route(prefix + "/import", "POST", responses=IMPORT)(handler)


_register_import("personal", "user", "/v1/platform/users/<user_id>", "user_id")
_register_import("team", "workspace", "/v1/platform/workspaces/<workspace_id>", "workspace_id")
