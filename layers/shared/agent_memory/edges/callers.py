"""Who may call what (docs/security.md "Callers"): every HTTP route of the API, each with the one class of caller
it serves, and the check of that class.

The resolver of every API function (``edges.http.make_resolver``) reads this table twice. When a route is
registered, a route the table does not name raises ``UnclassifiedRoute``: the function's module does not
import, so the function does not start. When a request comes, the class of the route it matches is checked
before anything of the route runs (its validation included): so a new route, a new function or a new router
cannot forget the check, and no route checks its callers its own way. ``template.yaml`` gives API Gateway the
same routes with their authorizers; ``tests/integration/test_callers.py`` walks both and sends every route
every kind of caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from agent_memory.basics.settings import get_settings
from agent_memory.edges.auth import Principal, principal_from_event, require_backend_caller


class Caller(StrEnum):
    """The classes of caller; a route serves exactly one."""

    BACKEND = "backend"  # the chat backend: SigV4 by its role (MEMORY_BACKEND_ROLE_ARN); never a dashboard token
    MEMBER = "member"  # a dashboard user: a valid token; on a workspace's path, a member of that workspace
    OPERATOR = "operator"  # a dashboard token with `memory_admin`, member of the workspace or not
    OPEN = "open"  # anyone: the health check


BACKEND, MEMBER, OPERATOR, OPEN = Caller.BACKEND, Caller.MEMBER, Caller.OPERATOR, Caller.OPEN

# Every route, as API Gateway names it (its route key in template.yaml), and the class of caller it serves.
ROUTES: Mapping[str, Caller] = MappingProxyType(
    {
        "GET /v1/health": OPEN,
        # The chat backend: the tools, the turn's context, and its own data flows by id (docs/api.md §3, §8).
        "GET /v1/tools": BACKEND,
        "POST /v1/tools/remember": BACKEND,
        "POST /v1/tools/update_memory": BACKEND,
        "POST /v1/tools/recall": BACKEND,
        "POST /v1/context": BACKEND,
        # Facts extracted from a stretch of conversation (docs/api.md §3 ``extract``).
        "POST /v1/extract": BACKEND,
        "GET /v1/platform/users/{user_id}/export": BACKEND,
        "DELETE /v1/platform/users/{user_id}": BACKEND,
        "GET /v1/platform/users/{user_id}/usage": BACKEND,
        "GET /v1/platform/workspaces/{workspace_id}/export": BACKEND,
        "DELETE /v1/platform/workspaces/{workspace_id}": BACKEND,
        "GET /v1/platform/workspaces/{workspace_id}/usage": BACKEND,
        # The chat backend's import of a platform's history or an export, with the notes' own dates (§9).
        "POST /v1/platform/users/{user_id}/import": BACKEND,
        "POST /v1/platform/workspaces/{workspace_id}/import": BACKEND,
        # A dashboard user's own memory (docs/api.md §5, §6).
        "GET /v1/memory/personal/document": MEMBER,
        "PUT /v1/memory/personal/document": MEMBER,
        "GET /v1/memory/personal/document/provenance": MEMBER,
        "GET /v1/memory/personal/document/versions": MEMBER,
        "GET /v1/memory/personal/document/versions/{version}": MEMBER,
        "POST /v1/memory/personal/document/versions/{version}/restore": MEMBER,
        "GET /v1/memory/personal/notes": MEMBER,
        "GET /v1/memory/personal/notes/search": MEMBER,
        "DELETE /v1/memory/personal/notes/{note_id}": MEMBER,
        "GET /v1/memory/personal/context": MEMBER,
        "GET /v1/memory/personal/export": MEMBER,
        "GET /v1/memory/personal/injections": MEMBER,
        "GET /v1/memory/personal/usage": MEMBER,
        "DELETE /v1/memory/personal": MEMBER,
        # A workspace's team memory, for its members.
        "GET /v1/memory/workspaces/{workspace_id}/document": MEMBER,
        "PUT /v1/memory/workspaces/{workspace_id}/document": MEMBER,
        "GET /v1/memory/workspaces/{workspace_id}/document/provenance": MEMBER,
        "GET /v1/memory/workspaces/{workspace_id}/document/versions": MEMBER,
        "GET /v1/memory/workspaces/{workspace_id}/document/versions/{version}": MEMBER,
        "POST /v1/memory/workspaces/{workspace_id}/document/versions/{version}/restore": MEMBER,
        "GET /v1/memory/workspaces/{workspace_id}/notes": MEMBER,
        "GET /v1/memory/workspaces/{workspace_id}/notes/search": MEMBER,
        "DELETE /v1/memory/workspaces/{workspace_id}/notes/{note_id}": MEMBER,
        "GET /v1/memory/workspaces/{workspace_id}/context": MEMBER,
        "GET /v1/memory/workspaces/{workspace_id}/export": MEMBER,
        "GET /v1/memory/workspaces/{workspace_id}/injections": MEMBER,
        "GET /v1/memory/workspaces/{workspace_id}/usage": MEMBER,
        "DELETE /v1/memory/workspaces/{workspace_id}/notes": MEMBER,  # ?author=me: the member's own notes
        # Operators: a whole workspace's erase, and the consolidation runs.
        "DELETE /v1/memory/workspaces/{workspace_id}": OPERATOR,
        "GET /v1/admin/consolidation/runs": OPERATOR,
        "POST /v1/admin/consolidation/runs": OPERATOR,
    }
)

_RULE_PARAMETER = re.compile(r"<(\w+)>")


class UnclassifiedRoute(LookupError):
    """A route registered on a resolver that ``ROUTES`` does not name: the function must not start."""


def route_key(method: str, rule: str) -> str:
    """A route as ``template.yaml`` names it (``GET /v1/memory/workspaces/{workspace_id}``), from its method and
    its rule as the resolver writes it (``<workspace_id>``)."""
    return method.upper() + " " + _RULE_PARAMETER.sub(r"{\1}", rule)


def caller_of(method: str, rule: str) -> Caller:
    """The class of a route, from its method and its rule as the resolver writes it (``<workspace_id>``)."""
    key = route_key(method, rule)
    try:
        return ROUTES[key]
    except KeyError:
        raise UnclassifiedRoute(
            f"{key} serves no class of caller: name it in agent_memory.edges.callers.ROUTES"
        ) from None


def admit(caller: Caller, event: dict[str, Any], path: Mapping[str, str]) -> Principal | None:
    """Check the request's caller against its route's class: Unauthorized (401) without the dashboard token a
    dashboard route needs, Forbidden (403) for a caller of another class. The dashboard's caller (its
    ``Principal``) is returned for the routes to read; ``path`` is the route's path parameters."""
    settings = get_settings()
    if caller is OPEN:
        return None
    if caller is BACKEND:
        require_backend_caller(event, settings.backend_role_arn)
        return None
    principal = principal_from_event(event, settings.local_jwt_secret)
    if caller is OPERATOR:
        principal.require_admin()
    elif "workspace_id" in path:
        principal.require_member(path["workspace_id"])
    return principal
