"""The dashboard's routes of people's control (docs/api.md §6): export, erase, injections, usage.

A router included by ManagementFunction's resolver (``functions/management/app.py``), which settles 401
and 403 from the token and the path before routing: membership for a workspace's routes, and the operator
claim for erasing a whole workspace. The personal routes always mean the token's subject.
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.edges.auth import Principal
from agent_memory.edges.http import answer
from agent_memory.edges.requests import ID_PATTERN
from agent_memory.edges.responses import documented
from agent_memory.errors import InvalidInput
from agent_memory.runtime import people
from agent_memory.scope import Scope
from agent_memory.shapes import Export, Injections, Receipt, Usage

router = APIGatewayHttpRouter()

WorkspaceId = Annotated[str, Path(pattern=ID_PATTERN)]
Cursor = Annotated[str | None, Query(min_length=1, max_length=2048)]
ThreadId = Annotated[str | None, Query(pattern=ID_PATTERN)]
Limit = Annotated[int, Query(ge=1, le=100)]
Author = Annotated[str, Query(pattern="^me$", description="Only `me`: the notes the caller authored.")]

_REFUSED = (401, 403, 422, 500, 503)
EXPORT = documented(200, Export, "One page of the export, oldest first.", *_REFUSED)
ERASE = documented(200, Receipt, "Erased (or finished an interrupted erase): the receipt.", *_REFUSED)
INJECTIONS = documented(200, Injections, "What `/v1/context` showed, newest first.", *_REFUSED)
USAGE = documented(200, Usage, "Usage against the quotas.", *_REFUSED)


def _principal() -> Principal:
    principal: Principal = router.context["principal"]
    return principal


def _personal() -> Scope:
    return Scope("personal", _principal().user_id)


def _team(workspace_id: str) -> Scope:
    _principal().require_member(workspace_id)
    return Scope("team", workspace_id)


def _injections(scope: Scope, thread_id: str | None, limit: int, cursor: str | None) -> Response[dict[str, Any]]:
    return answer(200, people().injections(scope, thread_id=thread_id, limit=limit, cursor=cursor))


@router.get("/v1/memory/personal/export", responses=EXPORT)
def personal_export(cursor: Cursor = None) -> Response[dict[str, Any]]:
    return answer(200, people().export(_personal(), cursor))


@router.get("/v1/memory/workspaces/<workspace_id>/export", responses=EXPORT)
def team_export(workspace_id: WorkspaceId, cursor: Cursor = None) -> Response[dict[str, Any]]:
    return answer(200, people().export(_team(workspace_id), cursor))


@router.delete("/v1/memory/personal", responses=ERASE)
def personal_erase() -> Response[dict[str, Any]]:
    return answer(200, people().erase(_personal()))


@router.delete("/v1/memory/workspaces/<workspace_id>", responses=ERASE)
def team_erase(workspace_id: WorkspaceId) -> Response[dict[str, Any]]:
    _principal().require_admin()  # checked before routing too
    return answer(200, people().erase(Scope("team", workspace_id)))


@router.delete("/v1/memory/workspaces/<workspace_id>/notes", responses=ERASE)
def team_erase_authored(workspace_id: WorkspaceId, author: Author) -> Response[dict[str, Any]]:
    if author != "me":
        raise InvalidInput("`author` must be `me`")
    return answer(200, people().erase_authored(_team(workspace_id), _principal().user_id))


@router.get("/v1/memory/personal/injections", responses=INJECTIONS)
def personal_injections(
    thread_id: ThreadId = None, limit: Limit = 20, cursor: Cursor = None
) -> Response[dict[str, Any]]:
    return _injections(_personal(), thread_id, limit, cursor)


@router.get("/v1/memory/workspaces/<workspace_id>/injections", responses=INJECTIONS)
def team_injections(
    workspace_id: WorkspaceId, thread_id: ThreadId = None, limit: Limit = 20, cursor: Cursor = None
) -> Response[dict[str, Any]]:
    return _injections(_team(workspace_id), thread_id, limit, cursor)


@router.get("/v1/memory/personal/usage", responses=USAGE)
def personal_usage() -> Response[dict[str, Any]]:
    return answer(200, people().usage(_personal()))


@router.get("/v1/memory/workspaces/<workspace_id>/usage", responses=USAGE)
def team_usage(workspace_id: WorkspaceId) -> Response[dict[str, Any]]:
    return answer(200, people().usage(_team(workspace_id)))
