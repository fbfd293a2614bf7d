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
import re
from collections.abc import Callable
from typing import Annotated, Any, get_type_hints

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.basics.observability import logger
from agent_memory.bootstrap import services
from agent_memory.domain.scope import Scope, ScopeKind
from agent_memory.domain.shapes import ExportAnswer, ImportedAnswer, ReceiptAnswer, UsageAnswer
from agent_memory.edges.http import answer
from agent_memory.edges.requests.declared import json_of, reads
from agent_memory.edges.requests.imports import IMPORT_BODY, NotesImport, parse_import
from agent_memory.edges.requests.reading import ID_PATTERN
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


EXPORT = _answers(200, ExportAnswer, "One page of the export, oldest first; follow `next_cursor`.")
ERASE = _answers(200, ReceiptAnswer, "Erased (or finished an interrupted erase): the receipt; a repeat counts zeros.")
USAGE = _answers(200, UsageAnswer, "Usage against the quotas.")
IMPORT = _answers(
    200, ImportedAnswer, "The import's receipt; the same `import_id` again answers it and writes nothing.", 400, 415
)
IMPORT[503] = {
    **IMPORT[503],
    "description": "`import_unfinished`: the call's time ran out, or another call of the same import runs now; what "
    "is done stays done: send the same request again to continue. Or `storage_unavailable`, as anywhere.",
}


def _caller() -> str:
    """The IAM principal API Gateway verified (its ARN); ``unsigned`` where nothing checks a signature."""
    authorizer = router.current_event.raw_event.get("requestContext", {}).get("authorizer") or {}
    iam = authorizer.get("iam") or {}
    return str(iam.get("userArn") or iam.get("callerId") or "unsigned")


def _scope(operation: str, scope: Scope) -> Scope:
    logger.info("platform operation", extra={"caller": _caller(), "operation": operation, "scope": scope.key})
    return scope


def export(scope: Scope, cursor: Cursor = None) -> Json:
    return answer(200, services().people.export(_scope("export", scope), cursor))


def erase(scope: Scope) -> Json:
    return answer(200, services().people.erase(_scope("erase", scope)))


def usage(scope: Scope) -> Json:
    return answer(200, services().people.usage(_scope("usage", scope)))


def import_(scope: Scope) -> Json:
    """An import (docs/api.md §9): a platform's history, or another deployment's export, into one memory."""
    scope = _scope("import", scope)
    return answer(200, services().importer.run(parse_import(json_of(router), scope)))


# Every route of the platform, as written in ``template.yaml``: a user's memory and a workspace's, each
# operation written once above and registered for both (its handler ``platform_<user|workspace>_<operation>``).
Declaration = Callable[[Callable[..., Json]], Callable[..., Json]]
NO_BODY: Declaration = reads(None)
NOTES: Declaration = reads(NotesImport, required=IMPORT_BODY)
_ROUTES: list[tuple[str, str, Callable[..., Json], dict[int, Any], Declaration]] = [
    ("GET", "/v1/platform/users/<user_id>/export", export, EXPORT, NO_BODY),
    ("DELETE", "/v1/platform/users/<user_id>", erase, ERASE, NO_BODY),
    ("GET", "/v1/platform/users/<user_id>/usage", usage, USAGE, NO_BODY),
    ("POST", "/v1/platform/users/<user_id>/import", import_, IMPORT, NOTES),
    ("GET", "/v1/platform/workspaces/<workspace_id>/export", export, EXPORT, NO_BODY),
    ("DELETE", "/v1/platform/workspaces/<workspace_id>", erase, ERASE, NO_BODY),
    ("GET", "/v1/platform/workspaces/<workspace_id>/usage", usage, USAGE, NO_BODY),
    ("POST", "/v1/platform/workspaces/<workspace_id>/import", import_, IMPORT, NOTES),
]
_OWNERS: dict[str, tuple[ScopeKind, str]] = {"user_id": ("personal", "user"), "workspace_id": ("team", "workspace")}


def _register(
    method: str,
    path: str,
    operation: Callable[..., Json],
    responses: dict[int, Any],
    declared: Declaration,
) -> None:
    """``operation(scope, **parameters)`` at ``path``, whose id (``<user_id>`` or ``<workspace_id>``) names the
    memory, reading the body ``declared``; the handler takes that id, then the operation's own parameters
    (Powertools validates them all)."""
    (id_name,) = re.findall(r"<(\w+)>", path)
    kind, label = _OWNERS[id_name]
    hints = get_type_hints(operation, include_extras=True)
    own = list(inspect.signature(operation).parameters.values())[1:]

    def handler(**parameters: Any) -> Json:
        return operation(Scope(kind, parameters.pop(id_name)), **parameters)

    handler.__name__ = handler.__qualname__ = f"platform_{label}_{operation.__name__.rstrip('_')}"
    handler.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(id_name, inspect.Parameter.KEYWORD_ONLY, annotation=OwnerId),
            *(each.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[each.name]) for each in own),
        ],
        return_annotation=Json,
    )
    router.route(path, method, responses=responses)(declared(handler))


for _route in _ROUTES:
    _register(*_route)
