"""The dashboard's scoped routes: each operation written once, served for personal and for team memory.

An operation takes the ``Scope`` first, then its own parameters; ``scoped`` registers it twice on a router:
under ``/v1/memory/personal`` (the token's subject's memory) and under ``/v1/memory/workspaces/<workspace_id>``
(the workspace's, for a member), with the handler names, and so the operationIds, of the two copies each
operation used to have (``personal_<name>``, ``team_<name>``). Membership is settled before routing
(``functions/management/app.py``, 403 before any validation); the team resolver checks it once more, on
the id the resolver routed, so that the two can never disagree.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, Protocol, TypeVar, get_type_hints

from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.domain.scope import Scope
from agent_memory.edges.auth import Principal
from agent_memory.edges.requests import ID_PATTERN

PERSONAL = "/v1/memory/personal"
TEAM = "/v1/memory/workspaces/<workspace_id>"
WorkspaceId = Annotated[str, Path(pattern=ID_PATTERN)]
Operation = TypeVar("Operation", bound=Callable[..., Any])


class ScopeResolver(Protocol):
    """The memory a scoped route acts on, from the caller and the path's ``workspace_id`` (None: personal)."""

    def __call__(self, principal: Principal, workspace_id: str | None) -> Scope: ...


def personal(principal: Principal, workspace_id: str | None) -> Scope:
    """The caller's own memory (``workspace_id`` is always None on a personal route)."""
    return Scope("personal", principal.user_id)


def team(principal: Principal, workspace_id: str | None) -> Scope:
    if workspace_id is None:  # only a route under TEAM resolves with this
        raise ValueError("a team route without a workspace_id")
    principal.require_member(workspace_id)
    return Scope("team", workspace_id)


def principal_of(router: APIGatewayHttpRouter) -> Principal:
    """The caller, put in the resolver's context by the handler after authorization."""
    principal: Principal = router.context["principal"]
    return principal


def scoped(
    router: APIGatewayHttpRouter, method: str, path: str, responses: dict[int, Any]
) -> Callable[[Operation], Operation]:
    """Register ``operation(scope, **parameters)`` as ``<method> PERSONAL+path`` and ``<method> TEAM+path``."""

    def register(operation: Operation) -> Operation:
        hints = get_type_hints(operation, include_extras=True)  # the real types: Powertools reads them
        own = [
            parameter.replace(annotation=hints[parameter.name])
            for parameter in list(inspect.signature(operation).parameters.values())[1:]
        ]
        workspace = inspect.Parameter("workspace_id", inspect.Parameter.KEYWORD_ONLY, annotation=WorkspaceId)
        variants: list[tuple[str, str, ScopeResolver, list[inspect.Parameter]]] = [
            ("personal", PERSONAL, personal, []),
            ("team", TEAM, team, [workspace]),
        ]
        for kind, prefix, resolve, extra in variants:
            handler = _handler(router, operation, resolve)
            handler.__name__ = handler.__qualname__ = f"{kind}_{operation.__name__}"
            handler.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                [*extra, *(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY) for parameter in own)],
                return_annotation=hints.get("return", Any),
            )
            router.route(prefix + path, method, responses=responses)(handler)
        return operation

    return register


def _handler(router: APIGatewayHttpRouter, operation: Callable[..., Any], resolve: ScopeResolver) -> Callable[..., Any]:
    def handler(workspace_id: str | None = None, **parameters: Any) -> Any:
        return operation(resolve(principal_of(router), workspace_id), **parameters)

    return handler
