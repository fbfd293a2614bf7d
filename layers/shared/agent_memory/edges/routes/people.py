"""The dashboard's routes of people's control (docs/api.md §6): what the agent sees, export, erase, injections,
usage.

A router included by ManagementFunction's resolver (``functions/management/app.py``), which settles 401
and 403 from the token and the path before routing: membership for a workspace's routes, and the operator
claim for erasing a whole workspace. The agent's view, export, injections and usage are written once for both scopes
(``scoped``); the erases differ by scope (a person's own memory; a workspace, by operators; a member's
own notes in a workspace), so each has its route.
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.basics.errors import InvalidInput
from agent_memory.bootstrap import services
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import ExportAnswer, InjectionsAnswer, MemoryContextAnswer, ReceiptAnswer, UsageAnswer
from agent_memory.edges.http import answer
from agent_memory.edges.requests.declared import reads
from agent_memory.edges.requests.reading import ID_PATTERN
from agent_memory.edges.responses import documented
from agent_memory.edges.routes.scoped import Scoped, WorkspaceId, principal_of, team

router = APIGatewayHttpRouter()
scoped = Scoped(router)

Cursor = Annotated[str | None, Query(min_length=1, max_length=2048)]
ThreadId = Annotated[str | None, Query(pattern=ID_PATTERN)]
Limit = Annotated[int, Query(ge=1, le=100)]
Author = Annotated[str, Query(pattern="^me$", description="Only `me`: the notes the caller authored.")]
Json = Response[dict[str, Any]]

_REFUSED = (401, 403, 422, 500, 503)
EXPORT = documented(200, ExportAnswer, "One page of the export, oldest first.", *_REFUSED)
ERASE = documented(200, ReceiptAnswer, "Erased (or finished an interrupted erase): the receipt.", *_REFUSED)
INJECTIONS = documented(200, InjectionsAnswer, "What `/v1/context` showed, newest first.", *_REFUSED)
USAGE = documented(200, UsageAnswer, "Usage against the quotas.", *_REFUSED)
SEES = documented(
    200, MemoryContextAnswer, "What `/v1/context` answers for a turn now; no turn is recorded.", *_REFUSED
)


@scoped.get("/v1/memory/personal/context", "/v1/memory/workspaces/<workspace_id>/context", SEES)
def agent_view(scope: Scope) -> Json:
    # The service's own block, so the dashboard shows the model's text byte for byte; a person looking is not a
    # turn, so no injection record is written.
    return answer(200, services().memory_service.context(scope))


@scoped.get("/v1/memory/personal/export", "/v1/memory/workspaces/<workspace_id>/export", EXPORT)
def export(scope: Scope, cursor: Cursor = None) -> Json:
    return answer(200, services().people.export(scope, cursor))


@scoped.get("/v1/memory/personal/injections", "/v1/memory/workspaces/<workspace_id>/injections", INJECTIONS)
def injections(scope: Scope, thread_id: ThreadId = None, limit: Limit = 20, cursor: Cursor = None) -> Json:
    return answer(200, services().people.injections(scope, thread_id=thread_id, limit=limit, cursor=cursor))


@scoped.get("/v1/memory/personal/usage", "/v1/memory/workspaces/<workspace_id>/usage", USAGE)
def usage(scope: Scope) -> Json:
    return answer(200, services().people.usage(scope))


@router.delete("/v1/memory/personal", responses=ERASE)
@reads(None)
def personal_erase() -> Json:
    return answer(200, services().people.erase(Scope("personal", principal_of(router).user_id)))


@router.delete("/v1/memory/workspaces/<workspace_id>", responses=ERASE)
@reads(None)
def team_erase(workspace_id: WorkspaceId) -> Json:
    principal_of(router).require_admin()  # checked before routing too; members or not
    return answer(200, services().people.erase(Scope("team", workspace_id)))


@router.delete("/v1/memory/workspaces/<workspace_id>/notes", responses=ERASE)
@reads(None)
def team_erase_authored(workspace_id: WorkspaceId, author: Author) -> Json:
    if author != "me":
        raise InvalidInput("`author` must be `me`")
    principal = principal_of(router)
    return answer(200, services().people.erase_authored(team(principal, workspace_id), principal.user_id))
